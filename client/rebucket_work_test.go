package client_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
)

// workload runs writers, a scanner and a reader on a table while it is rebucketed, and keeps the
// reference of what the table must hold: each writer owns its keys, so its last successful operation
// on a key is the key's truth. Stable rows are never written: every scan and get must return them.
type workload struct {
	t       *testing.T
	stable  int
	cancel  context.CancelFunc // ends the readers
	stopped atomic.Bool        // ends the writers, each after its current write, which it records
	wg      sync.WaitGroup

	mu      sync.Mutex
	ref     map[string]map[string]string // key -> qualifier -> value
	scans   int
	writes  int
	maxScan time.Duration
}

const workFamily = client.DefaultFamily

func stableKey(i int) string { return fmt.Sprintf("s%05d", i) }

// preload writes the stable rows and the writers' initial rows.
func preload(t *testing.T, tbl *client.Table, stable, owned int) *workload {
	t.Helper()
	w := &workload{t: t, stable: stable, ref: map[string]map[string]string{}}
	var muts []client.Mutation
	for i := range stable {
		muts = append(muts, put(stableKey(i), "v", "stable"))
	}
	for i := range owned {
		k := fmt.Sprintf("w%05d", i)
		muts = append(muts, put(k, "v", "init"), put(k, "x", "init-x"))
		w.ref[k] = map[string]string{"v": "init", "x": "init-x"}
	}
	if rowErrs, err := tbl.Apply(context.Background(), muts); err != nil || rowErrs != nil {
		t.Fatalf("preload: %v %v", err, rowErrs)
	}
	for i := range stable {
		w.ref[stableKey(i)] = map[string]string{"v": "stable"}
	}
	return w
}

func put(key, q, v string) client.Mutation {
	return client.Mutation{Key: []byte(key), Cells: []client.Cell{{Family: workFamily, Qualifier: q, Value: []byte(v)}}}
}

// start runs one writer per table given (writer i owns the keys w%05d with index ≡ i mod writers,
// among owned+owned/2, so some rows are new) plus a scanner and a reader on the first table.
func (w *workload) start(seed uint64, owned int, writers []*client.Table) {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.t.Cleanup(func() { w.stopped.Store(true); cancel(); w.wg.Wait() }) // when the test fails early
	for i, tbl := range writers {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			w.write(context.Background(), tbl, rand.New(rand.NewPCG(seed, uint64(i))), i, len(writers), owned+owned/2)
		}()
	}
	w.wg.Add(2)
	go func() { defer w.wg.Done(); w.scan(ctx, writers[0]) }()
	go func() { defer w.wg.Done(); w.get(ctx, writers[0], rand.New(rand.NewPCG(seed, 99))) }()
}

func (w *workload) write(ctx context.Context, tbl *client.Table, rng *rand.Rand, id, n, keys int) {
	for iter := 0; !w.stopped.Load(); iter++ {
		k := fmt.Sprintf("w%05d", rng.IntN(keys/n)*n+id)
		val := fmt.Sprintf("w%d-%d", id, iter)
		var err error
		var apply func(map[string]string) map[string]string
		switch op := rng.IntN(10); {
		case op < 5:
			err = tbl.Put(ctx, []byte(k), client.Cell{Family: workFamily, Qualifier: "v", Value: []byte(val)})
			apply = func(m map[string]string) map[string]string { m["v"] = val; return m }
		case op < 7:
			err = tbl.Delete(ctx, []byte(k))
			apply = func(map[string]string) map[string]string { return nil }
		case op < 8:
			err = tbl.Delete(ctx, []byte(k), client.Column{Family: workFamily, Qualifier: "x"})
			apply = func(m map[string]string) map[string]string { delete(m, "x"); return m }
		default:
			var rowErrs []error
			rowErrs, err = tbl.Apply(ctx, []client.Mutation{put(k, "x", val)})
			if err == nil && rowErrs != nil {
				err = rowErrs[0]
			}
			apply = func(m map[string]string) map[string]string { m["x"] = val; return m }
		}
		if err != nil {
			w.t.Errorf("writer %d: %v", id, err)
			return
		}
		w.mu.Lock()
		m := w.ref[k]
		if m == nil {
			m = map[string]string{}
		}
		if m = apply(m); len(m) == 0 {
			delete(w.ref, k)
		} else {
			w.ref[k] = m
		}
		w.writes++
		w.mu.Unlock()
	}
}

// scan checks every full scan: keys strictly ascending (no duplicate), every stable row there.
func (w *workload) scan(ctx context.Context, tbl *client.Table) {
	for ctx.Err() == nil {
		began := time.Now()
		var prev string
		stable := 0
		for row, err := range tbl.Scan(ctx, client.Range{}) {
			if err != nil {
				if ctx.Err() == nil {
					w.t.Errorf("scan: %v", err)
				}
				return
			}
			k := string(row.Key)
			if k <= prev {
				w.t.Errorf("scan: key %q after %q", k, prev)
				return
			}
			prev = k
			for _, c := range row.Cells {
				if c.Family != workFamily {
					w.t.Errorf("scan: row %q shows cell %s:%s", k, c.Family, c.Qualifier)
					return
				}
			}
			if k[0] == 's' {
				stable++
			}
		}
		if ctx.Err() != nil {
			return
		}
		if stable != w.stable {
			w.t.Errorf("scan: %d stable rows, want %d", stable, w.stable)
			return
		}
		w.mu.Lock()
		w.scans++
		w.maxScan = max(w.maxScan, time.Since(began))
		w.mu.Unlock()
	}
}

func (w *workload) get(ctx context.Context, tbl *client.Table, rng *rand.Rand) {
	for ctx.Err() == nil {
		k := stableKey(rng.IntN(w.stable))
		row, err := tbl.Get(ctx, []byte(k))
		if ctx.Err() != nil {
			return
		}
		if err != nil || len(row.Cells) != 1 || string(row.Cells[0].Value) != "stable" {
			w.t.Errorf("get %s: %v %v", k, row.Cells, err)
			return
		}
	}
}

// stop ends the workload and checks that tbl holds exactly the reference.
func (w *workload) stop(tbl *client.Table) {
	w.t.Helper()
	w.stopped.Store(true)
	w.cancel()
	w.wg.Wait()
	got := map[string]map[string]string{}
	for row, err := range tbl.Scan(context.Background(), client.Range{}) {
		if err != nil {
			w.t.Fatalf("final scan: %v", err)
		}
		m := map[string]string{}
		for _, c := range row.Cells {
			m[c.Qualifier] = string(c.Value)
		}
		got[string(row.Key)] = m
	}
	w.compare(got)
	w.t.Logf("%d writes and %d full scans during the rebucket (longest scan %v)", w.writes, w.scans, w.maxScan)
}

func (w *workload) compare(got map[string]map[string]string) {
	w.t.Helper()
	bad := 0
	for k, want := range w.ref {
		if fmt.Sprint(got[k]) != fmt.Sprint(want) && bad < 10 {
			bad++
			w.t.Errorf("row %s = %v, want %v", k, got[k], want)
		}
	}
	for k, g := range got {
		if _, ok := w.ref[k]; !ok && bad < 10 {
			bad++
			w.t.Errorf("row %s = %v, want no row", k, g)
		}
	}
}
