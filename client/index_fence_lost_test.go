package client_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
)

// lostMetaReply applies the first meta rewrite that records a fence, then answers it as a store's
// retry after a lost reply does: the meta changed (by the write itself).
type lostMetaReply struct {
	*memory.Backend
	lost atomic.Bool
}

func (b *lostMetaReply) RewriteTableMeta(ctx context.Context, table string, old, next map[string]string) error {
	err := b.Backend.RewriteTableMeta(ctx, table, old, next)
	if err == nil && next["brine.fence"] != "" && old["brine.fence"] == "" && b.lost.CompareAndSwap(false, true) {
		return backends.ErrMetaChanged
	}
	return err
}

// TestExclusiveFenceReplyLost: the write recording the fence is applied but its reply lost, so the
// compare-and-set is tried again and meets the fence: its own, which Exclusive must take for taken
// (it failed with ErrFenced, naming its own holder).
func TestExclusiveFenceReplyLost(t *testing.T) {
	ctx := context.Background()
	b := &lostMetaReply{Backend: memory.New()}
	_, tbl := exclusiveOrders(t, b)
	x := exclusive(t, tbl, client.ExclusiveOptions{Holder: "me"})
	if !b.lost.Load() {
		t.Fatal("no fence write was answered as lost")
	}
	if _, err := x.Import(ctx, rowsOf([]client.ImportRow{orderRow("o1", "s1", "e1", 1)}), client.ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := x.Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitRefresh()
	indextest.AssertIndexes(t, tbl)
}
