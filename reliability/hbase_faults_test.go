//go:build integration

package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// Region changes on the real HBase of scripts/hbase/up.sh (BRINE_HBASE_ZK) while brine imports and
// scans: splits, moves, flushes and major compactions, driven through hbasetest.Admin (a JVM per
// operation, 2-3 s each). Nothing may be lost or duplicated: the table must equal the input exactly.

const hbaseSpec = "hash:8"

func init() {
	// gohbase logs every region it learns of at info level, through the default slog logger.
	slog.SetLogLoggerLevel(slog.LevelWarn)
	// The admin client of every hbase.Open keeps its master connection's reader for the life of the
	// process (gohbase's AdminClient.Close closes a nil channel: newAdminClient never makes it). A master connection has only that
	// goroutine; a data connection has a processRPCs goroutine beside it, which is not ignored, so
	// a leaked data connection still fails the run. Everything else an HBase test starts is
	// checked per test by openHBaseWith.
	leakOptions = append(leakOptions, goleak.IgnoreAnyFunction(receiveRPCs))
}

// openHBase opens a client on the cluster at zk; it is closed when the test ends.
func openHBase(t *testing.T, zk string) *client.Client {
	t.Helper()
	// A region that is moving or splitting is retried by gohbase until its ctx ends: bound each RPC
	// so that the caller's retries (import) or restarts (scan) take over.
	c, _ := openHBaseWith(t, zk, hbase.Options{RequestTimeout: 10 * time.Second}, 5*time.Second)
	return c
}

// openHBaseWith opens a client with opts (the logger is driverLog's). closeAndCheck closes it and
// checks that, within settle, every goroutine started since Open but those ignored has ended; it
// runs when the test ends, if not called before.
func openHBaseWith(t *testing.T, zk string, opts hbase.Options, settle time.Duration, ignore ...goleak.Option) (_ *client.Client, closeAndCheck func()) {
	t.Helper()
	opts.Logger = slog.New(&driverLog)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: zk, Options: opts})
	if err != nil {
		t.Fatalf("hbase.Open(%s): %v", zk, err)
	}
	c := client.New(b)
	// Open has connected the admin client (its goroutines outlive Close); whatever starts after this
	// point, the data client's region connections included, must be gone once the client is closed.
	running := goleak.IgnoreCurrent()
	var once sync.Once
	closeAndCheck = func() {
		once.Do(func() {
			// A region the test moved or split may still be being re-established by gohbase; its Close
			// does not stop that, and a connection dialled after Close is never closed. Let it finish
			// first, so that what is checked below is brine's own cleanup.
			hbasetest.WaitGoroutinesGone(t, hbasetest.EstablishRegion, time.Minute)
			c.Close()
			opts := append(ignore, running)
			deadline := time.Now().Add(settle)
			for {
				forgiven, err := hbasetest.FindLeaks(opts...) // itself retries for a second or two
				if forgiven > 0 {
					t.Logf("%d of gohbase's close-scanner goroutines left, their replies lost to the client's Close", forgiven)
				}
				if err == nil {
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("%v after Close, goroutines left: %s", settle, leakSummary(err))
					t.Logf("goleak: %v", err)
					return
				}
			}
		})
	}
	t.Cleanup(closeAndCheck)
	return c, closeAndCheck
}

// driverLog counts the HBase driver's log lines: how often scans reopened a scanner.
var driverLog countingHandler

// countingHandler is a slog.Handler that counts the driver's "reopening scanner" and "region
// boundaries changed" lines and drops everything.
type countingHandler struct{ reopened, staleRegions atomic.Int64 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *countingHandler) WithGroup(string) slog.Handler            { return h }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	switch {
	case strings.Contains(r.Message, "reopening scanner"):
		h.reopened.Add(1)
	case strings.Contains(r.Message, "region boundaries changed"):
		h.staleRegions.Add(1)
	}
	return nil
}

// newHBaseTable creates a uniquely named salted table through c, deleted when the test ends.
func newHBaseTable(t *testing.T, c *client.Client, prefix string) *client.Table {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	name := hbasetest.Table(prefix)
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, hbaseSpec)})
	if err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	testkit.DeleteAtEnd(t, name, c.DeleteTable)
	return tbl
}

