//go:build integration

package integration

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// rebucketRows is how many rows the HBase rebucket test moves: 10k by default (two rebuckets in about
// 20 s: each copied row is a CheckAndMutate), $BRINE_REBUCKET_ROWS (e.g. 200000) for the full run.
func rebucketRows(t *testing.T) int {
	n := 10_000
	if s := os.Getenv("BRINE_REBUCKET_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1000 {
			t.Fatalf("BRINE_REBUCKET_ROWS=%q: want a number of rows >= 1000", s)
		}
	}
	return n
}

// TestHBaseRebucketLive moves a table from 8 to 32 buckets and back to 8 on the real HBase while
// writers, a scanner and a reader run; the second rebucket is killed once half its buckets are
// copied and resumed by a new client. After each, the table equals the reference: 0 rows lost, 0
// duplicated, every writer's last value there.
func TestHBaseRebucketLive(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 10*time.Minute)
	n := rebucketRows(t)
	const refresh, fence = 200 * time.Millisecond, time.Second
	c := client.New(e.backend, client.WithRouteRefresh(refresh), client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
	name := hbasetest.Table("brine_rebucket")
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, p := range []string{name, name + "_r1", name + "_r2"} { // whichever are left
			_ = e.backend.DeleteTable(cctx, p)
		}
		_, _ = e.backend.Apply(cctx, client.DirTable, []backends.Mutation{{Key: []byte(name), Delete: true}})
	})
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
	if err != nil {
		t.Fatal(err)
	}

	ref := &hbaseRef{rows: map[string]string{}}
	began := time.Now()
	muts := make([]client.Mutation, 0, 1000)
	for i := range n {
		k, v := fmt.Sprintf("row%07d", i), "init"
		muts = append(muts, client.Mutation{Key: []byte(k), Cells: []client.Cell{{Family: fam, Qualifier: "v", Value: []byte(v)}}})
		ref.rows[k] = v
		if len(muts) == cap(muts) || i == n-1 {
			if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
				t.Fatalf("load: %v %v", err, rowErrs)
			}
			muts = muts[:0]
		}
	}
	load := time.Since(began)
	t.Logf("loaded %d rows in %v (%.0f rows/s through Table.Apply)", n, load.Round(time.Millisecond), float64(n)/load.Seconds())

	// Writers own the keys row%07d ≡ id mod 2 among the first n/10 (and as many new ones past n).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes, scans atomic.Int64
	for id := range 2 {
		h, err := client.New(e.backend, client.WithRouteRefresh(refresh)).OpenTable(ctx, name, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(id), 13))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("row%07d", (rng.IntN(n/10)*2+id)%(n+n/10))
				if rng.IntN(4) == 0 {
					k = fmt.Sprintf("row%07d", n+rng.IntN(n/20)*2+id)
				}
				v := fmt.Sprintf("w%d-%d", id, i)
				if rng.IntN(3) == 0 {
					if err := h.Delete(ctx, []byte(k)); err != nil {
						t.Errorf("writer %d: %v", id, err)
						return
					}
					ref.set(k, "")
				} else {
					if err := h.Put(ctx, []byte(k), client.Cell{Family: fam, Qualifier: "v", Value: []byte(v)}); err != nil {
						t.Errorf("writer %d: %v", id, err)
						return
					}
					ref.set(k, v)
				}
				writes.Add(1)
			}
		}()
	}
	// The scanner checks order, and that the rows no writer touches (index n/5 to n) are all there.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			stable, prev := 0, ""
			for row, err := range tbl.Scan(ctx, client.Range{Start: []byte(fmt.Sprintf("row%07d", n/5)), End: []byte(fmt.Sprintf("row%07d", n))}) {
				if err != nil {
					t.Errorf("scan: %v", err)
					return
				}
				if string(row.Key) <= prev {
					t.Errorf("scan: %q after %q", row.Key, prev)
					return
				}
				prev = string(row.Key)
				stable++
			}
			if want := n - n/5; stable != want {
				t.Errorf("scan: %d untouched rows, want %d", stable, want)
				return
			}
			scans.Add(1)
		}
	}()

	rebucket := func(to string, killAtHalf bool) {
		s := testkit.Salter(t, to)
		began := time.Now()
		var copied int64
		rctx, kill := context.WithCancel(ctx)
		defer kill()
		opts := client.RebucketOptions{Fence: fence, Grace: fence, Progress: func(p client.RebucketProgress) {
			copied = max(copied, p.RowsCopied)
			if killAtHalf && p.State == "migrate" && p.BucketsDone >= p.Buckets/2 {
				kill()
			}
		}}
		err = tbl.Rebucket(rctx, s, opts)
		if killAtHalf {
			if err == nil {
				t.Fatal("the rebucket was not killed")
			}
			st, serr := c.RebucketStatus(ctx, name)
			t.Logf("killed in step %q with %d/%d buckets copied: %v", st.State, st.BucketsDone, st.Buckets, serr)
			// A new process resumes it.
			fresh, oerr := client.New(e.backend, client.WithRouteRefresh(refresh)).OpenTable(ctx, name, nil)
			if oerr != nil {
				t.Fatal(oerr)
			}
			opts.Progress = func(p client.RebucketProgress) { copied = max(copied, p.RowsCopied) }
			err = fresh.Rebucket(ctx, s, opts)
		}
		if err != nil {
			t.Fatalf("rebucket to %s: %v", to, err)
		}
		d := time.Since(began)
		t.Logf("rebucket to %s: %v, %d rows copied by the last run (%.0f rows/s over the whole rebucket, 4 fences of %v included)",
			to, d.Round(time.Millisecond), copied, float64(n)/d.Seconds(), fence)
	}
	rebucket("hash:32", false)
	rebucket("hash:8", true)
	close(stop)
	wg.Wait()
	t.Logf("%d writes and %d scans of %d rows during the rebuckets", writes.Load(), scans.Load(), n-n/5)

	got := map[string]string{}
	for row, err := range tbl.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := got[string(row.Key)]; dup {
			t.Fatalf("row %q twice", row.Key)
		}
		got[string(row.Key)] = string(row.Cells[0].Value)
	}
	lost, extra, wrong := 0, 0, 0
	for k, v := range ref.rows {
		switch g, ok := got[k]; {
		case !ok:
			lost++
		case g != v:
			wrong++
		}
	}
	for k := range got {
		if _, ok := ref.rows[k]; !ok {
			extra++
		}
	}
	t.Logf("final: %d rows, %d lost, %d extra, %d with a stale value", len(got), lost, extra, wrong)
	if lost+extra+wrong > 0 {
		t.Fail()
	}
	if st, err := c.RebucketStatus(ctx, name); err != nil || st.Spec != "hash:8" || st.Table != name+"_r2" {
		t.Errorf("directory after both: %+v, %v", st, err)
	}
}

type hbaseRef struct {
	mu   sync.Mutex
	rows map[string]string
}

func (r *hbaseRef) set(k, v string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v == "" {
		delete(r.rows, k)
	} else {
		r.rows[k] = v
	}
}
