package migrate

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
	"golang.org/x/sync/errgroup"
)

// ErrNotRepaired: Sync wrote a change and the target's row, read back, still differs from the
// source's (a writer changed one of them meanwhile, or the target's store hid the cells written).
var ErrNotRepaired = errors.New("migrate: rows still differ after the sync's changes")

// SyncOptions control Sync. The zero value makes the newest version of every cell of the target
// equal to the source's, over the whole table.
type SyncOptions struct {
	As          string       // the target's name (default: the source's)
	Range       client.Range // the logical keys synced (default: all)
	AllVersions bool         // compare and repair every version the tables keep, not the newest only
	// DryRun finds the changes and reports them (OnChange) without writing anything, the
	// checkpoint included.
	DryRun bool
	// Resume continues the interrupted sync whose checkpoint the target's store holds; its options
	// must be the ones that sync had.
	Resume bool
	// Chunk is compare.Options.Chunk: the mean rows per hashed chunk.
	Chunk int
	// Shard, when set, repairs only that shard of the source's rows (compare.Options.Shard): Count
	// syncs, started at once on as many machines with the same options, repair the whole table
	// together. Each keeps a checkpoint of its own (ShardCheckpoint) and resumes alone.
	Shard compare.Shard
	// OnChange, when set, is told of each change once it is written (DryRun: once found), in key
	// order, from one goroutine.
	OnChange func(Change)
	// Progress, when set, is told of the rows hashed and the changes made, now and then; its calls
	// do not overlap.
	Progress func(SyncProgress)
}

// SyncProgress is a sync's progress.
type SyncProgress struct {
	RowsFrom, RowsTo int64 // rows hashed, of the source and of the target
	Changes          int64 // target rows changed so far (DryRun: found)
}

// Change is what Sync does to one row of the target to make it equal to the source's: HBase
// SyncTable's doDeletes (DeleteRow, Delete) then doPuts (Put).
type Change struct {
	Key            []byte
	DeleteRow      bool            // the row is deleted whole (then rewritten with Put, if any)
	Delete         []client.Column // columns deleted, every version, before the puts
	DeleteVersions []client.Cell   // versions deleted one by one (no Value), before the puts
	Put            []client.Cell   // the source's cells written, with their timestamps
}

// SyncStats are what a sync did.
type SyncStats struct {
	Compared      int64 // rows of the source hashed
	Changes       int64 // target rows changed (DryRun: to change)
	Puts, Deletes int64 // cells put; columns, versions and rows deleted
	Elapsed       time.Duration
}

// SyncCheckpointTable is the name of the table, on the target's store, that holds the checkpoint
// of a sync into target while it runs; Sync drops it when the sync is done.
func SyncCheckpointTable(target string) string { return target + "__sync" }

// syncBatch is how many changes Sync writes together, then reads back, then checkpoints.
const syncBatch = 256

// repairRounds is how many times Sync writes a batch's rows that still differ when read back.
const repairRounds = 4

