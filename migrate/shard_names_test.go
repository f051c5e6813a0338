package migrate

import (
	"testing"

	"github.com/brine-kv/brine/compare"
)

// A shard's checkpoint name reads back as its shard, and no other table's name does.
func TestCheckpointShard(t *testing.T) {
	base := CheckpointTable("orders")
	for _, tc := range []struct {
		name string
		want compare.Shard
		ok   bool
	}{
		{"orders__copy", compare.Shard{}, true},
		{"orders__copy_shard0of1", compare.Shard{Index: 0, Count: 1}, true},
		{"orders__copy_shard12of16", compare.Shard{Index: 12, Count: 16}, true},
		{"orders__copy_shard3of3", compare.Shard{}, false},
		{"orders__copy_shard01of3", compare.Shard{}, false},
		{"orders__copy_shard1of3x", compare.Shard{}, false},
		{"orders__copy_shard-1of3", compare.Shard{}, false},
		{"orders__copy__copy", compare.Shard{}, false},
		{"orders", compare.Shard{}, false},
	} {
		got, ok := checkpointShard(base, tc.name)
		if got != tc.want || ok != tc.ok {
			t.Errorf("checkpointShard(%q) = %v, %t; want %v, %t", tc.name, got, ok, tc.want, tc.ok)
		}
		if ok && ShardCheckpoint(base, got) != tc.name {
			t.Errorf("ShardCheckpoint(%v) = %q, want %q", got, ShardCheckpoint(base, got), tc.name)
		}
	}
}
