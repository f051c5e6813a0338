//go:build integration

package reliability_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// TestHBaseSIGKILLIndexed: the SIGKILL rounds (sigkill_test.go) on the standalone HBase, an import,
// a rebucket of the main table and one of an index table, an exclusive import and an exclusive index
// build (resumed by a take-over), each killed once; the parent's queries by index run while the
// child works and dies.
func TestHBaseSIGKILLIndexed(t *testing.T) {
	zk := hbasetest.ZK(t)
	base := hbasetest.Table("brine_kill")
	const fence = time.Second
	runSIGKILL(t, killStore{
		store: func(int) string { return "hbase:" + zk },
		open: func(t *testing.T, _ int) *client.Client {
			b, err := openKillStore(context.Background(), "hbase:"+zk)
			if err != nil {
				t.Fatal(err)
			}
			c := killClient(b, fence)
			t.Cleanup(func() { _ = c.Close() })
			return c
		},
		table: func(round int) string { return fmt.Sprintf("%s_%d", base, round) },
		rows:  600,
		fence: fence,
	}, len(killOps), 2)
}
