package client

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
)

// Import writes rows as Table.Import does (batched per bucket, parallel, retried, every row
// reported), but as plain batched writes, with no compare-and-set: each batch's rows, with a new
// version each, whose index entries, verified, and the deletes of the entries the rows moved away
// from, then wait in a buffer to be written sorted by key, when it holds ExclusiveOptions.EntryBuffer
// bytes and when Import ends (the indexes are building until Release, so an entry may land after
// its row). Old rows are read unless the table was empty when the fence was taken and this is the
// fence's first Import. A unique index's entry is refused (ErrUniqueViolation, that row alone) when
// another row of this holder's writes, or a row of the table, has its key. Whatever a failed write
// or a crash leaves (an entry without its row, a row without its entry, a stale entry), Release
// repairs, and a take-over's Release after a crash.
//
// Memory: besides Import's own, the entry buffer, and 32 bytes per unique entry written, to tell two
// rows of one job claiming one key apart.
func (x *ExclusiveTable) Import(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions) (ImportStats, error) {
	empty := x.empty.Swap(false) // a later Import must read the rows this one writes
	if x.importing.Add(1) > 1 {
		x.dirty.Store(true) // another Import at once: a key both write is not seen as moved
	}
	defer x.importing.Add(-1)
	stats, err := x.it.t.importRows(ctx, rows, opts, func(ctx context.Context, batch []route.Pending) ([]error, error) {
		return x.writeBatch(ctx, batch, empty)
	}, nil)
	x.flush(ctx) // this Import's entries, and any another Import left
	if err != nil || stats.Failed > 0 || stats.Duplicates > 0 {
		x.dirty.Store(true) // a row's earlier entries, or a failed batch's
	}
	return stats, err
}

// exclusiveRow is one row's writes under the fence.
type exclusiveRow struct {
	main    Mutation
	entries []Mutation // the entry each index (by position) gets; a nil Key: none
	leaves  [][]byte   // the entry each index loses; nil: none
}

// writeBatch writes one Import batch under the fence; empty: the table held no row before this
// Import, so there is no old row to read. Its result is Table.Apply's.
func (x *ExclusiveTable) writeBatch(ctx context.Context, batch []route.Pending, empty bool) ([]error, error) {
	if err := x.lostErr(); err != nil {
		return nil, err
	}
	it := x.it
	errs := make([]error, len(batch))
	old := make([][]Cell, len(batch))
	if !empty {
		keys := make([][]byte, len(batch))
		for i, r := range batch {
			keys[i] = r.Row.Key
		}
		rows, err := it.t.GetMany(ctx, keys)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			old[i] = rows[i].Cells
		}
	}
	plans := make([]exclusiveRow, len(batch))
	var a planArena
	for i, r := range batch {
		if plans[i], errs[i] = x.plan(r.Logical(), old[i], &a); errs[i] != nil {
			errs[i] = fmt.Errorf("input row %d: %w", r.Index, errs[i])
		}
	}
	if err := x.checkUnique(ctx, plans, errs, empty); err != nil {
		return nil, err
	}
	x.writeRows(ctx, plans, errs)
	for i, p := range plans {
		if errs[i] == nil {
			continue
		}
		x.dirty.Store(true)
		for k, e := range p.entries { // a row that failed holds no unique key: a retry may claim it
			if ix := x.it.indexes[k]; ix.cfg.Unique && e.Key != nil {
				x.claims.Release(ix.cfg.Name, e.Key, p.main.Key)
			}
		}
	}
	return route.RowErrors(errs), nil
}