// Sync makes the table of to equal to the table of from, whatever their stores and salting, as
// HBase's SyncTable does: it finds the rows that differ as package compare does (both tables hashed
// by ranges, then the differing ranges read again), then writes each differing target row equal to
// the source's: the source's cells put with their timestamps, the columns and rows found only in
// the target deleted. Writes go through the target's public write path, so the target's
// indexes stay exact. Each batch of changes is read back from both sides before its last key goes
// into the checkpoint (SyncCheckpointTable), so an interrupted sync resumes after it (Resume); a
// row that still differs fails the sync (ErrNotRepaired). The checkpoint is made before the first
// batch that is not the last: a sync whose changes fit in one batch makes none (on HBase the
// table's create and drop took most of such a sync's time), and one interrupted then is run again
// whole, which finds equal what it had changed. A period table syncs period by period, into a
// period table of the same interval and time field (syncPeriods).
//
// A column the source lacks is deleted from the target; of a column both have, the target's
// versions the source lacks are deleted one by one (none is put over them), so that on a store
// that keeps delete markers (HBase, until a major compaction) no marker hides the source's cells put
// then. Rows are read back after their writes, and planned and written again while they differ
// (repairRounds). Only where the target cannot delete alone (an indexed column: the row is deleted,
// then written whole) does an HBase marker hide source cells stamped at or before it: a read-back
// that finds them hidden reports ErrNotRepaired.
func Sync(ctx context.Context, from, to *client.Client, table string, opts SyncOptions) (SyncStats, error) {
	began := time.Now()
	as := cmp.Or(opts.As, table)
	fail := func(err error) error { return fmt.Errorf("sync %s: %w", table, err) }
	if (from == to || from.Backend() == to.Backend()) && as == table {
		return SyncStats{}, fail(fmt.Errorf("%w (give the target another name, As)", ErrSameTable))
	}
	if err := opts.Shard.Check(); err != nil {
		return SyncStats{}, fail(fmt.Errorf("shard %s: %w", opts.Shard, err))
	}
	if meta, err := from.Backend().TableMeta(ctx, table); err == nil && periods.IsTable(meta) {
		return syncPeriods(ctx, from, to, table, opts)
	}
	src, scfg, err := openSynced(ctx, from, table)
	if err != nil {
		return SyncStats{}, fail(err)
	}
	dst, dcfg, err := openSynced(ctx, to, as)
	if err != nil {
		return SyncStats{}, fail(fmt.Errorf("target %s: %w", as, err))
	}
	if got, want := schemaText(dcfg), schemaText(scfg); got != want {
		return SyncStats{}, fail(fmt.Errorf("%w: target %s has key schema %s, the source's is %s", client.ErrInvalidArgument, as, got, want))
	}
	s := &syncer{src: src, dst: dst, opts: opts, table: table, whole: indexedColumns(dcfg)}
	s.ropts = syncReadOptions(opts)
	r := opts.Range
	if !opts.DryRun {
		j := &job{to: to, table: table, as: as, cfg: scfg, opts: Options{Range: opts.Range, AllVersions: opts.AllVersions, Resume: opts.Resume, Shard: opts.Shard}}
		s.cp, s.cursor, s.makeCheckpoint, err = j.syncCheckpoint(ctx, SyncCheckpointTable(as))
		if err != nil {
			return SyncStats{}, fail(err)
		}
		if s.cursor != nil {
			r.Start = keys.Successor(s.cursor) // every difference up to the cursor is repaired
		}
	}
	var cst compare.Stats
	copts := compare.Options{Chunk: opts.Chunk, AllVersions: opts.AllVersions, Stats: &cst, Progress: s.hashed, Shard: opts.Shard}
	err = s.run(ctx, compare.Tables(ctx, src, dst, r, copts))
	s.st.Compared, s.st.Elapsed = cst.RowsA, time.Since(began)
	if err != nil {
		return s.st, fail(err)
	}
	if s.cp != nil {
		if err := to.DeleteTable(ctx, s.cp.Name()); err != nil && !errors.Is(err, client.ErrTableNotFound) {
			return s.st, fail(fmt.Errorf("drop its checkpoint: %w", err))
		}
	}
	return s.st, nil
}

// indexedColumns reports the columns of cfg's indexes, as parts or covered: a table with indexes
// deletes them only with their row.
func indexedColumns(cfg client.TableConfig) func(client.Column) bool {
	return func(c client.Column) bool {
		for _, ix := range cfg.Indexes {
			for _, p := range ix.Parts {
				if p.Column.Family != "" && p.Column == c {
					return true
				}
			}
			for _, cov := range ix.Covered {
				if cov.Family == c.Family && (cov.Qualifier == "" || cov.Qualifier == c.Qualifier) {
					return true
				}
			}
		}
		return false
	}
}

// syncedTable is what Sync reads and writes: a Table.
type syncedTable interface {
	compare.Source
	Apply(ctx context.Context, muts []client.Mutation) ([]error, error)
	GetMany(ctx context.Context, keys [][]byte, opts ...client.ReadOption) ([]client.Row, error)
}

