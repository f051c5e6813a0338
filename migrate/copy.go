// Package migrate moves a table between stores: Copy copies its rows, re-salted, with their
// timestamps, from any store brine speaks to any other, resumable from a checkpoint kept with the
// target; package compare then tells whether the two tables are equal, and Sync makes them so,
// deletes included. docs/migrate.md gives the recipe: copy, catch up with Since, pause the writers,
// a last catch-up, sync, compare, switch.
package migrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/shardplan"
	"github.com/brine-kv/brine/periods"
	"github.com/brine-kv/brine/salting"
)

// ErrSameTable: a copy whose target is its source.
var ErrSameTable = errors.New("migrate: a table cannot be copied onto itself")

// ErrInterrupted: a copy into the target was interrupted and its checkpoint is there; Copy refuses
// to start another until it is resumed (Options.Resume) or the checkpoint table dropped.
var ErrInterrupted = errors.New("migrate: an interrupted copy into the target is waiting to be resumed")

// ErrResumeMismatch: Resume with options other than the interrupted copy's.
var ErrResumeMismatch = errors.New("migrate: resume with other options than the interrupted copy's")

// Options control Copy. The zero value copies the newest version of every cell of the whole table
// into a table of the same name and salting.
type Options struct {
	As          string         // the target's name (default: the source's)
	Salter      salting.Salter // the target's salting, when Copy creates it (default: the source's)
	Range       client.Range   // the logical keys copied (default: all)
	Since       time.Time      // copy only cells stamped after it: a migration's catch-up pass
	AllVersions bool           // every version the source keeps, not the newest only
	// Resume continues the interrupted copy whose checkpoint the target's store holds; its options
	// must be the ones that copy had.
	Resume bool
	// Workers is how many source buckets are copied at once (default 8); ChunkRows the rows read
	// from a bucket and written before its cursor moves on, at most (default 8,000).
	Workers   int
	ChunkRows int
	// Progress, when set, is told of the rows written and the buckets done, after each chunk; it is
	// called from one goroutine at a time.
	Progress func(Progress)
	// ClockSkew is how far the stores' clocks may run behind this machine's (default
	// DefaultClockSkew): Stats.Since is the copy's first start less it, as cells are stamped by the
	// store's clock.
	ClockSkew time.Duration
	// Shard, when set, copies only that shard of the source's rows (compare.Shard: by its buckets,
	// then key ranges), so that Count processes, started at once on as many machines with the same
	// options, each copy 1/Count of the table. Each shard keeps a checkpoint of its own
	// (ShardCheckpoint) and resumes alone; the first to start creates the target and the others
	// take it. A source with indexes is refused unless the target is there already: its copy is
	// written under one exclusive fence, which one process holds.
	Shard compare.Shard
}

// DefaultClockSkew is Options.ClockSkew's default.
const DefaultClockSkew = time.Minute

// Progress is a copy's progress.
type Progress struct {
	Rows           int64 // rows written by this call
	Buckets, Total int   // source buckets done (resumed ones included), of Total (the shard's, with Options.Shard)
	// Phase is what the copy does once its rows are written, reported when it begins and then about
	// every second until it ends: PhaseIndexes, then PhaseVerifyIndex for each index ("" while rows
	// are copied). An indexed copy spends a while there, writing nothing more.
	Phase   string
	Index   string        // the index verified, in PhaseVerifyIndex
	Elapsed time.Duration // how long the phase has run
}

// The phases of Progress after the rows.
const (
	PhaseIndexes     = "indexes"      // releasing the target's fence: repairing and activating its indexes
	PhaseVerifyIndex = "verify index" // checking an index against the target's rows
)

// Stats are what a copy did.
type Stats struct {
	Rows    int64    // rows written by this call
	Cells   int64    // their cells
	Buckets int      // source buckets (periods, for a period table; the shard's, with Options.Shard)
	Created bool     // Copy created the target
	Indexes []string // the target's indexes, verified exact after the copy
	Elapsed time.Duration
	// Since is the Options.Since of the next catch-up pass: the start of this copy's first run (for
	// a resumed copy, the interrupted run's, kept with its checkpoint), less ClockSkew. A catch-up
	// from it copies every cell written since the first run began, those written into ranges it had
	// already copied before an interruption included. Zero when the checkpoint resumed did not
	// record its start (written by an older brine).
	Since time.Time
}

// CheckpointTable is the name of the table, on the target's store, that holds the checkpoint of a
// copy into target while it runs; Copy drops it when the copy is done.
func CheckpointTable(target string) string { return target + "__copy" }