// plan works out a row's writes: its main mutation with a new version, and per index the entry it
// gets (verified, with that version) and the one it leaves. Their slices come from a, the batch's.
func (x *ExclusiveTable) plan(m Mutation, old []Cell, a *planArena) (exclusiveRow, error) {
	it := x.it
	if _, err := it.indexedMutation(m); err != nil {
		return exclusiveRow{}, err
	}
	n := len(it.indexes)
	p := exclusiveRow{entries: a.mutations(n), leaves: a.keys(n)}
	merged := indexproto.MergeCells(old, m)
	tok, st := indexproto.NewStatus(statusVerified)
	for k, ix := range it.indexes {
		var (
			oldKey []byte
			oldOK  bool
			err    error
		)
		if len(old) > 0 { // else no entry to leave
			if oldKey, oldOK, err = ix.EntryKey(m.Key, old); err != nil {
				return p, err
			}
		}
		newKey, newOK, err := ix.EntryKey(m.Key, merged)
		if err != nil {
			return p, err
		}
		if newOK {
			p.entries[k] = Mutation{Key: newKey, Cells: ix.def.AppendEntryCells(a.cells(3), m.Key, st, merged)}
		}
		if oldOK && (!newOK || !bytes.Equal(oldKey, newKey)) {
			p.leaves[k] = oldKey
		}
	}
	if !m.Delete {
		ts := int64(0)
		if len(m.Cells) > 0 {
			ts = m.Cells[0].Timestamp // a repeat's version is as much newer as its cells
		}
		cells := append(a.cells(len(m.Cells)+1), m.Cells...)
		m.Cells = append(cells, Cell{Family: it.indexFamily, Qualifier: versionQual, Value: tok, Timestamp: ts})
	}
	p.main = m
	return p, nil
}

// planArena serves one batch's plans from a few allocations instead of several per row: a first
// load plans every row of its input.
type planArena struct {
	cellBuf []Cell
	mutBuf  []Mutation
	keyBuf  [][]byte
}

// cells is an empty slice with room for n cells; appending more than n reallocates it.
func (a *planArena) cells(n int) []Cell         { return carve(&a.cellBuf, n, 2048)[:0] }
func (a *planArena) mutations(n int) []Mutation { return carve(&a.mutBuf, n, 512) }
func (a *planArena) keys(n int) [][]byte        { return carve(&a.keyBuf, n, 512) }

// carve returns the next n elements of *buf's spare room, of capacity n, first allocating a chunk of
// max(n, chunk) when the room is short.
func carve[T any](buf *[]T, n, chunk int) []T {
	if cap(*buf)-len(*buf) < n {
		*buf = make([]T, 0, max(n, chunk))
	}
	l := len(*buf)
	*buf = (*buf)[:l+n]
	return (*buf)[l : l+n : l+n]
}

// checkUnique refuses, in errs, the rows whose unique entry another row holds: a row of this
// holder's writes (its claims), or, where the table held rows, a row of the table that still has
// that key. An error fails the whole batch.
func (x *ExclusiveTable) checkUnique(ctx context.Context, plans []exclusiveRow, errs []error, empty bool) error {
	for k, ix := range x.it.indexes {
		if !ix.cfg.Unique {
			continue
		}
		var keys [][]byte
		var at []int
		for i, p := range plans {
			e := p.entries[k]
			if errs[i] != nil || e.Key == nil {
				continue
			}
			if !x.claims.Claim(ix.cfg.Name, e.Key, p.main.Key) {
				errs[i] = fmt.Errorf("index %s key %s: %w (a row of this job)", ix.cfg.Name, ix.table.printKey(e.Key), ErrUniqueViolation)
				continue
			}
			keys, at = append(keys, e.Key), append(at, i)
		}
		if empty || len(keys) == 0 {
			continue
		}
		held, err := ix.table.GetMany(ctx, keys)
		if err != nil {
			return err
		}
		var owners [][]byte
		var ownerOf []int
		for j, h := range held {
			owner := ix.def.MainKey(keys[j], h.Cells)
			if len(owner) > 0 && !bytes.Equal(owner, plans[at[j]].main.Key) {
				owners, ownerOf = append(owners, owner), append(ownerOf, j)
			}
		}
		if len(owners) == 0 {
			continue
		}
		rows, err := x.it.t.GetMany(ctx, owners)
		if err != nil {
			return err
		}
		for k, row := range rows {
			j := ownerOf[k]
			if key, ok, err := ix.EntryKey(owners[k], row.Cells); err == nil && ok && bytes.Equal(key, keys[j]) {
				i := at[j]
				x.claims.Release(ix.cfg.Name, keys[j], plans[i].main.Key)
				errs[i] = fmt.Errorf("index %s key %s: %w (row %s)", ix.cfg.Name, ix.table.printKey(keys[j]), ErrUniqueViolation, x.it.t.printKey(owners[k]))
			}
		}
	}
	return nil
}