func findAdmin(t *testing.T, zk string) *hbasetest.Admin {
	t.Helper()
	a, err := hbasetest.FindAdmin(zk)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// hbaseRow is input row i of the HBase tests.
func hbaseRow(i int) client.ImportRow {
	k := importKey(i)
	return client.ImportRow{Source: i, Mutation: client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "q", Value: value(k)}}}}
}

// pacedInput yields rows [from, to). It sleeps pause after every `every` rows, and before the last
// tenth waits for gate to close (nil: no gate), so that the faults surely fall inside the import.
func pacedInput(from, to, every int, pause time.Duration, gate <-chan struct{}) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		tail := to - (to-from)/10
		for i := from; i < to; i++ {
			if i == tail && gate != nil {
				<-gate
			}
			if every > 0 && (i-from)%every == every-1 {
				time.Sleep(pause)
			}
			if !yield(hbaseRow(i), nil) {
				return
			}
		}
	}
}

// failedRows collects an import's failure report.
type failedRows struct {
	mu   sync.Mutex
	rows []client.FailedRow
}

func (f *failedRows) add(fr client.FailedRow) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rows = append(f.rows, fr)
}

// input replays the reported rows, in input order, as an import input.
func (f *failedRows) input() iter.Seq2[client.ImportRow, error] {
	f.mu.Lock()
	rows := slices.Clone(f.rows)
	f.mu.Unlock()
	slices.SortFunc(rows, func(a, b client.FailedRow) int { return int(a.Index - b.Index) })
	return func(yield func(client.ImportRow, error) bool) {
		for _, fr := range rows {
			if !yield(fr.Row, nil) {
				return
			}
		}
	}
}

// checkStats is the import's accounting: every row read was written or reported, once. The input
// began at row from (hbaseRow(from + index)).
func checkStats(stats client.ImportStats, from, read int, rep *failedRows) error {
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if stats.Read != int64(read) || stats.Written+stats.Failed != stats.Read {
		return fmt.Errorf("stats %+v: want %d rows read = written + failed", stats, read)
	}
	if int64(len(rep.rows)) != stats.Failed {
		return fmt.Errorf("%d rows in the failure report, stats say %d failed", len(rep.rows), stats.Failed)
	}
	seen := map[int64]bool{}
	for _, fr := range rep.rows {
		if seen[fr.Index] || fr.Row.Source != from+int(fr.Index) {
			return fmt.Errorf("report entry %d (source %v) duplicated or not its row's", fr.Index, fr.Row.Source)
		}
		seen[fr.Index] = true
	}
	return nil
}

// checkRawTable compares the whole physical table with rows [0, n) of the input: the same keys, each
// once, in order, each with its one cell at ts. It reads below brine (a raw single-stream scan of the
// backend), so a bug in the fan-out cannot hide a bug in the import.
func checkRawTable(ctx context.Context, tbl *client.Table, b backends.Backend, n int, ts int64) error {
	want := make([][]byte, n)
	for i := range n {
		pk, err := tbl.Salter().AppendPhysical(nil, importKey(i))
		if err != nil {
			return err
		}
		want[i] = pk
	}
	slices.SortFunc(want, bytes.Compare)
	i := 0
	for row, err := range b.Scan(ctx, tbl.Name(), backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			return fmt.Errorf("raw scan after %d rows: %w", i, err)
		}
		if i >= n {
			return fmt.Errorf("extra row %q: the table has more than the %d rows imported", row.Key, n)
		}
		if !bytes.Equal(row.Key, want[i]) {
			return fmt.Errorf("raw row %d is %q, want %q (a row lost or duplicated)", i, row.Key, want[i])
		}
		logical, err := tbl.Salter().AppendLogical(nil, row.Key)
		if err != nil {
			return err
		}
		if len(row.Cells) != 1 || row.Cells[0].Timestamp != ts || !bytes.Equal(row.Cells[0].Value, value(logical)) {
			return fmt.Errorf("row %q has cells %+v; want one cell %q at %d", logical, row.Cells, value(logical), ts)
		}
		i++
	}
	if i != n {
		return fmt.Errorf("raw scan: %d rows, want %d", i, n)
	}
	return nil
}

// keyInBucket is a physical key inside bucket b, before logical key importKey(i): a split point that
// cuts a bucket's region in two where rows are being written or read.
func keyInBucket(t *testing.T, b, i int) []byte {
	t.Helper()
	return append(bytes.Clone(physicalBuckets(t, hbaseSpec)[b].Start), importKey(i)...)
}

// faultLog counts the region operations run.
type faultLog struct{ splits, moves, flushes, compactions atomic.Int64 }

