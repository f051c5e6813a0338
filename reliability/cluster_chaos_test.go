//go:build integration

package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestClusterChaos is brine's IntegrationTestBigLinkedList-with-ChaosMonkey, on the 3-region-server
// cluster of scripts/hbase/cluster.sh: while a bulk import (>= 200k rows), concurrent salted Puts,
// Gets and fan-out scans (forward, reverse, limit, cursor pages) run, a chaos loop kills (SIGKILL)
// and restarts region servers, stops them gracefully, moves regions between servers, splits, merges
// adjacent regions (across bucket boundaries too), flushes, major-compacts and runs the balancer
// (cluster_monkey_test.go), and in every run freezes a region server for a few seconds, freezes one
// past its ZooKeeper session (declared dead, it aborts on waking and is started again) and restarts
// the master (cluster_pause_test.go). A raw gohbase writer runs beside it under the same kills: the control
// that shows the cluster itself keeps acknowledged writes. Then, through a new client:
//   - every row acknowledged as written is present with its exact value; a row in a failure report
//     (import) or whose Put failed is absent or exact, and re-importing the report makes the table exact;
//   - every scan that returned without error returned exactly the base rows (written before the
//     chaos and never touched) of its range, in strict order, no duplicates;
//   - every failed scan or get failed with a retryable error, never a wrong row;
//   - the raw-gohbase control lost no acknowledged row;
//   - no row the driver's CheckAndMutateBatch answered applied was lost (cluster_condbatch_test.go:
//     its rows are appended unsynced, and one barrier per call syncs them).
//
// It runs for $CHAOS (a Go duration; default 2m, `make chaos` gives 20m) and prints its figures.
func TestClusterChaos(t *testing.T) {
	cl := hbasetest.FindCluster(t)
	dur := 2 * time.Minute
	if s := os.Getenv("CHAOS"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			t.Fatalf("CHAOS=%q: want a positive duration such as 20m", s)
		}
		dur = d
	}
	ctx, cancel := context.WithTimeout(context.Background(), dur+10*time.Minute)
	defer cancel()
	sess, err := cl.Admin.Session()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	// Per-RPC timeouts hand a stuck region back to the caller's retries; RefreshAfter (default 10 s)
	// replaces a gohbase client stuck in reconnect backoff. The pinned gohbase's region clients can
	// outlive Close (a re-establishing goroutine that dials after it), so its two connection
	// goroutines are excused by name here and in TestMain; establishRegion is waited for.
	leakOptions = append(leakOptions, goleak.IgnoreAnyFunction(processRPCs))
	c, closeClient := openHBaseWith(t, cl.ZK, hbase.Options{RequestTimeout: 5 * time.Second}, 10*time.Second,
		goleak.IgnoreAnyFunction(receiveRPCs), goleak.IgnoreAnyFunction(processRPCs))
	defer closeClient()
	name := hbasetest.Table("brine_chaos")
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:12")})
	if err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	defer dropTable(t, c, name)
	ctl := newControl(t, cl.ZK)
	cw := newCondWriter(ctx, t, c.Backend().(*hbase.Backend))
	defer c.Backend().DeleteTable(context.Background(), cw.table)

	// The base rows: written before the chaos, never touched, the scans' reference.
	const nBase = 20000
	base := make([][]byte, nBase)
	for i := range base {
		base[i] = chaosKey("base", i)
	}
	if st, err := tbl.Import(ctx, chaosRows("base", 0, nBase, false), client.ImportOptions{Timestamp: time.UnixMilli(testTS)}); err != nil || st.Written != nBase {
		t.Fatalf("importing the base rows: %+v, %v", st, err)
	}

	var w chaosWork
	work, stopWork := context.WithCancel(ctx)
	var wg sync.WaitGroup
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	run(func() { w.importer(work, t, tbl) })
	for i := range 3 {
		run(func() { w.putter(work, t, tbl, i) })
	}
	for i := range 2 {
		run(func() { w.getter(work, t, tbl, base, int64(i)) })
		run(func() { w.scanner(work, t, tbl, base, int64(i)) })
	}
	run(func() { ctl.write(work) })
	run(func() { cw.write(work, t) })

	monkey := newMonkey(t, cl, sess, name, ctl.table, cw.table)
	monkey.run(ctx, dur)
	// The import goes on until it has written its minimum; everything else stops with the chaos.
	w.stopWhenImported(stopWork)
	wg.Wait()
	if err := monkey.heal(ctx); err != nil {
		t.Fatalf("bringing every region server back: %v", err)
	}
	if t.Failed() {
		return
	}

	// The control first, its client closed after: the goroutines its last reads start (connections
	// to regions the chaos moved) must not be counted against the verifying client opened next.
	ctlLost, ctlUnfenced, ctlAcked := ctl.verify(ctx, t, monkey.faults.inZombieWindow)
	hbasetest.WaitGoroutinesGone(t, hbasetest.EstablishRegion, time.Minute)
	ctl.client.Close()

	// Verify through a client that saw none of it.
	c2, closeC2 := openHBaseWith(t, cl.ZK, hbase.Options{RequestTimeout: 30 * time.Second}, 10*time.Second)
	defer closeC2()
	tbl2, err := c2.OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	lost, verified, err := w.verify(ctx, tbl2, base)
	if err != nil {
		t.Fatal(err)
	}
	condLost, err := cw.verify(ctx, c2.Backend().(*hbase.Backend))
	if err != nil {
		t.Fatal(err)
	}

	fmt.Printf("chaos: %v on %d region servers\n", dur, cl.RegionServers())
	monkey.print()
	fmt.Printf("rows imported: %d (%d in failure reports, re-imported)\n", w.imported.Load(), len(w.report.rows))
	fmt.Printf("rows put: %d acknowledged, %d failed\n", w.putAcked.Load(), w.putFailed.Load())
	fmt.Printf("gets: %d ok, %d failed retryably\n", w.gets.Load(), w.getErrs.Load())
	fmt.Printf("scans checked: %d (%d failed retryably)\n", w.scans.Load(), w.scanErrs.Load())
	fmt.Printf("longest request wait: %v\n", time.Duration(w.longest.Load()).Round(time.Millisecond))
	fmt.Printf("client refreshes: %d\n", c.Backend().(*hbase.Backend).Refreshes())
	fmt.Printf("rows verified: %d\n", verified)
	fmt.Printf("rows lost: %d\n", lost)
	fmt.Printf("control (raw gohbase) rows acknowledged: %d\n", ctlAcked)
	fmt.Printf("control (raw gohbase) rows lost: %d (%d acknowledged in an unfenced window)\n", ctlLost, ctlUnfenced)
	fmt.Printf("conditional batch rows: %d acknowledged, %d failed, %d lost\n", len(cw.acked), cw.failed, condLost)
	if lost != 0 {
		slices.Sort(w.lost)
		t.Logf("rows lost (the first 20): %q", w.lost[:min(20, len(w.lost))])
	}
	// brine loses nothing. The control may lose only what a server woken from a pause past its
	// session acknowledged before it aborted (its unfenced window): HBase on a local file system has
	// no lease to fence it (docs/reliability.md); every other loss fails.
	if lost != 0 || ctlLost != ctlUnfenced || condLost != 0 {
		t.Fatalf("rows lost: brine %d, raw gohbase control %d (%d of them outside an unfenced window), conditional batches %d",
			lost, ctlLost, ctlLost-ctlUnfenced, condLost)
	}
}