// writeRows writes the live rows of plans and hands their entries, and the deletes of the entries
// they left, to x's buffer, which writes them sorted by key (entryBuffer). A row whose write failed
// is reported failed (written again by a retry) and hands nothing over. It records each row's
// outcome in errs.
func (x *ExclusiveTable) writeRows(ctx context.Context, plans []exclusiveRow, errs []error) {
	var mains []Mutation
	var rows []int
	for i, p := range plans {
		if errs[i] == nil {
			mains, rows = append(mains, p.main), append(rows, i)
		}
	}
	if len(mains) == 0 {
		return
	}
	rowErrs, err := x.it.t.Apply(ctx, mains)
	for j, i := range rows {
		if err != nil {
			errs[i] = fmt.Errorf("row: %w", err)
		} else if rowErrs != nil && rowErrs[j] != nil {
			errs[i] = fmt.Errorf("row: %w", rowErrs[j])
		}
	}
	n := len(x.it.indexes)
	puts, dels := make([][]Mutation, n), make([][]Mutation, n)
	for k := range n {
		for i, p := range plans {
			if errs[i] != nil {
				continue
			}
			if e := p.entries[k]; e.Key != nil {
				puts[k] = append(puts[k], e)
			}
			if key := p.leaves[k]; key != nil {
				dels[k] = append(dels[k], Mutation{Key: key, Delete: true})
			}
		}
	}
	if x.entries.add(puts, dels) {
		x.flush(ctx)
	}
}

// repair makes every index of x exact against the main table, under the fence, with plain batched
// writes: an entry whose row does not have its key goes, one whose status or covered values are not
// its row's is written again, and a row without its entry gets it.
func (x *ExclusiveTable) repair(ctx context.Context) error {
	indexes := slices.DeleteFunc(slices.Clone(x.it.indexes), func(ix *Index) bool { return slices.Contains(x.skip, ix.cfg.Name) })
	for _, ix := range indexes {
		if err := x.dropStale(ctx, ix, nil); err != nil {
			return err
		}
	}
	_, err := x.fillEntries(ctx, indexes, false, nil)
	return err
}

// dropStale deletes ix's entries whose row does not have their key, and writes again the ones whose
// status or covered values are not their row's. It counts the entries it checked in n.
func (x *ExclusiveTable) dropStale(ctx context.Context, ix *Index, n *atomic.Int64) error {
	it := x.it
	err := ix.table.rt.EachBucketBatch(ctx, func(ctx context.Context, entries []Row) error {
		var fix []Mutation
		var mains [][]byte
		var at []int // the entry of each main key
		for i, e := range entries {
			if mk := ix.def.MainKey(e.Key, e.Cells); mk != nil {
				mains, at = append(mains, mk), append(at, i)
			} else {
				fix = append(fix, Mutation{Key: e.Key, Delete: true}) // no row's
			}
		}
		rows, err := it.t.GetMany(ctx, mains)
		if err != nil {
			return err
		}
		for j, i := range at {
			e := entries[i]
			key, ok, err := ix.EntryKey(mains[j], rows[j].Cells)
			switch {
			case err != nil || !ok || !bytes.Equal(key, e.Key):
				fix = append(fix, Mutation{Key: e.Key, Delete: true})
			default:
				v, _ := indexproto.Newest(rows[j].Cells, it.versionColumn())
				if want := ix.def.EntryCells(mains[j], indexproto.Status(statusVerified, v), rows[j].Cells); !sameEntry(e.Cells, want) {
					fix = append(fix, Mutation{Key: e.Key, Cells: want})
				}
			}
		}
		if n != nil {
			n.Add(int64(len(entries)))
		}
		return applyAll(ctx, ix.table, fix)
	}, func(int) {})
	if err != nil {
		return fmt.Errorf("repair index %s: %w", ix.cfg.Name, err)
	}
	return nil
}