func (f *faultLog) String() string {
	return fmt.Sprintf("%d splits, %d moves, %d flushes, %d major compactions",
		f.splits.Load(), f.moves.Load(), f.flushes.Load(), f.compactions.Load())
}

// TestHBaseImportUnderRegionChanges: while Table.Import writes tens of thousands of rows in small
// batches, two regions are split at keys inside their buckets, a region is moved, the table is
// flushed and major-compacted. Every row read is written or reported (and the report re-imports
// cleanly), and a raw scan of the table equals the input exactly: no row lost, none extra.
func TestHBaseImportUnderRegionChanges(t *testing.T) {
	zk := hbasetest.ZK(t)
	admin := findAdmin(t, zk)
	c := openHBase(t, zk)
	tbl := newHBaseTable(t, c, "brine_rel_imp")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const n = 30000
	ts := time.UnixMilli(testTS)
	opts := client.ImportOptions{
		Workers: 2, BatchRows: 50, MaxAttempts: 10, BaseBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second,
		Timestamp: ts,
	}
	var rep failedRows
	opts.OnFailure = rep.add
	var faults faultLog
	gate := make(chan struct{})
	began := time.Now()

	g, gctx := errgroup.WithContext(ctx)
	var stats client.ImportStats
	var importErr error
	g.Go(func() error {
		// ~1.5 ms per 5 rows: the import runs for ~10 s before it waits on the faults.
		stats, importErr = tbl.Import(gctx, pacedInput(0, n, 5, 1500*time.Microsecond, gate), opts)
		return nil
	})
	split1, move3, split6 := keyInBucket(t, 1, n/3), keyInBucket(t, 3, 0), keyInBucket(t, 6, n/2)
	g.Go(func() error {
		defer close(gate)
		return runRegionOps(t, []regionOp{
			{"split bucket 1", &faults.splits, func() error { return admin.Split(gctx, tbl.Name(), split1) }},
			{"move bucket 3", &faults.moves, func() error { return admin.Move(gctx, tbl.Name(), move3) }},
			{"flush", &faults.flushes, func() error { return admin.Flush(gctx, tbl.Name()) }},
			{"split bucket 6", &faults.splits, func() error { return admin.Split(gctx, tbl.Name(), split6) }},
			{"major compact", &faults.compactions, func() error { return admin.MajorCompact(gctx, tbl.Name()) }},
		})
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if importErr != nil && !errors.Is(importErr, client.ErrRowsFailed) {
		t.Fatalf("Import: %v", importErr)
	}
	if err := checkStats(stats, 0, n, &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("imported %d rows in %v under %v: %d written, %d failed, %d row retries, %d batches",
		n, time.Since(began).Round(time.Millisecond), &faults, stats.Written, stats.Failed, stats.Retried, stats.Batches)
	if stats.Failed > 0 {
		// The report is the resume point: importing it again must complete.
		var rep2 failedRows
		opts.OnFailure = rep2.add
		st2, err := tbl.Import(ctx, rep.input(), opts)
		if err != nil || st2.Written != stats.Failed {
			t.Fatalf("re-importing the %d reported rows: %+v, %v", stats.Failed, st2, err)
		}
	}
	regions, err := admin.Regions(ctx, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	if want := testkit.Salter(t, hbaseSpec).Buckets() + 2; len(regions) != want {
		t.Fatalf("%d regions after the faults, want %d (8 buckets + 2 splits): the faults did not happen", len(regions), want)
	}
	if err := checkRawTable(ctx, tbl, c.Backend(), n, ts.UnixMilli()); err != nil {
		t.Fatal(err)
	}
}

// TestHBaseScanUnderRegionChanges: fan-out scans, forward and reverse, with small batches, a small
// prefetch and a slow consumer, while a region is moved, another split, the table flushed and major-compacted (and, while
// the consumers wait for those, scanners idle past their lease). Each scan returns exactly the
// reference rows, in order, with their values, and no error: region changes are retried
// transparently by the driver.
func TestHBaseScanUnderRegionChanges(t *testing.T) {
	zk := hbasetest.ZK(t)
	admin := findAdmin(t, zk)
	c := openHBase(t, zk)
	tbl := newHBaseTable(t, c, "brine_rel_scan")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const n = 4000
	stats, err := tbl.Import(ctx, pacedInput(0, n, 0, 0, nil), client.ImportOptions{Timestamp: time.UnixMilli(testTS)})
	if err != nil || stats.Written != n {
		t.Fatalf("loading %d rows: %+v, %v", n, stats, err)
	}
	want := make([][]byte, n)
	for i := range n {
		want[i] = importKey(i)
	}

	// A small prefetch keeps every bucket's region scanner open, a batch at a time, until the
	// consumer is near the end: the faults hit open scanners, not finished ones.
	scanTbl, err := client.New(c.Backend(), client.WithPrefetch(4)).OpenTable(ctx, tbl.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var faults faultLog
	gate := make(chan struct{})
	g, gctx := errgroup.WithContext(ctx)
	scan := func(reverse bool) error {
		ref := slices.Clone(want)
		opts := []client.ReadOption{client.BatchSize(7)}
		if reverse {
			slices.Reverse(ref)
			opts = append(opts, client.Reverse())
		}
		var got []client.Row
		var serr error
		for row, err := range scanTbl.Scan(gctx, client.Range{}, opts...) {
			if err != nil {
				serr = err
				break
			}
			got = append(got, row)
			if len(got) == n-n/10 {
				<-gate // the faults happen with every scanner open mid-table
			}
			time.Sleep(2 * time.Millisecond)
		}
		if err := checkScan(ref, got, serr); err != nil {
			return fmt.Errorf("reverse=%v: %w", reverse, err)
		}
		if serr != nil {
			return fmt.Errorf("reverse=%v: scan failed after %d of %d rows (region changes must be retried transparently): %w", reverse, len(got), n, serr)
		}
		return nil
	}
	g.Go(func() error { return scan(false) })
	g.Go(func() error { return scan(true) })
	move2, split5 := keyInBucket(t, 2, 0), keyInBucket(t, 5, n/2)
	g.Go(func() error {
		defer close(gate)
		time.Sleep(time.Second) // let the scans open their scanners
		return runRegionOps(t, []regionOp{
			{"move bucket 2", &faults.moves, func() error { return admin.Move(gctx, tbl.Name(), move2) }},
			{"split bucket 5", &faults.splits, func() error { return admin.Split(gctx, tbl.Name(), split5) }},
			{"flush", &faults.flushes, func() error { return admin.Flush(gctx, tbl.Name()) }},
			{"major compact", &faults.compactions, func() error { return admin.MajorCompact(gctx, tbl.Name()) }},
		})
	})
	began := time.Now()
	reopened, stale := driverLog.reopened.Load(), driverLog.staleRegions.Load()
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	reopened, stale = driverLog.reopened.Load()-reopened, driverLog.staleRegions.Load()-stale
	t.Logf("2 scans of %d rows (batch 7, prefetch 4, 2 ms per row) exact in %v under %v; the driver reopened a scanner %d times and re-read region boundaries %d times",
		n, time.Since(began).Round(time.Millisecond), &faults, reopened, stale)
	if reopened+stale == 0 {
		t.Fatal("no scanner was reopened: the region changes (and the idle wait past the scanner lease) did not reach an open scanner")
	}
}

// regionOp is one administrative operation a fault test runs on the server, counted once done.
type regionOp struct {
	name  string
	count *atomic.Int64
	run   func() error
}

// runRegionOps runs ops one after the other, logging how long each took.
func runRegionOps(t *testing.T, ops []regionOp) error {
	for _, op := range ops {
		start := time.Now()
		if err := op.run(); err != nil {
			return fmt.Errorf("%s: %w", op.name, err)
		}
		op.count.Add(1)
		t.Logf("%s took %v", op.name, time.Since(start).Round(time.Millisecond))
	}
	return nil
}

var (
	leakTop     = regexp.MustCompile(`with (\S+) on top of the stack`)
	leakCreator = regexp.MustCompile(`created by (\S+)`)
)

// leakSummary is goleak's report in one line, each goroutine as its top function and creator, so
// that a CI log that keeps only the failing lines still says what was left.
func leakSummary(err error) string {
	var out []string
	for _, g := range strings.Split(err.Error(), "Goroutine ")[1:] {
		top, by := "?", "?"
		if m := leakTop.FindStringSubmatch(g); m != nil {
			top = m[1]
		}
		if m := leakCreator.FindStringSubmatch(g); m != nil {
			by = m[1]
		}
		out = append(out, top+" (created by "+by+")")
	}
	return strings.Join(out, "; ")
}