func chaosKey(kind string, i int) []byte { return fmt.Appendf(nil, "%s%08d", kind, i) }

func chaosRow(key []byte) client.Mutation {
	return client.Mutation{Key: key, Cells: []client.Cell{{Family: "d", Qualifier: "q", Value: value(key), Timestamp: testTS}}}
}

// chaosRows yields rows kind[from, to) as import input, Source = index; with pace, at most about
// chaosRate rows a second, so that the import spans the whole chaos run instead of racing through
// its minimum (and the verification's scan stays small).
func chaosRows(kind string, from, to int, pace bool) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		began := time.Now()
		for i := from; i < to; i++ {
			if pace && (i-from)%500 == 0 {
				time.Sleep(time.Until(began.Add(time.Duration(i-from) * time.Second / chaosRate)))
			}
			if !yield(client.ImportRow{Source: i, Mutation: chaosRow(chaosKey(kind, i))}, nil) {
				return
			}
		}
	}
}

// chaosWork is what the workloads did, for the verification.
type chaosWork struct {
	imported  atomic.Int64 // rows read by the imports: imp[0, imported)
	minDone   atomic.Bool  // the imports have read chaosMinImport rows
	report    failedRows
	mu        sync.Mutex
	putAcked  atomic.Int64
	putFailed atomic.Int64
	puts      map[string]bool // key -> acknowledged (false: its Put failed: absent or exact)
	gets      atomic.Int64
	getErrs   atomic.Int64
	scans     atomic.Int64
	scanErrs  atomic.Int64
	longest   atomic.Int64 // nanoseconds: the longest successful Get or Put
	lost      []string     // by verify: the keys of the rows lost
}

const (
	chaosMinImport = 200_000
	chaosRound     = 50_000
	chaosRate      = 4_000 // rows per second, at most
)

