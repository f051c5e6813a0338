package route

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
	"github.com/brine-kv/brine/internal/wait"
)

// Errors of Import, which package client re-exports.
var (
	// ErrRowsFailed is returned by Import when rows failed; the rows themselves went to OnFailure.
	ErrRowsFailed = errors.New("brine: some rows were not imported")
	// ErrDuplicateKey is the failure of a row refused as a duplicate.
	ErrDuplicateKey = errors.New("brine: duplicate key in the import")
)

// ImportRow is client.ImportRow.
type ImportRow struct {
	backends.Mutation
	Source any
}

// Failed is client.FailedRow.
type Failed struct {
	Index int64
	Row   ImportRow
	Err   error
}

// ImportStats is client.ImportStats.
type ImportStats struct {
	Read, Written, Failed, Cancelled, Duplicates, Retried, Batches, Bytes int64
	Elapsed                                                               time.Duration
}

// ImportOptions is client.ImportOptions, every default filled in.
type ImportOptions struct {
	Workers, BatchRows, BatchBytes, MaxPending, MaxAttempts int
	BaseBackoff, MaxBackoff                                 time.Duration
	// Timestamp is given to cells without one; zero (a bulk import's) leaves them for the store.
	Timestamp        time.Time
	RefuseDuplicates bool // client.DuplicateError
	OnFailure        func(Failed)
	Progress         func(ImportStats)
	ProgressEvery    time.Duration
	// Admit, when set, is asked about every valid row, in input order and in the one goroutine that
	// reads the input, before the row is batched; a row it refuses fails with its error. It is how
	// a rule that depends on input order (the first row to give a unique key wins it) survives
	// batches written in parallel.
	Admit func(Pending) error
}

// WriteFunc writes one batch of an import, whose rows carry both their physical mutation and the
// logical row: the plain path sends the one (Import's write nil), a table with indexes the other
// through its index protocol. Its result is Table.Apply's.
type WriteFunc func(ctx context.Context, batch []Pending) ([]error, error)

// Import is client.Table.Import into the physical table pt: rows are grouped per bucket, cut into
// batches bounded by rows and bytes, and written by opts.Workers workers with retries; write, when
// not nil, writes the batches instead of a plain write of their physical mutations.
func Import(ctx context.Context, core *Core, pt *Phys, rows iter.Seq2[ImportRow, error], opts ImportOptions, write WriteFunc) (stats ImportStats, err error) {
	if write == nil {
		write = writePhysical(pt)
	}
	ctx, im := newImporter(ctx, core, pt, opts)
	im.write = write
	defer func() { im.call.EndImport(ctx, err, stats.Written, stats.Retried, stats.Failed) }()

	batches := make(chan []Pending) // unbuffered: the reader blocks while every worker is busy
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
	return im.end(ctx)
}

// newImporter starts an import's telemetry call and state.
func newImporter(ctx context.Context, core *Core, pt *Phys, opts ImportOptions) (context.Context, *importer) {
	ctx, c := core.Tel.Begin(ctx, "import", pt.Name)
	return ctx, &importer{t: pt, opts: opts, began: time.Now(), seed: maphash.MakeSeed(), seen: make(map[uint64]uint32), call: c}
}

// end is an import's last progress report and result, once every row has its outcome.
func (im *importer) end(ctx context.Context) (ImportStats, error) {
	stats := im.stats()
	if im.opts.Progress != nil {
		im.opts.Progress(stats)
	}
	switch {
	case ctx.Err() != nil:
		return stats, fmt.Errorf("import into %s: cancelled: %d of %d rows read not written (%d cancelled): %w",
			im.t.Name, stats.Failed, stats.Read, stats.Cancelled, ctx.Err())
	case stats.Failed > 0:
		return stats, fmt.Errorf("import into %s: %d of %d rows failed: %w", im.t.Name, stats.Failed, stats.Read, ErrRowsFailed)
	}
	return stats, nil
}

// Pending is a row on its way: its input position, the row, its stamped physical mutation and its
// payload size.
type Pending struct {
	Index int64
	Row   ImportRow
	Phys  backends.Mutation
	bytes int
}

