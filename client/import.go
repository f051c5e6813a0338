package client

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/telemetry"
)

// ImportRow is one row to import: a mutation plus an opaque Source (the input record it came from)
// that is handed back untouched in the failure report, so failed rows can be written out in their
// input format and imported again.
type ImportRow struct {
	Mutation
	Source any
}

// FailedRow is a row that was not written, with the reason.
type FailedRow struct {
	// Index is the row's position in the input, from 0.
	Index int64
	Row   ImportRow
	Err   error
}

// ImportStats are an import's counters. When an import returns, Read == Written + Failed.
type ImportStats struct {
	Read    int64 // rows taken from the input (including rows that failed to parse)
	Written int64 // rows the store acknowledged
	Failed  int64 // rows reported to OnFailure
	// Duplicates are rows whose key an earlier row of the same import had (written or refused,
	// by OnDuplicate; they are counted in Written or Failed too).
	Duplicates int64
	Retried    int64 // row write attempts repeated after a retryable error
	Batches    int64 // backend requests sent (including retries)
	Bytes      int64 // payload bytes acknowledged (keys and values)
	Elapsed    time.Duration
}

// RowsPerSecond is the write throughput so far.
func (s ImportStats) RowsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Written) / s.Elapsed.Seconds()
}

// ImportOptions tune an import. Zero values take the defaults in parentheses.
type ImportOptions struct {
	Workers     int           // parallel batch writers (the client's WithConcurrency, DefaultImportWorkers)
	BatchRows   int           // rows per batch; every batch holds rows of one bucket (the client's WithBatchRows, 500)
	BatchBytes  int           // payload bytes per batch, kept under the stores' request limits (2 MiB)
	MaxPending  int           // rows buffered per import before the fullest batch is sent early (Workers*BatchRows*4)
	MaxAttempts int           // tries per row, and of the table's route read at the start, on retryable errors (6)
	BaseBackoff time.Duration // first retry pause, doubled each try, with full jitter (50ms)
	MaxBackoff  time.Duration // longest pause (5s)
	// Timestamp is given to cells without one, so that a retried batch rewrites the same versions
	// instead of adding new ones (default: the import's start time). The k-th repeat of a key in the
	// input gets Timestamp + k ms, so the last occurrence is the newest version on every store,
	// whatever order parallel batches and retries land in.
	Timestamp time.Time
	// OnDuplicate says what a row whose key an earlier row had gets (DuplicateLast).
	OnDuplicate DuplicatePolicy
	// OnFailure receives every row that was not written; it is called from one goroutine at a time.
	OnFailure func(FailedRow)
	// Progress, when set, is called every ProgressEvery (1s) and once at the end.
	Progress      func(ImportStats)
	ProgressEvery time.Duration
}