// openSynced opens one side of a sync; its writes keep the table's indexes, if it has any.
func openSynced(ctx context.Context, c *client.Client, name string) (syncedTable, client.TableConfig, error) {
	if meta, err := c.Backend().TableMeta(ctx, name); err == nil && periods.IsTable(meta) {
		return nil, client.TableConfig{}, fmt.Errorf("%w: %s is a period table, the source is not: sync into a plain table", client.ErrInvalidArgument, name)
	}
	cfg, err := c.Describe(ctx, name)
	if err != nil {
		return nil, cfg, err
	}
	t, err := c.OpenTable(ctx, name, nil)
	return t, cfg, err
}

// syncReadOptions are the reads of a sync with opts: every version with AllVersions.
func syncReadOptions(opts SyncOptions) []client.ReadOption {
	if opts.AllVersions {
		return []client.ReadOption{client.MaxVersions(math.MaxInt32)}
	}
	return nil
}

// syncer is one Sync call's state.
type syncer struct {
	src, dst syncedTable
	opts     SyncOptions
	table    string
	ropts    []client.ReadOption
	whole    func(client.Column) bool // the target's columns that are deleted only with their row
	cp       *client.Table            // nil for a dry run, and until makeCheckpoint made it
	// makeCheckpoint creates cp (nil: a dry run, or cp was there, the sync resumed).
	makeCheckpoint func(context.Context) (*client.Table, error)
	cursor         []byte
	st             SyncStats
	progressMu     sync.Mutex
	rowsA          int64
	rowsB          int64
}

// hashed is compare's progress, passed on; compare may call it from both sides at once.
func (s *syncer) hashed(a, b int64) {
	if s.opts.Progress == nil {
		return
	}
	s.progressMu.Lock()
	defer s.progressMu.Unlock()
	s.rowsA, s.rowsB = a, b
	s.opts.Progress(SyncProgress{RowsFrom: a, RowsTo: b, Changes: s.st.Changes})
}