type importer struct {
	t     *Phys
	write WriteFunc
	opts  ImportOptions
	began time.Time

	read, written, failed, cancelled, retried, batches, bytes, dups atomic.Int64

	// seen counts each key's occurrences so far by a seeded 64-bit hash, not the key itself: 20-40
	// bytes per distinct key with the map's overhead. Two keys share a hash with odds of about n²/2^65
	// (1e-7 for 2M keys); such a row is only stamped 1 ms newer, or, under DuplicateError, reported,
	// never dropped.
	seed maphash.Seed
	seen map[uint64]uint32

	failMu sync.Mutex
	call   *telemetry.Call // the Import call's telemetry (nil: off)
}

// readAll reads the input, validates and groups rows by bucket, and hands full batches to the workers.
func (im *importer) readAll(ctx context.Context, rows iter.Seq2[ImportRow, error], out chan<- []Pending) {
	pending := make(map[int][]Pending)
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
			im.cancel(b, 0, ctx.Err())
			return false
		}
	}
	var index int64
	for r, err := range rows {
		ir, bucket, ok := im.take(index, r, err)
		index++
		if !ok {
			continue
		}
		if n := pendingBytes[bucket]; n > 0 && n+ir.bytes > im.opts.BatchBytes {
			if !send(bucket) {
				im.cancel([]Pending{ir}, 0, ctx.Err())
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

// take counts an input row read as row index, with the error the input gave it, and turns it into
// its stamped physical mutation and bucket; a row it refuses (an input error, a bad key or cells,
// a duplicate OnDuplicate refuses, Admit's refusal) is failed, and ok is false.
func (im *importer) take(index int64, r ImportRow, inputErr error) (ir Pending, bucket int, ok bool) {
	im.read.Add(1)
	if inputErr != nil {
		im.fail([]Pending{{Index: index, Row: r}}, fmt.Errorf("input row %d: %w", index, inputErr))
		return ir, 0, false
	}
	ir, bucket, err := im.prepare(index, r)
	if err == nil {
		err = im.repeat(&ir)
	}
	if err == nil && im.opts.Admit != nil {
		err = im.opts.Admit(ir)
	}
	if err != nil {
		im.fail([]Pending{ir}, err)
		return ir, 0, false
	}
	return ir, bucket, true
}

func fullest(pending map[int][]Pending) int {
	best, n := 0, -1
	for b, rows := range pending {
		if len(rows) > n {
			best, n = b, len(rows)
		}
	}
	return best
}

// prepare validates a row, stamps timestamps, and computes its physical mutation and bucket.
func (im *importer) prepare(index int64, r ImportRow) (Pending, int, error) {
	ir := Pending{Index: index, Row: r}
	if !r.Delete && len(r.Cells) == 0 {
		return ir, 0, fmt.Errorf("input row %d (key %s): %w: no cells", index, im.t.PrintKey(r.Key), backends.ErrInvalidArgument)
	}
	pk, bucket, err := PhysicalKey(im.t.Salter, r.Key)
	if err != nil {
		return ir, 0, fmt.Errorf("input row %d: %w", index, err)
	}
	m := r.Mutation
	m.Key = pk
	ts := im.opts.Timestamp.UnixMilli()
	size := len(pk)
	if !m.Delete {
		cells := make([]backends.Cell, len(m.Cells))
		for j, c := range m.Cells {
			if c.Timestamp == 0 && !im.opts.Timestamp.IsZero() {
				c.Timestamp = ts
			}
			cells[j] = c
			size += len(c.Family) + len(c.Qualifier) + len(c.Value) + 8
		}
		m.Cells = cells
	}
	ir.Phys, ir.bytes = m, size
	return ir, bucket, nil
}

// repeat counts a row whose key came before and applies OnDuplicate: a refusal, or the row's stamped
// cells moved 1 ms later per earlier occurrence, so that the last occurrence is the newest version.
func (im *importer) repeat(ir *Pending) error {
	h := maphash.Bytes(im.seed, ir.Row.Key)
	n := im.seen[h]
	im.seen[h] = n + 1
	if n == 0 {
		return nil
	}
	im.dups.Add(1)
	if im.opts.RefuseDuplicates {
		return fmt.Errorf("input row %d (key %s): %w (%d earlier row(s) had it)", ir.Index, im.t.PrintKey(ir.Row.Key), ErrDuplicateKey, n)
	}
	if ir.Phys.Delete || im.opts.Timestamp.IsZero() {
		// A delete removes every version: there is nothing to order by. Unstamped cells (a bulk
		// import's) are stamped by the store, which keeps the last of a row, column and timestamp.
		return nil
	}
	for j, c := range ir.Row.Cells {
		if c.Timestamp == 0 {
			ir.Phys.Cells[j].Timestamp += int64(n)
		}
	}
	return nil
}

// Logical is the row's stamped mutation under its logical key: what the index protocol and the
// router take.
func (r Pending) Logical() backends.Mutation {
	m := r.Phys
	m.Key = r.Row.Key
	return m
}

// writePhysical writes a batch's physical mutations to pt: one call, as the batch is one bucket's.
func writePhysical(pt *Phys) WriteFunc {
	return func(ctx context.Context, batch []Pending) ([]error, error) {
		muts := make([]backends.Mutation, len(batch))
		for i, r := range batch {
			muts[i] = r.Phys
		}
		return pt.ApplyPhysical(ctx, muts)
	}
}

// writeBatch writes one batch, retrying rows that failed with retryable errors, and records every
// row's outcome.
func (im *importer) writeBatch(ctx context.Context, batch []Pending) {
	for attempt := 1; len(batch) > 0; attempt++ {
		im.batches.Add(1)
		rowErrs, err := im.write(ctx, batch)
		var retry []Pending
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
			case errors.Is(e, backends.ErrRetryable) && attempt < im.opts.MaxAttempts && ctx.Err() == nil:
				retry = append(retry, r)
				lastErr = e
			case ctx.Err() != nil && errors.Is(e, ctx.Err()):
				im.cancel([]Pending{r}, attempt, e) // the import ended, not the row
			case ctx.Err() != nil && errors.Is(e, backends.ErrRetryable):
				im.cancel([]Pending{r}, attempt, fmt.Errorf("%w (last error: %w)", ctx.Err(), e))
			default:
				im.fail([]Pending{r}, fmt.Errorf("input row %d (key %s) after %d attempt(s): %w", r.Index, im.t.PrintKey(r.Row.Key), attempt, SizeNote(e, r.Row.Key, r.Phys.Key)))
			}
		}
		im.call.CountImport(ctx, wrote, 0)
		if len(retry) == 0 {
			return
		}
		im.retried.Add(int64(len(retry)))
		im.call.CountRetries(ctx, int64(len(retry)))
		if err := SleepBackoff(ctx, attempt, im.opts.BaseBackoff, im.opts.MaxBackoff); err != nil {
			im.cancel(retry, attempt, fmt.Errorf("gave up: %w (last error: %w)", err, lastErr))
			return
		}
		batch = retry
	}
}

// SleepBackoff pauses before retry number attempt: exponential, capped, with full jitter so that
// parallel writers that failed together do not retry together.
func SleepBackoff(ctx context.Context, attempt int, base, limit time.Duration) error {
	d := base << min(attempt-1, 20)
	if d <= 0 || d > limit {
		d = limit
	}
	return wait.Sleep(ctx, time.Duration(rand.Int64N(int64(d))+1))
}

// cancel fails rows not written because the import's context ended, each with its input row and
// key, after attempts tries (0: never sent); they count as cancelled besides failed.
func (im *importer) cancel(rows []Pending, attempts int, cause error) {
	im.cancelled.Add(int64(len(rows)))
	when := "before it was sent"
	if attempts > 0 {
		when = fmt.Sprintf("after %d attempt(s)", attempts)
	}
	for _, r := range rows {
		im.fail([]Pending{r}, fmt.Errorf("input row %d (key %s): cancelled %s: %w", r.Index, im.t.PrintKey(r.Row.Key), when, cause))
	}
}

func (im *importer) fail(rows []Pending, err error) {
	im.failed.Add(int64(len(rows)))
	im.call.CountImport(context.Background(), 0, int64(len(rows)))
	if im.opts.OnFailure == nil {
		return
	}
	im.failMu.Lock()
	defer im.failMu.Unlock()
	for _, r := range rows {
		im.opts.OnFailure(Failed{Index: r.Index, Row: r.Row, Err: err})
	}
}

func (im *importer) stats() ImportStats {
	return ImportStats{
		Read: im.read.Load(), Written: im.written.Load(), Failed: im.failed.Load(), Cancelled: im.cancelled.Load(),
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
