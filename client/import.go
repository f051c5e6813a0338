package client

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
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
	// Cancelled are the failed rows not written because ctx ended (each reported with its input row
	// and key, its error wrapping ctx's); they are counted in Failed too.
	Cancelled int64
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
	// Bulk, when set, loads the rows as the store's own files, past its write path, instead of
	// writing them in batches: see BulkLoad for what changes.
	Bulk *BulkLoad
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
var ErrRowsFailed = route.ErrRowsFailed

// ErrDuplicateKey is the failure of a row refused by DuplicateError.
var ErrDuplicateKey = route.ErrDuplicateKey

// Import writes a stream of rows: rows are grouped per bucket (so each batch goes to one region or
// partition), cut into batches bounded by rows and bytes, and written by parallel workers with retries
// and exponential backoff on retryable errors. Memory stays bounded whatever the input size: the input
// is read only as fast as the workers drain it.
//
// Nothing is lost silently: every row read ends either written or reported to OnFailure (input errors
// yielded by rows count as failed rows; so do rows still pending when ctx ends). Import returns the
// final stats, and ErrRowsFailed when any row failed, or an error wrapping ctx's when it was
// cancelled (the rows it held then are reported, and counted in ImportStats.Cancelled). When ctx
// ends, Import stops pulling rows: the rest of the input is the caller's to report as not read.
//
// A key given more than once is counted in ImportStats.Duplicates and handled by opts.OnDuplicate:
// by default the last occurrence wins on every store, because each repeat's stamped cells are 1 ms
// newer than the one before (cells that carry their own timestamps keep them, and the newest wins).
//
// On a table with indexes each row goes through the index protocol when it touches an index. Of the
// input rows that give one key of a unique index to different main rows, the first in the input wins
// it, however the parallel batches land: a later one fails with ErrUniqueViolation naming the first,
// whether or not the first is written.
func (t *Table) Import(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions) (stats ImportStats, err error) {
	it, err := retryRoute(ctx, t.c.core, opts, func() (*indexedTable, error) { return t.indexed(ctx) })
	switch {
	case err != nil:
		return ImportStats{}, fmt.Errorf("import %s: %w", t.name, err)
	case it != nil:
		return it.Import(ctx, rows, opts)
	}
	return t.importRows(ctx, rows, opts, nil, nil)
}

// importRows is Import; write, when not nil, writes the batches, and admit refuses rows before they
// are batched (the index engine's).
func (t *Table) importRows(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions, write route.WriteFunc, admit func(route.Pending) error) (ImportStats, error) {
	if opts.Bulk != nil && (write != nil || admit != nil) {
		return ImportStats{}, fmt.Errorf("import into %s: bulk: %w: an indexed table's entries would need files of their own, loaded under the exclusive fence", t.name, backends.ErrUnsupported)
	}
	stamp := opts.Timestamp
	opts.withDefaults(t.c.core.Concurrency, t.c.core.BatchRows)
	pt, err := t.importTarget(ctx, opts)
	if err != nil {
		return ImportStats{}, err
	}
	o := route.ImportOptions{Workers: opts.Workers, BatchRows: opts.BatchRows, BatchBytes: opts.BatchBytes,
		MaxPending: opts.MaxPending, MaxAttempts: opts.MaxAttempts, BaseBackoff: opts.BaseBackoff, MaxBackoff: opts.MaxBackoff,
		Timestamp: opts.Timestamp, RefuseDuplicates: opts.OnDuplicate == DuplicateError, ProgressEvery: opts.ProgressEvery, Admit: admit}
	if opts.OnFailure != nil {
		o.OnFailure = func(f route.Failed) { opts.OnFailure(FailedRow{Index: f.Index, Row: ImportRow(f.Row), Err: f.Err}) }
	}
	if opts.Progress != nil {
		o.Progress = func(s route.ImportStats) { opts.Progress(ImportStats(s)) }
	}
	in := func(yield func(route.ImportRow, error) bool) {
		for r, err := range rows {
			if !yield(route.ImportRow(r), err) {
				return
			}
		}
	}
	var stats route.ImportStats
	if opts.Bulk != nil {
		o.Timestamp = stamp // unset: the store stamps, and a resumed load takes the first one's stamp
		stats, err = route.BulkImport(ctx, t.c.core, pt, in, o, opts.Bulk.options(stamp))
	} else {
		stats, err = route.Import(ctx, t.c.core, pt, in, o, write)
	}
	return ImportStats(stats), err
}

// importTarget is the physical table an import writes, from the table's route.
func (t *Table) importTarget(ctx context.Context, opts ImportOptions) (*route.Phys, error) {
	return retryRoute(ctx, t.c.core, opts, func() (*route.Phys, error) { return t.rt.Plain(ctx, "import into", false) })
}

// retryRoute runs read, a read of the table's route or definitions that an import starts with, and
// runs it again when it fails retryably (its region moving after a server died), as a row would be,
// up to opts.MaxAttempts: without that, one moving region failed the whole import before its first
// row, while every row of it would have been retried.
func retryRoute[T any](ctx context.Context, core *route.Core, opts ImportOptions, read func() (T, error)) (T, error) {
	opts.withDefaults(core.Concurrency, core.BatchRows)
	for attempt := 1; ; attempt++ {
		v, err := read()
		if err == nil || !IsRetryable(err) || attempt >= opts.MaxAttempts {
			return v, err
		}
		if serr := route.SleepBackoff(ctx, attempt, opts.BaseBackoff, opts.MaxBackoff); serr != nil {
			return v, fmt.Errorf("%w (last error: %w)", serr, err)
		}
	}
}