// fillEntries reads the main table once and writes each row's entry of every index of indexes, as
// plain batches: all of them when blind (a new index, whose table is empty), else the ones missing
// (read first). It returns the rows read; progress, when set, hears when the reading begins (0
// buckets done) and of each bucket done.
func (x *ExclusiveTable) fillEntries(ctx context.Context, indexes []*Index, blind bool, progress func(rows int64, buckets, total int)) (int64, error) {
	it := x.it
	var rows, done atomic.Int64
	var mu sync.Mutex // progress is called by one bucket at a time
	report := func(total int) {
		mu.Lock()
		defer mu.Unlock()
		if progress != nil {
			progress(rows.Load(), int(done.Add(1)), total)
		}
	}
	if progress != nil {
		progress(0, 0, it.t.Salter().Buckets())
	}
	err := it.t.rt.EachBucketBatch(ctx, func(ctx context.Context, batch []Row) error {
		for _, ix := range indexes {
			var fix []Mutation
			for _, row := range batch {
				if k, ok, err := ix.EntryKey(row.Key, row.Cells); err != nil {
					return fmt.Errorf("row %s: %w", it.t.printKey(row.Key), err)
				} else if ok {
					v, _ := indexproto.Newest(row.Cells, it.versionColumn())
					fix = append(fix, Mutation{Key: k, Cells: ix.def.EntryCells(row.Key, indexproto.Status(statusVerified, v), row.Cells)})
				}
			}
			if !blind && len(fix) > 0 {
				var err error
				if fix, err = x.missing(ctx, ix, fix); err != nil {
					return err
				}
			}
			if ix.cfg.Unique {
				for _, m := range fix {
					mk := ix.def.MainKey(m.Key, m.Cells)
					if !x.claims.Claim(ix.cfg.Name, m.Key, mk) {
						return fmt.Errorf("index %s key %s: %w (rows %s and another)", ix.cfg.Name, ix.table.printKey(m.Key), ErrUniqueViolation, it.t.printKey(mk))
					}
				}
			}
			if err := applyAll(ctx, ix.table, fix); err != nil {
				return fmt.Errorf("index %s: %w", ix.cfg.Name, err)
			}
		}
		rows.Add(int64(len(batch)))
		return nil
	}, report)
	return rows.Load(), err
}

// missing returns the entries of want (one per row) that ix's table lacks; an entry of a unique index
// held by another row that has its key too fails with ErrUniqueViolation.
func (x *ExclusiveTable) missing(ctx context.Context, ix *Index, want []Mutation) ([]Mutation, error) {
	keys := make([][]byte, len(want))
	for i, m := range want {
		keys[i] = m.Key
	}
	got, err := ix.table.GetMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	var out []Mutation
	for i, e := range got {
		if len(e.Cells) == 0 {
			out = append(out, want[i])
			continue
		}
		holder := ix.def.MainKey(keys[i], e.Cells)
		if mk := ix.def.MainKey(keys[i], want[i].Cells); !bytes.Equal(holder, mk) {
			return nil, fmt.Errorf("index %s key %s: %w (rows %s and %s)", ix.cfg.Name, ix.table.printKey(keys[i]), ErrUniqueViolation,
				x.it.t.printKey(holder), x.it.t.printKey(mk))
		}
	}
	return out, nil
}

// sameEntry reports whether an entry's cells hold want's values.
func sameEntry(cells, want []Cell) bool {
	return !slices.ContainsFunc(want, func(w Cell) bool {
		return !driverkit.Holds(Condition{Family: w.Family, Qualifier: w.Qualifier, Value: w.Value}, cells)
	})
}

// applyAll applies muts and fails on any row's error.
func applyAll(ctx context.Context, t *Table, muts []Mutation) error {
	if len(muts) == 0 {
		return nil
	}
	rowErrs, err := t.Apply(ctx, muts)
	return cmp.Or(err, errors.Join(rowErrs...))
}
