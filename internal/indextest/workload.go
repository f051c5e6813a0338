package indextest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
)

// Workload is indexed writers for tests that move or break what is under them: random writes to a
// few shared rows (RandomWrite) and, by each writer, writes to rows only it writes, whose last
// acknowledged state it records, so that a lost write is seen even when later writes would have
// hidden it from the index checks; and a scanner per index checking every answer against its index
// key.
type Workload struct {
	// Timeout bounds each write (0: none): under server deaths, so that no write outlasts a
	// rebucket's fence.
	Timeout  time.Duration
	tolerate func(error) bool
	ok       atomic.Int64
	mu       sync.Mutex
	kinds    map[string]int    // errors tolerated, by kind
	owned    map[string]string // owned key -> the amount acknowledged last; "" deleted; "?" unknown
}

// NewWorkload returns a workload whose writes and scans may fail with the errors tolerate accepts
// (counted); any other fails the test.
func NewWorkload(tolerate func(error) bool) *Workload {
	return &Workload{tolerate: tolerate, kinds: map[string]int{}, owned: map[string]string{}}
}

// Expected accepts what writers racing each other meet: a unique key taken, lost contention, a
// retryable error.
func Expected(err error) bool {
	return errors.Is(err, client.ErrUniqueViolation) || errors.Is(err, client.ErrIndexContention) || client.IsRetryable(err)
}

// Acked is how many writes were acknowledged.
func (w *Workload) Acked() int64 { return w.ok.Load() }

// Errors are the errors tolerated, by kind.
func (w *Workload) Errors() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return maps.Clone(w.kinds)
}

func (w *Workload) count(err error) {
	w.mu.Lock()
	w.kinds[errKind(err)]++
	w.mu.Unlock()
}

// Run starts a writer per handle and a scanner per index of tbl; stop ends them and waits.
func (w *Workload) Run(t *testing.T, tbl *client.Table, handles []*client.Table, seed uint64) (stop func()) {
	ctx := context.Background()
	var (
		wg   sync.WaitGroup
		done atomic.Bool
	)
	for id, h := range handles {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(id)))
			for n := 0; !done.Load(); n++ {
				err := w.write(func(ctx context.Context) error { return RandomWrite(ctx, h, rng, 12) })
				if err == nil {
					err = w.write(func(ctx context.Context) error { return w.writeOwned(ctx, h, rng, id, n) })
				}
				switch {
				case err == nil:
					w.ok.Add(1)
				case w.tolerate(err):
					w.count(err)
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
						if !w.tolerate(err) {
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

func (w *Workload) write(f func(context.Context) error) error {
	ctx := context.Background()
	if w.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, w.Timeout)
		defer cancel()
	}
	return f(ctx)
}

// writeOwned puts or deletes one of writer id's own rows and records the outcome.
func (w *Workload) writeOwned(ctx context.Context, h *client.Table, rng *rand.Rand, id, n int) error {
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

// Check asserts that every owned row holds what its last acknowledged write left.
func (w *Workload) Check(t *testing.T, tbl *client.Table) {
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
	case client.IsRetryable(err):
		return "retryable"
	}
	return "other"
}