// run turns each difference into a change and writes them a batch at a time.
func (s *syncer) run(ctx context.Context, diffs iter.Seq2[compare.Difference, error]) error {
	var batch []Change
	for d, err := range diffs {
		if err != nil {
			return err
		}
		batch = append(batch, planChange(d, s.opts.AllVersions, s.whole))
		if len(batch) == syncBatch {
			if err := s.apply(ctx, batch, false); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return s.apply(ctx, batch, true)
}

// planChange is the change that makes d's target row (B) equal to its source row (A); allVersions
// says whether the rows were read with every version. A column the source lacks is deleted whole. A
// target version of a column the source has is deleted alone (so no marker of HBase's hides the
// source's older versions put then), unless a put of the source's covers it: a version of the same
// stamp, or, with the newest version only, any newer one. The source's cells the target lacks are
// put. A column whole says the target cannot delete alone (an indexed table's indexed and covered
// columns) is deleted with its row, and all the source's cells put again.
func planChange(d compare.Difference, allVersions bool, whole func(client.Column) bool) Change {
	ch := Change{Key: d.Key}
	switch d.Kind {
	case compare.OnlyInA:
		ch.Put = d.A.Cells
		return ch
	case compare.OnlyInB:
		ch.DeleteRow = true
		return ch
	}
	onlyA, onlyB := compare.CellDiff(d.A.Cells, d.B.Cells)
	col := func(c client.Cell) client.Column { return client.Column{Family: c.Family, Qualifier: c.Qualifier} }
	type version struct {
		col client.Column
		ts  int64
	}
	srcNewest := map[client.Column]int64{}
	srcVersions := map[version]bool{}
	for _, c := range d.A.Cells {
		srcNewest[col(c)] = max(srcNewest[col(c)], c.Timestamp)
		srcVersions[version{col(c), c.Timestamp}] = true
	}
	deleted := map[client.Column]bool{}
	for _, c := range onlyB {
		k := col(c)
		newest, inSource := srcNewest[k]
		switch {
		case deleted[k], srcVersions[version{k, c.Timestamp}], !allVersions && inSource && c.Timestamp < newest:
			continue // put over, or hidden under a put
		case whole(k):
			return Change{Key: d.Key, DeleteRow: true, Put: d.A.Cells}
		case !inSource:
			deleted[k] = true
			ch.Delete = append(ch.Delete, k)
		default:
			ch.DeleteVersions = append(ch.DeleteVersions, client.Cell{Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp})
		}
	}
	ch.Put = onlyA
	return ch
}

// apply writes a batch of changes, reads the rows back from both sides, and then records the
// batch's last key in the checkpoint, unless it is the last batch: the checkpoint is dropped next.
// A row that still differs is planned again from what was read back and written again, up to
// repairRounds writes in all: with the newest versions only, a version deleted from the target
// may uncover an older one that differs too. A dry run only reports the changes.
func (s *syncer) apply(ctx context.Context, batch []Change, last bool) error {
	if len(batch) == 0 {
		return nil
	}
	if s.opts.DryRun {
		s.report(batch)
		return nil
	}
	if s.cp == nil && !last {
		// Before the batch's writes: once they began, an interrupted sync must be resumable.
		cp, err := s.makeCheckpoint(ctx)
		if err != nil {
			return err
		}
		s.cp = cp
	}
	round, at := batch, make([]int, len(batch)) // this round's changes, and their places in batch
	for i := range at {
		at[i] = i
	}
	for n := 1; ; n++ {
		if err := s.write(ctx, round); err != nil {
			return err
		}
		still, err := s.confirm(ctx, round)
		if err != nil {
			return err
		}
		if len(still) == 0 {
			break
		}
		if n == repairRounds {
			return fmt.Errorf("%w: %d of %d rows written, the first at key %q", ErrNotRepaired, len(still), len(batch), still[0].Key)
		}
		next, nextAt := make([]Change, 0, len(still)), make([]int, 0, len(still))
		for _, d := range still {
			i := at[slices.IndexFunc(round, func(ch Change) bool { return bytes.Equal(ch.Key, d.Key) })]
			again := planChange(d, s.opts.AllVersions, s.whole)
			ch := &batch[i]
			ch.DeleteRow = ch.DeleteRow || again.DeleteRow
			ch.Delete = append(ch.Delete, again.Delete...)
			ch.DeleteVersions = append(ch.DeleteVersions, again.DeleteVersions...)
			ch.Put = append(ch.Put, again.Put...)
			next, nextAt = append(next, again), append(nextAt, i)
		}
		round, at = next, nextAt
	}
	if !last { // cp was made, or opened, before the batch's writes
		if err := s.cp.Put(ctx, []byte(jobKey), client.Cell{Family: client.DefaultFamily, Qualifier: qualCursor, Value: batch[len(batch)-1].Key}); err != nil {
			return fmt.Errorf("save the checkpoint: %w", err)
		}
	}
	s.report(batch)
	return nil
}

// write applies changes to the target, the deletes first (a row rewritten is deleted before its
// cells are put); any row not written fails the sync.
func (s *syncer) write(ctx context.Context, changes []Change) error {
	var dels, puts []client.Mutation
	for _, ch := range changes {
		switch {
		case ch.DeleteRow:
			dels = append(dels, client.Mutation{Key: ch.Key, Delete: true})
		case len(ch.Delete)+len(ch.DeleteVersions) > 0:
			m := client.Mutation{Key: ch.Key, Delete: true}
			for _, c := range ch.Delete {
				m.Cells = append(m.Cells, client.Cell{Family: c.Family, Qualifier: c.Qualifier})
			}
			m.Cells = append(m.Cells, ch.DeleteVersions...)
			dels = append(dels, m)
		}
		if len(ch.Put) > 0 {
			puts = append(puts, client.Mutation{Key: ch.Key, Cells: ch.Put})
		}
	}
	for _, muts := range [][]client.Mutation{dels, puts} {
		if len(muts) == 0 {
			continue
		}
		rowErrs, err := s.dst.Apply(ctx, muts)
		if err != nil {
			return fmt.Errorf("write the target: %w", err)
		}
		for i, e := range rowErrs {
			if e != nil {
				return fmt.Errorf("write the target: row %d of %d: %w", i+1, len(muts), e)
			}
		}
	}
	return nil
}

// confirm reads the changes' rows back from both sides, at once, and returns those that still
// differ.
func (s *syncer) confirm(ctx context.Context, changes []Change) ([]compare.Difference, error) {
	ks := make([][]byte, len(changes))
	for i, ch := range changes {
		ks[i] = ch.Key
	}
	var a, b []client.Row
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		if a, err = s.src.GetMany(gctx, ks, s.ropts...); err != nil {
			return fmt.Errorf("read the source back: %w", err)
		}
		return nil
	})
	g.Go(func() (err error) {
		if b, err = s.dst.GetMany(gctx, ks, s.ropts...); err != nil {
			return fmt.Errorf("read the target back: %w", err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var still []compare.Difference
	for i := range ks {
		onlyA, onlyB := compare.CellDiff(a[i].Cells, b[i].Cells)
		if len(onlyA)+len(onlyB) == 0 {
			continue
		}
		d := compare.Difference{Kind: compare.Changed, Key: ks[i], A: a[i], B: b[i]}
		switch {
		case len(a[i].Cells) == 0:
			d.Kind = compare.OnlyInB
		case len(b[i].Cells) == 0:
			d.Kind = compare.OnlyInA
		}
		still = append(still, d)
	}
	return still, nil
}

// report counts a batch and tells OnChange of it.
func (s *syncer) report(batch []Change) {
	for _, ch := range batch {
		s.st.Changes++
		s.st.Puts += int64(len(ch.Put))
		s.st.Deletes += int64(len(ch.Delete) + len(ch.DeleteVersions))
		if ch.DeleteRow {
			s.st.Deletes++
		}
		if s.opts.OnChange != nil {
			s.opts.OnChange(ch)
		}
	}
	if s.opts.Progress != nil {
		s.progressMu.Lock()
		s.opts.Progress(SyncProgress{RowsFrom: s.rowsA, RowsTo: s.rowsB, Changes: s.st.Changes})
		s.progressMu.Unlock()
	}
}

// syncCheckpoint opens the checkpoint of a sync (of its shard) into j.as, base its unsharded name:
// the interrupted sync's when resuming (with its cursor, the last key repaired), else none yet and
// the function that creates it; a new sync over an interrupted one is refused (ErrInterrupted).
func (j *job) syncCheckpoint(ctx context.Context, base string) (*client.Table, []byte, func(context.Context) (*client.Table, error), error) {
	fp := fmt.Sprintf("sync table=%s as=%s start=%x end=%x all-versions=%t", j.table, j.as, j.opts.Range.Start, j.opts.Range.End, j.opts.AllVersions)
	if j.opts.Shard.Sharded() { // an unsharded checkpoint's words stay as they were
		fp += " shard=" + j.opts.Shard.String()
	}
	if err := checkShardCheckpoints(ctx, j.to, "sync", base, j.opts.Shard, j.opts.Resume); err != nil {
		return nil, nil, nil, err
	}
	name := ShardCheckpoint(base, j.opts.Shard)
	cp, err := j.to.OpenTable(ctx, name, nil)
	switch {
	case err == nil && !j.opts.Resume:
		return nil, nil, nil, fmt.Errorf("%w: %s holds an interrupted sync's checkpoint; resume it (--resume), or drop that table to start again", ErrInterrupted, name)
	case err == nil:
		row, err := cp.Get(ctx, []byte(jobKey))
		if err != nil && !errors.Is(err, client.ErrNotFound) {
			return nil, nil, nil, fmt.Errorf("read the checkpoint: %w", err)
		}
		if have := string(cellValue(row.Cells, qualOptions)); have != fp {
			return nil, nil, nil, fmt.Errorf("%w: the checkpoint was made with %s; this resume has %s", ErrResumeMismatch, j.showOptions(have), j.showOptions(fp))
		}
		return cp, bytes.Clone(cellValue(row.Cells, qualCursor)), nil, nil
	case errors.Is(err, client.ErrTableNotFound) && j.opts.Resume:
		return nil, nil, nil, fmt.Errorf("%w: no checkpoint %s on the target's store: nothing to resume", client.ErrInvalidArgument, name)
	case !errors.Is(err, client.ErrTableNotFound):
		return nil, nil, nil, fmt.Errorf("open the checkpoint: %w", err)
	}
	create := func(ctx context.Context) (*client.Table, error) {
		return j.createCheckpoint(ctx, name, client.Cell{Family: client.DefaultFamily, Qualifier: qualOptions, Value: []byte(fp)})
	}
	return nil, nil, create, nil
}