// withDefaults fills the zero fields; workers and batchRows are the client's (WithConcurrency,
// WithBatchRows), so an import is tuned like the client's other calls unless told otherwise.
func (o *ImportOptions) withDefaults(workers, batchRows int) {
	if o.Workers <= 0 {
		o.Workers = workers
	}
	if o.BatchRows <= 0 {
		o.BatchRows = batchRows
	}
	if o.BatchBytes <= 0 {
		o.BatchBytes = 2 << 20
	}
	if o.MaxPending <= 0 {
		o.MaxPending = o.Workers * o.BatchRows * 4
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 6
	}
	if o.BaseBackoff <= 0 {
		o.BaseBackoff = 50 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.Timestamp.IsZero() {
		o.Timestamp = time.Now()
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
}

// DuplicatePolicy is what Import does with a row whose key an earlier row of the import had.
type DuplicatePolicy int

const (
	// DuplicateLast writes it as a newer version: the last occurrence in the input wins.
	DuplicateLast DuplicatePolicy = iota
	// DuplicateError refuses it: it fails with ErrDuplicateKey and the first occurrence stays.
	DuplicateError
)

// ParseDuplicatePolicy parses "last" or "error".
func ParseDuplicatePolicy(s string) (DuplicatePolicy, error) {
	switch s {
	case "last":
		return DuplicateLast, nil
	case "error":
		return DuplicateError, nil
	}
	return 0, fmt.Errorf("%w: duplicate policy %q: want last or error", backends.ErrInvalidArgument, s)
}

// DefaultImportWorkers is the number of batches an import keeps in flight by default: the client's
// DefaultConcurrency. A region server takes many concurrent batches well: measured against one HBase
// server (make bench, with the HBase driver's one Multi call per region), 4, 8 and 16 writers of
// 500-row batches all ran 4-9x raw gohbase with 1,024 concurrent Puts, and 32 less (4.5x).
const DefaultImportWorkers = DefaultConcurrency

// ErrRowsFailed is returned by Import when rows failed; the rows themselves went to OnFailure.
var ErrRowsFailed = errors.New("brine: some rows were not imported")

// ErrDuplicateKey is the failure of a row refused by DuplicateError.
var ErrDuplicateKey = errors.New("brine: duplicate key in the import")

// importRow is a row on its way: its input position, physical mutation and payload size.
type importRow struct {
	index int64
	row   ImportRow
	phys  Mutation
	bytes int
}

type importer struct {
	t     *physTable
	write writeFunc
	opts  ImportOptions
	began time.Time

	read, written, failed, retried, batches, bytes, dups atomic.Int64

	// seen counts each key's occurrences so far by a seeded 64-bit hash, not the key itself: 20-40
	// bytes per distinct key with the map's overhead. Two keys share a hash with odds of about n²/2^65
	// (1e-7 for 2M keys); such a row is only stamped 1 ms newer, or, under DuplicateError, reported,
	// never dropped.
	seed maphash.Seed
	seen map[uint64]uint32

	failMu sync.Mutex
	call   *telemetry.Call // the Import call's telemetry (nil: off)
}

// Import writes a stream of rows: rows are grouped per bucket (so each batch goes to one region or
// partition), cut into batches bounded by rows and bytes, and written by parallel workers with retries
// and exponential backoff on retryable errors. Memory stays bounded whatever the input size: the input
// is read only as fast as the workers drain it.
//
// Nothing is lost silently: every row read ends either written or reported to OnFailure (input errors
// yielded by rows count as failed rows; so do rows still pending when ctx ends). Import returns the
// final stats, and ErrRowsFailed when any row failed, or ctx's error when it was cancelled. When ctx
// ends, Import stops pulling rows: the rest of the input is the caller's to report as not read.
//
// A key given more than once is counted in ImportStats.Duplicates and handled by opts.OnDuplicate:
// by default the last occurrence wins on every store, because each repeat's stamped cells are 1 ms
// newer than the one before (cells that carry their own timestamps keep them, and the newest wins).
func (t *Table) Import(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions) (stats ImportStats, err error) {
	return t.importRows(ctx, rows, opts, nil)
}

// writeFunc writes one batch of an import, whose rows carry both their physical mutation and the
// logical row: the plain path sends the one (write nil), an IndexedTable's the other through its
// index protocol. Its result is Table.Apply's.
type writeFunc func(ctx context.Context, batch []importRow) ([]error, error)

// importRows is Import; write, when not nil, writes the batches (an IndexedTable's).
func (t *Table) importRows(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions, write writeFunc) (stats ImportStats, err error) {
	opts.withDefaults(t.c.concurrency, t.c.batchRows)
	pt, err := t.importTarget(ctx, opts)
	if err != nil {
		return ImportStats{}, err
	}
	if write == nil {
		write = pt.writeImport
	}
	ctx, c := t.c.tel.Begin(ctx, "import", pt.name)
	im := &importer{t: pt, write: write, opts: opts, began: time.Now(), seed: maphash.MakeSeed(), seen: make(map[uint64]uint32), call: c}
	defer func() { c.EndImport(ctx, err, stats.Written, stats.Retried, stats.Failed) }()

	batches := make(chan []importRow) // unbuffered: the reader blocks while every worker is busy
	g, gctx := errgroup.WithContext(ctx)
	for range opts.Workers {
		g.Go(func() error {
			for b := range batches {
				im.writeBatch(gctx, b)
			}
			return nil
		})
	}
	stopProgress := im.startProgress()

	im.readAll(ctx, rows, batches)
	close(batches)
	_ = g.Wait()
	stopProgress()

	stats = im.stats()
	if opts.Progress != nil {
		opts.Progress(stats)
	}
	switch {
	case ctx.Err() != nil:
		return stats, ctx.Err()
	case stats.Failed > 0:
		return stats, fmt.Errorf("import into %s: %d of %d rows failed: %w", pt.name, stats.Failed, stats.Read, ErrRowsFailed)
	}
	return stats, nil
}

// readAll reads the input, validates and groups rows by bucket, and hands full batches to the workers.
func (im *importer) readAll(ctx context.Context, rows iter.Seq2[ImportRow, error], out chan<- []importRow) {
	pending := make(map[int][]importRow)
	pendingBytes := make(map[int]int)
	total := 0
	send := func(bucket int) bool {
		b := pending[bucket]
		total -= len(b)
		delete(pending, bucket)
		delete(pendingBytes, bucket)
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			im.fail(b, ctx.Err())
			return false
		}
	}
	var index int64
	for r, err := range rows {
		i := index
		index++
		im.read.Add(1)
		if err != nil {
			im.fail([]importRow{{index: i, row: r}}, fmt.Errorf("input row %d: %w", i, err))
			continue
		}
		ir, bucket, err := im.prepare(i, r)
		if err != nil {
			im.fail([]importRow{ir}, err)
			continue
		}
		if err := im.repeat(&ir); err != nil {
			im.fail([]importRow{ir}, err)
			continue
		}
		if n := pendingBytes[bucket]; n > 0 && n+ir.bytes > im.opts.BatchBytes {
			if !send(bucket) {
				im.fail([]importRow{ir}, ctx.Err())
				break
			}
		}
		pending[bucket] = append(pending[bucket], ir)
		pendingBytes[bucket] += ir.bytes
		total++
		if len(pending[bucket]) >= im.opts.BatchRows {
			if !send(bucket) {
				break
			}
		} else if total >= im.opts.MaxPending {
			// Many buckets, each filling slowly: send the fullest to keep memory bounded.
			if !send(fullest(pending)) {
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	for bucket := range pending {
		send(bucket) // fails the batch itself when ctx has ended
	}
}

func fullest(pending map[int][]importRow) int {
	best, n := 0, -1
	for b, rows := range pending {
		if len(rows) > n {
			best, n = b, len(rows)
		}
	}
	return best
}

// prepare validates a row, stamps timestamps, and computes its physical mutation and bucket.
func (im *importer) prepare(index int64, r ImportRow) (importRow, int, error) {
	ir := importRow{index: index, row: r}
	if !r.Delete && len(r.Cells) == 0 {
		return ir, 0, fmt.Errorf("input row %d (key %s): %w: no cells", index, im.t.printKey(r.Key), backends.ErrInvalidArgument)
	}
	pk, bucket, err := im.t.physical(r.Key)
	if err != nil {
		return ir, 0, fmt.Errorf("input row %d: %w", index, err)
	}
	m := r.Mutation
	m.Key = pk
	ts := im.opts.Timestamp.UnixMilli()
	size := len(pk)
	if !m.Delete {
		cells := make([]Cell, len(m.Cells))
		for j, c := range m.Cells {
			if c.Timestamp == 0 {
				c.Timestamp = ts
			}
			cells[j] = c
			size += len(c.Family) + len(c.Qualifier) + len(c.Value) + 8
		}
		m.Cells = cells
	}
	ir.phys, ir.bytes = m, size
	return ir, bucket, nil
}

// repeat counts a row whose key came before and applies OnDuplicate: a refusal, or the row's stamped
// cells moved 1 ms later per earlier occurrence, so that the last occurrence is the newest version.
func (im *importer) repeat(ir *importRow) error {
	h := maphash.Bytes(im.seed, ir.row.Key)
	n := im.seen[h]
	im.seen[h] = n + 1
	if n == 0 {
		return nil
	}
	im.dups.Add(1)
	if im.opts.OnDuplicate == DuplicateError {
		return fmt.Errorf("input row %d (key %s): %w (%d earlier row(s) had it)", ir.index, im.t.printKey(ir.row.Key), ErrDuplicateKey, n)
	}
	if ir.phys.Delete {
		return nil // a delete removes every version: there is nothing to order by
	}
	for j, c := range ir.row.Cells {
		if c.Timestamp == 0 {
			ir.phys.Cells[j].Timestamp += int64(n)
		}
	}
	return nil
}

// logical is the row's stamped mutation under its logical key: what the index protocol and the
// router take.
func (r importRow) logical() Mutation {
	m := r.phys
	m.Key = r.row.Key
	return m
}

// writeImport writes a batch's physical mutations: one call, as the batch is one bucket's.
func (pt *physTable) writeImport(ctx context.Context, batch []importRow) ([]error, error) {
	muts := make([]Mutation, len(batch))
	for i, r := range batch {
		muts[i] = r.phys
	}
	return pt.c.backend.Apply(ctx, pt.name, muts)
}

// importTarget is the physical table an import writes, from the table's route. A directory read
// that fails retryably (its region moving after a server died) is tried again as a row would be, up
// to opts.MaxAttempts: without that, one moving region failed the whole import before its first
// row, while every row of it would have been retried.
func (t *Table) importTarget(ctx context.Context, opts ImportOptions) (*physTable, error) {
	for attempt := 1; ; attempt++ {
		pt, err := t.rt.plain(ctx, "import into", false)
		if err == nil || !IsRetryable(err) || attempt >= opts.MaxAttempts {
			return pt, err
		}
		if serr := sleepBackoff(ctx, attempt, opts.BaseBackoff, opts.MaxBackoff); serr != nil {
			return nil, fmt.Errorf("%w (last error: %w)", serr, err)
		}
	}
}

// writeBatch writes one batch, retrying rows that failed with retryable errors, and records every
// row's outcome.
func (im *importer) writeBatch(ctx context.Context, batch []importRow) {
	for attempt := 1; len(batch) > 0; attempt++ {
		im.batches.Add(1)
		rowErrs, err := im.write(ctx, batch)
		var retry []importRow
		var lastErr error
		var wrote int64
		for i, r := range batch {
			e := err
			if e == nil && rowErrs != nil {
				e = rowErrs[i]
			}
			switch {
			case e == nil:
				im.written.Add(1)
				im.bytes.Add(int64(r.bytes))
				wrote++
			case IsRetryable(e) && attempt < im.opts.MaxAttempts && ctx.Err() == nil:
				retry = append(retry, r)
				lastErr = e
			default:
				im.fail([]importRow{r}, fmt.Errorf("input row %d (key %s) after %d attempt(s): %w", r.index, im.t.printKey(r.row.Key), attempt, e))
			}
		}
		im.call.CountImport(ctx, wrote, 0)
		if len(retry) == 0 {
			return
		}
		im.retried.Add(int64(len(retry)))
		im.call.CountRetries(ctx, int64(len(retry)))
		if err := sleepBackoff(ctx, attempt, im.opts.BaseBackoff, im.opts.MaxBackoff); err != nil {
			im.fail(retry, fmt.Errorf("gave up after %d attempt(s): %w (last error: %w)", attempt, err, lastErr))
			return
		}
		batch = retry
	}
}

// sleepBackoff pauses before retry number attempt: exponential, capped, with full jitter so that
// parallel writers that failed together do not retry together.
func sleepBackoff(ctx context.Context, attempt int, base, limit time.Duration) error {
	d := base << min(attempt-1, 20)
	if d <= 0 || d > limit {
		d = limit
	}
	d = time.Duration(rand.Int64N(int64(d)) + 1)
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (im *importer) fail(rows []importRow, err error) {
	im.failed.Add(int64(len(rows)))
	im.call.CountImport(context.Background(), 0, int64(len(rows)))
	if im.opts.OnFailure == nil {
		return
	}
	im.failMu.Lock()
	defer im.failMu.Unlock()
	for _, r := range rows {
		im.opts.OnFailure(FailedRow{Index: r.index, Row: r.row, Err: err})
	}
}

func (im *importer) stats() ImportStats {
	return ImportStats{
		Read: im.read.Load(), Written: im.written.Load(), Failed: im.failed.Load(),
		Retried: im.retried.Load(), Batches: im.batches.Load(), Bytes: im.bytes.Load(), Duplicates: im.dups.Load(),
		Elapsed: time.Since(im.began),
	}
}

// startProgress reports stats periodically until the returned function is called; that function
// returns only after the reporting goroutine has exited.
func (im *importer) startProgress() (stop func()) {
	if im.opts.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(im.opts.ProgressEvery)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				im.opts.Progress(im.stats())
			case <-done:
				return
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