// Copy copies the table of from into to (two clients of the same store or of two stores). It reads
// the source bucket by bucket, in parallel, and writes each chunk of a bucket's rows into the
// target as a plain Import (batched per target bucket, retried) before it records the bucket's
// cursor in the checkpoint, so an interrupted copy resumes where every bucket stood (Resume).
//
// A period table (package periods) is copied period by period: the target is declared alike, and
// each period's table is created on it with its source period's spec (or Salter) and copied; with
// Shard, each shard copies its shard of every period.
//
// A target that is not there is created like the source: key schema, families and their settings,
// Meta, the source's salting or Salter, and its indexes: their entries are written with the rows
// under the target's exclusive fence (client.ExclusiveTable.Import: plain batches, not the per-row
// protocol), made exact and active by the fence's release, then verified (Index.Verify). A target
// that is there (a catch-up pass, Since) must have the source's key schema, and its Table's writes keep its
// indexes. Cells keep their timestamps; a row or cell the source no longer shows is
// not copied, so a delete is never undone, but nor is it copied: a catch-up pass leaves in the
// target the rows deleted from the source since (package compare finds them).
//
// Bad input fails before anything is written: the table onto itself (ErrSameTable), an index's own
// table, a source brine did not create, a target with another key schema or without a source
// family, an interrupted copy not resumed (ErrInterrupted) or resumed with other options or another
// shard count (ErrResumeMismatch), a Shard that names none, or a sharded copy of an indexed source
// into a new target (client.ErrInvalidArgument).
func Copy(ctx context.Context, from, to *client.Client, table string, opts Options) (Stats, error) {
	if (from == to || from.Backend() == to.Backend()) && (opts.As == "" || opts.As == table) {
		return Stats{}, fmt.Errorf("copy %s: %w (give the copy another name, As)", table, ErrSameTable)
	}
	if meta, err := from.Backend().TableMeta(ctx, table); err == nil && periods.IsTable(meta) {
		return copyPeriods(ctx, from, to, table, opts)
	}
	began := time.Now()
	j, err := plan(ctx, from, to, table, opts)
	if err == nil {
		j.firstRun = began // a resume replaces it with the first run's, from the checkpoint
	}
	if err != nil {
		return Stats{}, err
	}
	if err := j.start(ctx); err != nil {
		return Stats{}, err
	}
	if err := j.finish(ctx, j.copyRows(ctx)); err != nil {
		return j.stats(began), err
	}
	if err := to.DeleteTable(ctx, j.cp.Name()); err != nil && !errors.Is(err, client.ErrTableNotFound) {
		return j.stats(began), fmt.Errorf("copy %s: drop its checkpoint: %w", table, err)
	}
	return j.stats(began), nil
}

// readOptions are the source reads of a copy with opts.
func (o Options) readOptions() []client.ReadOption {
	ro := []client.ReadOption{client.BatchSize(4096)} // a copy reads whole buckets: fewer, larger round trips
	if o.AllVersions {
		ro = append(ro, client.MaxVersions(math.MaxInt32))
	}
	if !o.Since.IsZero() {
		ro = append(ro, client.TimeRange(o.Since.UnixMilli()+1, 0))
	}
	return ro
}

// job is one Copy call's state.
type job struct {
	from, to  *client.Client
	table, as string
	opts      Options
	src       client.TableAPI
	buckets   int
	cfg       client.TableConfig // the source's
	target    interface {        // a Table, or the fenced target
		Import(ctx context.Context, rows iter.Seq2[client.ImportRow, error], opts client.ImportOptions) (client.ImportStats, error)
	}
	fenced     *client.ExclusiveTable // the target under this copy's fence, if it has indexes
	created    bool
	firstRun   time.Time     // when the copy's first run began: the next catch-up's Since, less ClockSkew
	cp         *client.Table // the checkpoint
	rows       atomic.Int64
	cells      atomic.Int64
	done       atomic.Int64 // buckets done
	progressMu sync.Mutex
	built      []string

	// The plan: buckets is len(part.Buckets), all of the source's or its shard's.
	part   shardplan.Part
	asked  client.Range // Options.Range as given; opts.Range is its part in the shard's range
	absent bool         // the target was not there when the copy was planned
}

func (j *job) stats(began time.Time) Stats {
	return Stats{Rows: j.rows.Load(), Cells: j.cells.Load(), Buckets: j.buckets, Created: j.created,
		Indexes: j.built, Elapsed: time.Since(began), Since: j.nextSince()}
}

// nextSince is the next catch-up pass's Since: the first run's start, less the clock skew.
func (j *job) nextSince() time.Time {
	if j.firstRun.IsZero() {
		return time.Time{}
	}
	return j.firstRun.Add(-cmp.Or(j.opts.ClockSkew, DefaultClockSkew))
}

func (j *job) progress() {
	if j.opts.Progress == nil {
		return
	}
	j.progressMu.Lock()
	defer j.progressMu.Unlock()
	j.opts.Progress(Progress{Rows: j.rows.Load(), Buckets: int(j.done.Load()), Total: j.buckets})
}

// copyRows copies every bucket of the part not done yet, Workers at once.
func (j *job) copyRows(ctx context.Context) error {
	states, err := j.readCheckpoint(ctx)
	if err != nil {
		return err
	}
	for _, s := range states {
		if s.done {
			j.done.Add(1)
		}
	}
	j.progress()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(j.opts.Workers)
	for i, s := range states {
		if s.done {
			continue
		}
		b := j.part.Buckets[i]
		g.Go(func() error { return j.copyBucket(gctx, b, s.cursor) })
	}
	return g.Wait()
}