// importer imports rounds of chaosRound rows until ctx ends, and at least chaosMinImport rows.
func (w *chaosWork) importer(ctx context.Context, t *testing.T, tbl *client.Table) {
	defer w.minDone.Store(true)
	for from := 0; ; from += chaosRound {
		if from >= chaosMinImport {
			w.minDone.Store(true)
			if ctx.Err() != nil {
				return
			}
		}
		// Its own context: the import is not cut short by the end of the chaos before its minimum.
		st, err := tbl.Import(context.WithoutCancel(ctx), chaosRows("imp", from, from+chaosRound, true),
			client.ImportOptions{Timestamp: time.UnixMilli(testTS), OnFailure: w.report.add, MaxAttempts: 4, MaxBackoff: time.Second})
		w.imported.Add(st.Read)
		if err != nil && !errors.Is(err, client.ErrRowsFailed) {
			t.Errorf("import round at %d: %v", from, err)
			return
		}
	}
}

// stopWhenImported stops the workloads once the imports have read their minimum.
func (w *chaosWork) stopWhenImported(stop context.CancelFunc) {
	for !w.minDone.Load() {
		time.Sleep(100 * time.Millisecond)
	}
	stop()
}

func (w *chaosWork) took(d time.Duration) {
	for {
		old := w.longest.Load()
		if int64(d) <= old || w.longest.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// putter writes rows put<id>-<seq> one at a time.
func (w *chaosWork) putter(ctx context.Context, t *testing.T, tbl *client.Table, id int) {
	for seq := 0; ctx.Err() == nil; seq++ {
		k := fmt.Appendf(nil, "put%d-%08d", id, seq)
		began := time.Now()
		pctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := tbl.Put(pctx, k, chaosRow(k).Cells...)
		cancel()
		if ctx.Err() != nil && err != nil {
			err = nil // cut by the end of the chaos: counted as failed below, not judged
		}
		w.mu.Lock()
		if w.puts == nil {
			w.puts = map[string]bool{}
		}
		w.puts[string(k)] = err == nil && ctx.Err() == nil
		w.mu.Unlock()
		switch {
		case err == nil && ctx.Err() == nil:
			w.putAcked.Add(1)
			w.took(time.Since(began))
		case err == nil:
			w.putFailed.Add(1)
		case !client.IsRetryable(err):
			t.Errorf("Put(%s) failed with a non-retryable error: %v", k, err)
			return
		default:
			w.putFailed.Add(1)
		}
	}
}

// getter reads random base rows: each read is the exact row, or fails retryably.
func (w *chaosWork) getter(ctx context.Context, t *testing.T, tbl *client.Table, base [][]byte, seed int64) {
	rnd := rand.New(rand.NewPCG(uint64(seed), 1))
	for ctx.Err() == nil {
		k := base[rnd.IntN(len(base))]
		began := time.Now()
		gctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		row, err := tbl.Get(gctx, k)
		cancel()
		switch {
		case err == nil:
			if !bytes.Equal(row.Key, k) || len(row.Cells) != 1 || !bytes.Equal(row.Cells[0].Value, value(k)) {
				t.Errorf("Get(%s) returned a wrong row: %+v", k, row)
				return
			}
			w.gets.Add(1)
			w.took(time.Since(began))
		case ctx.Err() != nil:
			return
		case !client.IsRetryable(err):
			t.Errorf("Get(%s) failed with a non-retryable error: %v", k, err)
			return
		default:
			w.getErrs.Add(1)
		}
	}
}

// scanner runs fan-out scans over random ranges of the base rows: forward, reverse, limited, and
// paged with cursors. A scan that ends without error must return exactly the base rows of its range.
func (w *chaosWork) scanner(ctx context.Context, t *testing.T, tbl *client.Table, base [][]byte, seed int64) {
	rnd := rand.New(rand.NewPCG(uint64(seed), 2))
	for ctx.Err() == nil {
		lo := rnd.IntN(len(base))
		hi := min(len(base), lo+1+rnd.IntN(4000))
		want := base[lo:hi]
		r := client.RowRange(base[lo], chaosKey("base", hi))
		var got [][]byte
		var err error
		switch kind := rnd.IntN(4); kind {
		case 0: // forward
			got, err = scanKeysOf(tbl.Scan(ctx, r))
		case 1: // reverse
			got, err = scanKeysOf(tbl.Scan(ctx, r, client.Reverse()))
			slices.Reverse(got)
		case 2: // limit
			n := 1 + rnd.IntN(200)
			want = want[:min(n, len(want))]
			got, err = scanKeysOf(tbl.Scan(ctx, r, client.Limit(n)))
		case 3: // cursor pages
			var cursor []byte
			for {
				opts := []client.ReadOption{client.Limit(500)}
				if cursor != nil {
					opts = append(opts, client.ResumeAfter(cursor))
				}
				page, perr := scanKeysOf(tbl.Scan(ctx, r, opts...))
				got, err = append(got, page...), perr
				if perr != nil || len(page) < 500 {
					break
				}
				cursor = page[len(page)-1]
			}
		}
		switch {
		case err == nil:
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Errorf("scan of [%s, %s): %d rows, want %d (first difference at %d)", base[lo], chaosKey("base", hi), len(got), len(want), testkit.FirstDiffFunc(got, want, bytes.Equal))
				return
			}
			w.scans.Add(1)
		case ctx.Err() != nil:
			return
		case !client.IsRetryable(err):
			t.Errorf("scan of [%s, %s) failed with a non-retryable error: %v", base[lo], chaosKey("base", hi), err)
			return
		default:
			w.scanErrs.Add(1)
		}
	}
}

// scanKeysOf collects the keys of a scan, checking each row's value and the strict order.
func scanKeysOf(rows iter.Seq2[client.Row, error]) ([][]byte, error) {
	var keys [][]byte
	for row, err := range rows {
		if err != nil {
			return keys, err
		}
		if len(row.Cells) != 1 || !bytes.Equal(row.Cells[0].Value, value(row.Key)) {
			return keys, fmt.Errorf("row %q has wrong cells %+v", row.Key, row.Cells)
		}
		keys = append(keys, row.Key)
	}
	return keys, nil
}

// verify checks the table against what the workloads did, re-imports the failure report, and checks
// the table is then exact. It returns the rows lost (acknowledged but absent or wrong) and verified.
func (w *chaosWork) verify(ctx context.Context, tbl *client.Table, base [][]byte) (lost, verified int, err error) {
	reported := map[string]bool{}
	for _, fr := range w.report.rows {
		reported[string(fr.Row.Key)] = true
	}
	var stored map[string]bool
	err = untilServed(ctx, "scanning the table after the chaos", func() error {
		stored = map[string]bool{}
		for row, err := range tbl.Scan(ctx, client.Range{}) {
			if err != nil {
				return err
			}
			if len(row.Cells) != 1 || !bytes.Equal(row.Cells[0].Value, value(row.Key)) {
				return fmt.Errorf("row %q has wrong cells %+v", row.Key, row.Cells)
			}
			if stored[string(row.Key)] {
				return fmt.Errorf("row %q scanned twice", row.Key)
			}
			stored[string(row.Key)] = true
		}
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	for _, k := range base {
		verified++
		if !stored[string(k)] {
			lost++
			w.lost = append(w.lost, string(k))
		}
	}
	n := int(w.imported.Load())
	for i := range n {
		k := chaosKey("imp", i)
		if !reported[string(k)] {
			verified++
			if !stored[string(k)] {
				lost++
				w.lost = append(w.lost, string(k))
			}
		}
	}
	w.mu.Lock()
	for k, acked := range w.puts {
		if acked {
			verified++
			if !stored[k] {
				lost++
				w.lost = append(w.lost, k)
			}
		}
	}
	expected := len(base) + n
	for k := range stored {
		if _, isPut := w.puts[k]; isPut {
			expected++
		}
	}
	w.mu.Unlock()
	if len(stored) > expected {
		return lost, verified, fmt.Errorf("%d rows stored, at most %d were ever written", len(stored), expected)
	}
	// Re-importing the report makes the import rows exact.
	st, err := tbl.Import(ctx, w.report.input(), client.ImportOptions{Timestamp: time.UnixMilli(testTS)})
	if err != nil || st.Written != int64(len(w.report.rows)) {
		return lost, verified, fmt.Errorf("re-importing the %d reported rows: %+v, %v", len(w.report.rows), st, err)
	}
	var imp [][]byte
	err = untilServed(ctx, "scanning the import rows after re-importing the report", func() (err error) {
		imp, err = scanKeysOf(tbl.Scan(ctx, client.PrefixRange([]byte("imp"))))
		return err
	})
	if err != nil {
		return lost, verified, err
	}
	if len(imp) != n {
		return lost, verified, fmt.Errorf("after re-importing the report: %d import rows, want %d", len(imp), n)
	}
	for i, k := range imp {
		if !bytes.Equal(k, chaosKey("imp", i)) {
			return lost, verified, fmt.Errorf("after re-importing the report: row %d is %q, want %q", i, k, chaosKey("imp", i))
		}
	}
	return lost, verified, nil
}

// untilServed runs a read of the verification until it succeeds or fails with a non-retryable error,
// for up to three minutes: the verification checks what the cluster kept, once it serves again (a
// region of a server killed in the chaos's last seconds may still be reopening); how soon it serves
// is measured elsewhere (TestHBaseRestartResume, the longest request wait). Any other error, a wrong
// or duplicated row among them, fails at once.
func untilServed(ctx context.Context, what string, read func() error) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := read()
		if err == nil || !client.IsRetryable(err) || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			return nil
		}
		time.Sleep(2 * time.Second)
	}
}
