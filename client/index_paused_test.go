package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestIndexQueryDuringDeadPause: a rebucket of an index table whose process stopped in its pause
// step (here: its context ended there) holds that table's writes until it is resumed. A query by the
// index that meets an entry left pending (its writer's settle failed) answers from the main row and
// skips the repair, instead of waiting for the pause to end.
func TestIndexQueryDuringDeadPause(t *testing.T) {
	ctx := context.Background()
	ixTable := client.IndexTableName("orders", "by_seller")
	f := faulty.New(memory.New(), faulty.Config{Rules: []faulty.Rule{
		// The first conditional write on the index table is the Put's settle: it fails, the entry
		// stays pending.
		{Fault: faulty.Error, Ops: faulty.OpAtomic, Table: ixTable, Prob: 1, Max: 1},
	}})
	c := client.New(f, client.WithRouteRefresh(testRefresh))
	defer c.Close()
	it, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: []client.IndexConfig{
		{Name: "by_seller", Parts: []client.IndexPart{client.ColumnPart("d", "seller")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Put(ctx, []byte("o1"), client.Cell{Family: "d", Qualifier: "seller", Value: []byte("s1")}); err != nil {
		t.Fatal(err)
	}

	// The rebucket stops in its pause step, as a killed process would leave it.
	rctx, stop := context.WithCancel(ctx)
	err = it.RebucketIndex(rctx, "by_seller", testkit.Salter(t, "hash:8"), client.RebucketOptions{Fence: testFence,
		Progress: func(p client.RebucketProgress) {
			if p.State == "pause" {
				stop()
			}
		}})
	if err == nil {
		t.Fatal("the rebucket finished; want it stopped in its pause step")
	}
	if st, err := c.RebucketStatus(ctx, ixTable); err != nil || st.State != "pause" {
		t.Fatalf("rebucket status %+v, %v; want pause", st, err)
	}
	time.Sleep(3 * testRefresh) // the handle's view of the index table's directory row: pause

	qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	p, err := indextest.Index(t, it, "by_seller").Prefix([]byte("s1"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for r, err := range indextest.Index(t, it, "by_seller").Scan(qctx, client.PrefixRange(p)) {
		if err != nil {
			t.Fatalf("query during the stopped rebucket: %v", err)
		}
		got = append(got, string(r.Key))
	}
	if qctx.Err() != nil {
		t.Fatal("the query waited for the rebucket's pause until its context ended")
	}
	if len(got) != 1 || got[0] != "o1" {
		t.Fatalf("seller s1's orders = %q, want [o1]", got)
	}
}