// copyBucket copies one source bucket from after cursor (nil: its start), a chunk at a time, and
// records its cursor after each chunk is written. Reading goes on while a chunk is written: each
// chunk is what was read meanwhile, at least minChunk rows (unless the bucket ends) and at most
// ChunkRows, so the first write starts early and the writes keep up with the reads.
func (j *job) copyBucket(ctx context.Context, bucket int, cursor []byte) error {
	ro := append(j.opts.readOptions(), client.Buckets(bucket))
	if cursor != nil {
		ro = append(ro, client.ResumeAfter(cursor))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows := make(chan client.Row, j.opts.ChunkRows)
	var readErr error
	go func() {
		defer close(rows)
		for row, err := range j.src.Scan(ctx, j.opts.Range, ro...) {
			if err != nil {
				readErr = err
				return
			}
			select {
			case rows <- row:
			case <-ctx.Done():
				return
			}
		}
	}()
	stop := func(err error) error {
		cancel() // the reader ends, and closes rows
		for range rows {
		}
		return err
	}
	minChunk := min(j.opts.ChunkRows, 500)
	for {
		chunk, more := nextChunk(rows, minChunk, j.opts.ChunkRows)
		if len(chunk) > 0 {
			if err := j.write(ctx, chunk); err != nil {
				return stop(fmt.Errorf("copy %s: bucket %d: %w", j.table, bucket, err))
			}
			if err := j.saveCursor(ctx, bucket, chunk[len(chunk)-1].Key, false); err != nil {
				return stop(err)
			}
			j.progress()
		}
		if !more {
			break
		}
	}
	if readErr != nil { // set before rows was closed
		return fmt.Errorf("copy %s: bucket %d: %w", j.table, bucket, readErr)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("copy %s: bucket %d: %w", j.table, bucket, err)
	}
	if err := j.saveCursor(ctx, bucket, nil, true); err != nil {
		return err
	}
	j.done.Add(1)
	j.progress()
	return nil
}

// nextChunk takes from rows at least least rows (fewer when rows closes), then whatever more is
// there at once, up to most; more is false once rows is closed and drained.
func nextChunk(rows <-chan client.Row, least, most int) (chunk []client.Row, more bool) {
	for len(chunk) < least {
		r, ok := <-rows
		if !ok {
			return chunk, false
		}
		chunk = append(chunk, r)
	}
	for len(chunk) < most {
		select {
		case r, ok := <-rows:
			if !ok {
				return chunk, false
			}
			chunk = append(chunk, r)
		default:
			return chunk, true
		}
	}
	return chunk, true
}

// write imports rows into the target; a row that could not be written fails the copy, whose
// checkpoint then still holds the chunk's start.
func (j *job) write(ctx context.Context, rows []client.Row) error {
	var cells int64
	in := func(yield func(client.ImportRow, error) bool) {
		for _, r := range rows {
			cells += int64(len(r.Cells))
			if !yield(client.ImportRow{Mutation: client.Mutation{Key: r.Key, Cells: r.Cells}}, nil) {
				return
			}
		}
	}
	var failed []error
	stats, err := j.target.Import(ctx, in, client.ImportOptions{
		Workers:   j.opts.Workers,
		OnFailure: func(f client.FailedRow) { failed = append(failed, f.Err) },
	})
	if err != nil {
		return err
	}
	if stats.Failed > 0 {
		return fmt.Errorf("%d of %d rows not written, the first: %w", stats.Failed, len(rows), failed[0])
	}
	j.rows.Add(stats.Written)
	j.cells.Add(cells)
	return nil
}

// finish releases the target's fence, which makes its indexes exact and active, and verifies them.
// On an error before (fail), it only stops renewing the fence's lease: a resume takes it over.
func (j *job) finish(ctx context.Context, fail error) error {
	if j.fenced == nil {
		return fail
	}
	if fail != nil {
		cctx, cancel := context.WithCancel(ctx)
		cancel() // no repair now: the resume's release does it
		_ = j.fenced.Release(cctx)
		return fail
	}
	if err := j.during(ctx, PhaseIndexes, "", func() error { return j.fenced.Release(ctx) }); err != nil {
		return fmt.Errorf("copy %s: release the target's fence (its indexes' repair): %w", j.table, err)
	}
	it, err := j.to.OpenTable(ctx, j.as, nil)
	if err != nil {
		return fmt.Errorf("copy %s: open the target: %w", j.table, err)
	}
	for _, ix := range it.Indexes() {
		var rep client.IndexReport
		err := j.during(ctx, PhaseVerifyIndex, ix.Name(), func() (err error) { rep, err = ix.Verify(ctx); return err })
		if err != nil {
			return fmt.Errorf("copy %s: verify index %s: %w", j.table, ix.Name(), err)
		}
		if n := rep.Problems(); n > 0 {
			return fmt.Errorf("copy %s: index %s on the target: %d problems after the copy: %v", j.table, ix.Name(), n, rep)
		}
		j.built = append(j.built, ix.Name())
	}
	return nil
}
