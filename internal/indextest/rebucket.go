package indextest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
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
	tbl, err := c.CreateIndexedTable(ctx, name, client.TableConfig{Salter: spec(t, "hash:4"), Indexes: OrderIndexes(t)})
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
	handles := make([]*client.IndexedTable, writers)
	for i := range handles {
		oc := newClient()
		defer oc.Close()
		if handles[i], err = oc.OpenIndexedTable(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}

	w := &workload{kinds: map[string]int{}, owned: map[string]string{}}
	for i, rb := range Rebuckets {
		stop := w.run(t, tbl, handles, uint64(i))
		before := w.ok.Load()
		opts := client.RebucketOptions{Fence: tm.Fence, Grace: tm.Fence / 10, Workers: 2}
		phys := name
		if rb.Index == "" {
			err = tbl.Rebucket(ctx, spec(t, rb.To), opts)
		} else {
			phys = client.IndexTableName(name, rb.Index)
			err = tbl.RebucketIndex(ctx, rb.Index, spec(t, rb.To), opts)
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
		if w.ok.Load() == before {
			t.Fatalf("rebucket of %s: no write acknowledged while it ran", phys)
		}
		t.Logf("rebucket of %s to %s: %d writes acknowledged during it", phys, rb.To, w.ok.Load()-before)
		stop() // every index exact with the writers stopped: by this handle, and by one opened now
		AssertIndexes(t, tbl)
		fresh, err := newClient().OpenIndexedTable(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		AssertIndexes(t, fresh)
		w.check(t, fresh)
	}
	t.Logf("%d writes acknowledged; refused or lost to contention: %v", w.ok.Load(), w.kinds)

	plain, err := c.OpenTable(ctx, client.IndexTableName(name, "by_buyer"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Rebucket(ctx, spec(t, "hash:2"), client.RebucketOptions{Fence: tm.Fence}); !errors.Is(err, client.ErrIndexedTable) {
		t.Fatalf("Table.Rebucket of an index table: %v, want ErrIndexedTable", err)
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

// workload is RebucketLive's writers: random writes to a few shared rows (RandomWrite) and, by each
// writer, writes to rows only it writes, whose last acknowledged state it records, so that a write
// lost in a rebucket is seen even when later writes would have hidden it from the index checks.
type workload struct {
	ok    atomic.Int64
	mu    sync.Mutex
	kinds map[string]int    // refusals and lost contention, by kind
	owned map[string]string // owned key -> the amount acknowledged last; "" deleted; "?" unknown
}

// run starts a writer per handle and a scanner per index checking each answer against its index
// key; stop ends them and waits. A write error other than a refusal or lost contention fails the
// test.
func (w *workload) run(t *testing.T, tbl *client.IndexedTable, handles []*client.IndexedTable, seed uint64) (stop func()) {
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		done atomic.Bool
	)
	for id, h := range handles {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(id)))
			for n := 0; !done.Load(); n++ {
				err := RandomWrite(ctx, h, rng, 12)
				if err == nil {
					err = w.writeOwned(ctx, h, rng, id, n)
				}
				switch {
				case err == nil:
					w.ok.Add(1)
				case errors.Is(err, client.ErrUniqueViolation), errors.Is(err, client.ErrIndexContention), backends.IsRetryable(err):
					w.mu.Lock()
					w.kinds[errKind(err)]++
					w.mu.Unlock()
				default:
					t.Errorf("writer %d: %v", id, err)
					return
				}
			}
		})
	}
	for _, ix := range tbl.Indexes() {
		wg.Go(func() {
			for !done.Load() {
				for ir, err := range ix.Scan(ctx, client.Range{}) {
					if err != nil {
						if !backends.IsRetryable(err) {
							t.Errorf("index %s scan: %v", ix.Name(), err)
						}
						break
					}
					k, found, err := ix.EntryKey(ir.Key, ir.Cells)
					if err != nil || !found || !bytes.Equal(k, ir.IndexKey) {
						t.Errorf("index %s: row %q found under %q has key %q (%v)", ix.Name(), ir.Key, ir.IndexKey, k, err)
					}
				}
			}
		})
	}
	stop = sync.OnceFunc(func() { done.Store(true); wg.Wait() })
	t.Cleanup(stop) // a failed test stops them before it ends
	return stop
}

// writeOwned puts or deletes one of writer id's own rows and records the outcome.
func (w *workload) writeOwned(ctx context.Context, h *client.IndexedTable, rng *rand.Rand, id, n int) error {
	key := fmt.Sprintf("own%d_%d", id, rng.IntN(6))
	amount, err := "", error(nil)
	if rng.IntN(6) == 0 {
		err = h.Delete(ctx, OrderKey(key))
	} else {
		amount = fmt.Sprint(n)
		err = h.Put(ctx, OrderKey(key),
			client.Cell{Family: "d", Qualifier: "seller", Value: []byte(fmt.Sprint("host", n%3))},
			client.Cell{Family: "d", Qualifier: "ts", Value: TS(uint64(n))},
			client.Cell{Family: "d", Qualifier: "amount", Value: []byte(amount)})
	}
	if err != nil {
		amount = "?" // it may or may not have landed
	}
	w.mu.Lock()
	w.owned[key] = amount
	w.mu.Unlock()
	return err
}

// check asserts that every owned row holds what its last acknowledged write left.
func (w *workload) check(t *testing.T, tbl *client.IndexedTable) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, want := range w.owned {
		row, err := tbl.Get(context.Background(), OrderKey(key))
		got, _ := newestValue(row.Cells, "amount")
		switch {
		case want == "?":
		case want == "" && !errors.Is(err, client.ErrNotFound):
			t.Errorf("row %s: deleted, read %q (%v)", key, got, err)
		case want != "" && (err != nil || got != want):
			t.Errorf("row %s: amount %q acknowledged, read %q (%v)", key, want, got, err)
		}
	}
}

func newestValue(cells []client.Cell, qualifier string) (string, bool) {
	for _, c := range cells {
		if c.Qualifier == qualifier {
			return string(c.Value), true
		}
	}
	return "", false
}

func errKind(err error) string {
	switch {
	case errors.Is(err, client.ErrUniqueViolation):
		return "unique"
	case errors.Is(err, client.ErrIndexContention):
		return "contention"
	}
	return "retryable"
}
