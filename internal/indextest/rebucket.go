package indextest

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// RebucketTimes are how often the handles of RebucketLive read the directory and how long each
// rebucket step waits: the fence must exceed the refresh plus the slowest write.
type RebucketTimes struct{ Refresh, Fence time.Duration }

// Rebuckets are the moves RebucketLive makes, in order: the main table, then one index table of
// each kind (non-unique with covered columns; unique).
var Rebuckets = []struct{ Index, To string }{
	{"", "hash:7"},
	{"by_seller", "hash:5:fields=1"},
	{"by_ext", "hash:3"},
}

// RebucketLive creates the order table under name on b, then moves the main table and one index table
// of each kind to new specs (Rebuckets) while writers, each a handle of its own client opened
// before, change a few overlapping rows, and scanners read every index. No answer may carry values
// other than its index key says; writes must go on through every rebucket; after each, every
// index answers what the main table says and verifies clean, by the handle that moved it and by
// one opened afresh. At the end DeleteTable leaves no table of name behind.
func RebucketLive(t *testing.T, b backends.Backend, name string, tm RebucketTimes, writers int) {
	ctx := context.Background()
	newClient := func() *client.Client {
		return client.New(b, client.WithConcurrency(4), client.WithRouteRefresh(tm.Refresh), client.WithLogger(slog.New(slog.DiscardHandler)))
	}
	c := newClient()
	defer c.Close()
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			_ = c.DeleteTable(context.Background(), name)
		}
	})
	rng := rand.New(rand.NewPCG(1, 1))
	for range 40 {
		_ = RandomWrite(ctx, tbl, rng, 12)
	}
	handles := make([]*client.Table, writers)
	for i := range handles {
		oc := newClient()
		defer oc.Close()
		if handles[i], err = oc.OpenTable(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}

	w := NewWorkload(Expected)
	for i, rb := range Rebuckets {
		stop := w.Run(t, tbl, handles, uint64(i))
		before := w.Acked()
		opts := client.RebucketOptions{Fence: tm.Fence, Grace: tm.Fence / 10, Workers: 2}
		phys := name
		if rb.Index == "" {
			err = tbl.Rebucket(ctx, testkit.Salter(t, rb.To), opts)
		} else {
			phys = client.IndexTableName(name, rb.Index)
			err = tbl.RebucketIndex(ctx, rb.Index, testkit.Salter(t, rb.To), opts)
		}
		if err != nil {
			t.Fatalf("rebucket %s: %v", phys, err)
		}
		st, err := c.RebucketStatus(ctx, phys)
		if err != nil {
			t.Fatal(err)
		}
		if st.Spec != rb.To || st.Table != phys+"_r1" || st.State != "" {
			t.Fatalf("after the rebucket of %s: %+v, want %s served by %s_r1", phys, st, rb.To, phys)
		}
		if w.Acked() == before {
			t.Fatalf("rebucket of %s: no write acknowledged while it ran", phys)
		}
		t.Logf("rebucket of %s to %s: %d writes acknowledged during it", phys, rb.To, w.Acked()-before)
		stop() // every index exact with the writers stopped: by this handle, and by one opened now
		AssertIndexes(t, tbl)
		fresh, err := newClient().OpenTable(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		AssertIndexes(t, fresh)
		w.Check(t, fresh)
	}
	t.Logf("%d writes acknowledged; refused or lost to contention: %v", w.Acked(), w.Errors())

	if reopened, err := c.OpenTable(ctx, name, nil); err != nil || len(reopened.Indexes()) != len(OrderIndexes(t)) {
		t.Fatalf("OpenTable of the rebucketed table with indexes: %v, %v; want its indexes", reopened, err)
	}
	plain, err := c.OpenTable(ctx, client.IndexTableName(name, "by_buyer"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Rebucket(ctx, testkit.Salter(t, "hash:2"), client.RebucketOptions{Fence: tm.Fence}); !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("Table.Rebucket of an index table: %v, want ErrInvalidArgument", err)
	}
	if err := c.DeleteTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	deleted = true
	names, err := c.Tables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if n == name || strings.HasPrefix(n, name+"_") {
			t.Errorf("table %s left after DeleteTable", n)
		}
	}
}
