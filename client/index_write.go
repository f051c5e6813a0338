package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
)

// maxIndexedAttempts bounds how often a write re-reads its row after another writer changed it
// between the read and the data write.
const maxIndexedAttempts = 16

// ErrIndexContention: a write through the index protocol lost its row to other writers
// maxIndexedAttempts times in a row. It is retryable: nothing of it is acknowledged.
var ErrIndexContention = errors.New("brine: row changed by other writers on every attempt")

// indexedMutation reports whether m must go through the index protocol, or fails for a mutation
// the protocol cannot apply atomically with its version bump.
func (it *indexedTable) indexedMutation(m Mutation) (bool, error) {
	touched := false
	for _, ix := range it.indexes {
		if ix.def.Touches(m) {
			touched = true
			if m.Delete && len(m.Cells) > 0 {
				// A row mutation is a put or a delete: the deleted columns and the version column
				// could not change together, and a reader could pair the new version with old values.
				return false, fmt.Errorf("%w: deleting columns of index %q (indexed or covered): delete the row or put new values", backends.ErrInvalidArgument, ix.cfg.Name)
			}
		}
	}
	return touched, nil
}

// entryChange is what one write does to one index: the entry its row had and the one it will have.
type entryChange struct {
	ix             *Index
	oldKey, newKey []byte
	oldOK, newOK   bool
	cells          []Cell // the new entry's cells
}

func (c entryChange) moves() bool { return c.oldOK && (!c.newOK || !bytes.Equal(c.oldKey, c.newKey)) }

// writeIndexed applies one mutation of an indexed table through the protocol described in the
// package documentation. touch rewrites the row's entries without changing its data (rebuild).
func (it *indexedTable) writeIndexed(ctx context.Context, m Mutation, touch bool) error {
	_, err := it.writeDerived(ctx, m.Key, touch, false, func([]Cell) (Mutation, bool, error) { return m, true, nil })
	return err
}

// writeDerived is the protocol for a write worked out from the row it reads: derive returns the
// mutation to apply to the row as read (key: the row's logical key), or false to write nothing.
// Each attempt derives again from the row it read, and its data write applies only while the row's
// version is the one read, so the mutation lands on exactly the row it was derived from. A write
// whose derive reads columns no index uses (conditional) waits out a column delete's mark; a plain
// one need not, since what it plans from (indexed and covered columns) no column delete changes.
func (it *indexedTable) writeDerived(ctx context.Context, key []byte, touch, conditional bool, derive func(row []Cell) (Mutation, bool, error)) (applied bool, err error) {
	if err := it.t.checkKey(key); err != nil {
		return false, err
	}
	for attempt := range maxIndexedAttempts {
		// Step 1: the row as it is, and its version (not one a column delete in flight holds).
		row, err := it.readRow(ctx, key)
		if err != nil {
			return false, err
		}
		if v, _ := indexproto.Newest(row, it.versionColumn()); conditional && indexproto.Marked(v, DefaultIndexGrace) {
			if err := markWait(ctx, attempt); err != nil {
				return false, err
			}
			continue
		}
		m, ok, err := derive(row)
		if err != nil || !ok {
			return false, err
		}
		p, err := it.planIndexed(m, row, touch)
		if err != nil || p.skip {
			return false, err
		}
		ok, err = it.ownVersion(ctx, &p)
		if err != nil {
			return false, err
		}
		if !ok {
			continue // the row changed since step 1
		}
		// Step 2: every entry the write creates or leaves is pending before the data changes.
		if err := it.markPending(ctx, key, p.changes, p.pending, true); err != nil {
			return false, err
		}
		// Step 3: the data, only if no other writer changed the row since step 1.
		applied, err := it.dataWrite(ctx, p)
		if err != nil {
			return false, err
		}
		if !applied {
			continue // the entries left pending are answered from the row and repaired by readers
		}
		it.finish(ctx, p)
		return true, nil
	}
	return false, driverkit.Retryable(fmt.Errorf("%w (%d attempts)", ErrIndexContention, maxIndexedAttempts))
}

// writePlan is one indexed write worked out from the row it read (steps 1 and 2 of the protocol).
type writePlan struct {
	m        Mutation // logical key
	oldV     []byte   // the version read: step 3's condition
	tok      []byte
	pending  []byte
	changes  []entryChange
	skip     bool // a touch of a row that has no data: nothing to index
	dataCell bool // a touch: the data write bumps the version only
}

// planIndexed works out the entries a write of m leaves and creates, given the row's cells.
func (it *indexedTable) planIndexed(m Mutation, old []Cell, touch bool) (writePlan, error) {
	p := writePlan{m: m, tok: indexproto.NewToken(), dataCell: touch}
	if touch && len(indexproto.DataCells(old)) == 0 {
		p.skip = true
		return p, nil
	}
	p.oldV, _ = indexproto.Newest(old, Column{Family: it.indexFamily, Qualifier: versionQual})
	p.pending = indexproto.Status(statusPending, p.tok)
	merged := indexproto.MergeCells(old, m)
	for _, ix := range it.indexes {
		if !touch && !ix.def.Touches(m) {
			continue
		}
		c := entryChange{ix: ix}
		var err error
		if c.oldKey, c.oldOK, err = ix.EntryKey(m.Key, old); err != nil {
			return p, err
		}
		if c.newKey, c.newOK, err = ix.EntryKey(m.Key, merged); err != nil {
			return p, err
		}
		if c.newOK {
			c.cells = ix.def.EntryCells(m.Key, p.pending, merged)
		}
		p.changes = append(p.changes, c)
	}
	return p, nil
}

// ownVersion ends step 1 for a row read without a version (never written, or deleted) that the
// write gives entries: it writes a version of its own, alone, by compare-and-set on its absence, and
// makes it step 3's condition. Step 3 on "no version" could land after other writes created the row
// and deleted it again (a row delete takes the version with it), their steps 2 and 4 having taken
// over and deleted the entries this write's step 2 made: the row would be left without them. A
// version no other write can bring back closes that. A row left with only this version (the write
// died) reads as absent. false: the row changed since step 1; start again.
func (it *indexedTable) ownVersion(ctx context.Context, p *writePlan) (bool, error) {
	if !p.needsVersion() {
		return true, nil
	}
	cm := it.versionMutation(p.m.Key)
	applied, errs := it.t.rt.CheckAndMutateMany(ctx, []backends.CondMutation{cm}) // a batch: it is deferred
	if errs[0] != nil {
		return false, fmt.Errorf("version write: %w", errs[0])
	}
	if applied[0] {
		p.oldV = cm.Mut.Cells[0].Value
	}
	return applied[0], nil
}

// needsVersion reports whether p must get a version of its own before step 2 (ownVersion).
func (p *writePlan) needsVersion() bool {
	return len(p.oldV) == 0 && slices.ContainsFunc(p.changes, func(c entryChange) bool { return c.newOK })
}

// versionMutation writes a new version alone where the row has none. Its token is not the write's:
// a reader must not take the write's pending entries for landed. It is deferred (not synced on its
// own): step 3's write, to the same row and so the same region, is acknowledged durable only after
// it; if a server crash loses it first, step 3's condition fails and the write starts again.
func (it *indexedTable) versionMutation(key []byte) backends.CondMutation {
	return backends.CondMutation{
		Cond:     Condition{Family: it.indexFamily, Qualifier: versionQual},
		Mut:      Mutation{Key: key, Cells: []Cell{{Family: it.indexFamily, Qualifier: versionQual, Value: indexproto.NewToken()}}},
		Deferred: true,
	}
}

// dataWrite is step 3: the data and the new version, if the row's version is still the one read. It
// goes through the router: during a rebucket the row is copied (version and all) to the new table
// first, and the condition is tested there.
func (it *indexedTable) dataWrite(ctx context.Context, p writePlan) (bool, error) {
	cm := it.dataMutation(p)
	applied, err := it.t.CheckAndMutate(ctx, cm.Cond, cm.Mut)
	if err != nil {
		return false, fmt.Errorf("data write: %w", err)
	}
	return applied, nil
}

// dataMutation is step 3's compare-and-set.
func (it *indexedTable) dataMutation(p writePlan) backends.CondMutation {
	dm := Mutation{Key: p.m.Key, Delete: p.m.Delete && !p.dataCell}
	if dm.Delete {
		dm.Cells = p.m.Cells // a row delete, or (a conditional write's) columns no index uses
	} else {
		dm.Cells = append(dm.Cells, p.m.Cells...)
		dm.Cells = append(dm.Cells, Cell{Family: it.indexFamily, Qualifier: versionQual, Value: p.tok})
	}
	return backends.CondMutation{Cond: Condition{Family: it.indexFamily, Qualifier: versionQual, Value: p.oldV}, Mut: dm}
}

// finish is step 4: verify the new entries, delete the ones left, only if no later writer took them.
func (it *indexedTable) finish(ctx context.Context, p writePlan) {
	s := settleBatches{}
	s.add(p.changes, p.pending, indexproto.Status(statusVerified, p.tok))
	if err := it.sendSettles(ctx, s); err != nil {
		// The write is durable and its entries are answered from the row until repaired.
		it.t.c.core.Logger.WarnContext(ctx, "brine: index entries left pending", "table", it.t.name, "key", it.t.printKey(p.m.Key), "err", err)
	}
}

// markPending is step 2: the old entries moving away are marked pending (if still this row's), the
// new entries written pending (a unique one only if free or stale). With newEntries false the new
// entries are left to the caller, which batches them.
func (it *indexedTable) markPending(ctx context.Context, mainKey []byte, changes []entryChange, pending []byte, newEntries bool) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range changes {
		if c.moves() {
			g.Go(func() error { return c.ix.markLeft(gctx, c.oldKey, mainKey, pending) })
		}
		if c.newOK && newEntries {
			g.Go(func() error {
				if c.ix.cfg.Unique {
					return c.ix.claim(gctx, c.newKey, mainKey, c.cells)
				}
				return c.ix.table.Put(gctx, c.newKey, c.cells...)
			})
		}
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("index write: %w", err)
	}
	return nil
}

// markLeft marks pending the entry at key, which the row mainKey's write leaves. A key cell is a
// condition: the entry is marked only while it is still this row's, and is not made where another
// writer deleted it. An entry without one (a non-unique index's, format 2) is this row's by its key,
// and its mark is a put, which an equality compare-and-set cannot make conditional on the entry
// being there: where another writer's step 4 deleted it, the mark leaves a status alone. No reader
// answers it (the row, read after it, lacks its key), and it goes as any pending entry does: by this
// write's step 4 once its data lands, else by the first reader or repair after the grace.
func (ix *Index) markLeft(ctx context.Context, key, mainKey, pending []byte) error {
	mark := Mutation{Key: key, Cells: []Cell{{Family: indexFamily, Qualifier: statusQual, Value: pending}}}
	if !ix.def.KeyCell {
		return ix.table.Put(ctx, mark.Key, mark.Cells...)
	}
	_, err := ix.table.CheckAndMutate(ctx, Condition{Family: indexFamily, Qualifier: mainKeyQual, Value: mainKey}, mark)
	return err
}

// claim writes a unique entry if its key is free, this row's, or left by a row that no longer has
// it. A pending entry of another row whose write may still land (younger than the grace, its data not
// in the row) holds the key too: two writes claiming one key at once must not both succeed. Each
// claim is a compare-and-set on the exact status read, so two claimers never both take a key.
func (ix *Index) claim(ctx context.Context, key, mainKey []byte, cells []Cell) error {
	for range maxIndexedAttempts {
		holder, err := ix.table.Get(ctx, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		st, _ := indexproto.Newest(holder.Cells, Column{Family: indexFamily, Qualifier: statusQual})
		owner := ix.def.MainKey(key, holder.Cells)
		if len(owner) > 0 && !bytes.Equal(owner, mainKey) {
			row, err := ix.t.t.Get(ctx, owner) // with the version column
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			if k, ok, err := ix.EntryKey(owner, row.Cells); err == nil && ok && bytes.Equal(k, key) {
				return fmt.Errorf("index %s key %s: %w (row %s)", ix.cfg.Name, ix.table.printKey(key), ErrUniqueViolation, ix.t.t.printKey(owner))
			}
			rowV, _ := indexproto.Newest(row.Cells, Column{Family: ix.t.indexFamily, Qualifier: versionQual})
			if len(st) > 0 && st[0] == statusPending && !bytes.Equal(st[1:], rowV) && indexproto.TokenAge(st[1:]) < ix.grace {
				return driverkit.Retryable(fmt.Errorf("index %s key %s: %w (claimed by a write of row %s in flight)", ix.cfg.Name, ix.table.printKey(key), ErrUniqueViolation, ix.t.t.printKey(owner)))
			}
		}
		applied, err := ix.table.CheckAndMutate(ctx, Condition{Family: indexFamily, Qualifier: statusQual, Value: st}, Mutation{Key: key, Cells: cells})
		if err != nil || applied {
			return err
		}
	}
	return driverkit.Retryable(fmt.Errorf("index %s key %s: %w", ix.cfg.Name, ix.table.printKey(key), ErrIndexContention))
}

// settleBatches are step 4's compare-and-sets by index table, for sendSettles.
type settleBatches map[*Index][]backends.CondMutation

// add appends the compare-and-sets of one write's step 4: verify each new entry, delete each entry
// left, each only while it still holds this write's pending status, so a later writer's entry is
// never verified or deleted by an earlier one. They are deferred (not synced on their own): one a
// server crash loses leaves its entry pending, as a writer that died before step 4 does, and readers
// repair it.
func (s settleBatches) add(changes []entryChange, pending, verified []byte) {
	cond := Condition{Family: indexFamily, Qualifier: statusQual, Value: pending}
	for _, c := range changes {
		if c.newOK {
			s[c.ix] = append(s[c.ix], backends.CondMutation{Cond: cond, Deferred: true,
				Mut: Mutation{Key: c.newKey, Cells: []Cell{{Family: indexFamily, Qualifier: statusQual, Value: verified}}}})
		}
		if c.moves() {
			s[c.ix] = append(s[c.ix], backends.CondMutation{Cond: cond, Deferred: true, Mut: Mutation{Key: c.oldKey, Delete: true}})
		}
	}
}

// sendSettles runs step 4: one compare-and-set batch per index table, in parallel. It returns what
// failed; the writes are durable either way, their entries answered from the rows until repaired.
func (it *indexedTable) sendSettles(ctx context.Context, s settleBatches) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for ix, cms := range s {
		wg.Go(func() {
			_, rowErrs := ix.table.rt.CheckAndMutateMany(ctx, cms)
			if err := errors.Join(rowErrs...); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("index %s: %w", ix.cfg.Name, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// applyIndexed is Apply for a table with indexes: mutations that touch an index go through the
// protocol (batched by writeIndexedBatch), deletes of other columns under a mark (deleteColumns,
// one row at a time, in parallel), the other puts, stamped, through the plain batched path.
func (it *indexedTable) applyIndexed(ctx context.Context, muts []Mutation) ([]error, error) {
	cur, err := it.writable(ctx)
	if err != nil {
		return nil, err
	}
	errs, err := cur.applyIndexedNow(ctx, muts)
	if err != nil || errs == nil {
		return errs, err
	}
	var again []int
	for i, e := range errs {
		if errors.Is(e, ErrTableNotFound) {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return errs, nil
	}
	next, ok := it.afterDrop(ctx, cur, errs[again[0]])
	if !ok {
		return errs, nil
	}
	sub := make([]Mutation, len(again))
	for j, i := range again {
		sub[j] = muts[i]
	}
	subErrs, err := next.applyIndexedNow(ctx, sub)
	for j, i := range again {
		switch {
		case err != nil:
			errs[i] = err
		case subErrs == nil:
			errs[i] = nil
		default:
			errs[i] = subErrs[j]
		}
	}
	return route.RowErrors(errs), nil
}

func (it *indexedTable) applyIndexedNow(ctx context.Context, muts []Mutation) ([]error, error) {
	errs := make([]error, len(muts))
	var plainIdx, indexedIdx []int
	var g errgroup.Group
	g.SetLimit(it.t.c.core.Concurrency)
	for i, m := range muts {
		indexed, err := it.indexedMutation(m)
		switch {
		case err != nil:
			errs[i] = fmt.Errorf("row %d (key %s): %w", i, it.t.printKey(m.Key), err)
		case indexed:
			indexedIdx = append(indexedIdx, i)
		case m.Delete:
			g.Go(func() error {
				if _, err := it.deleteColumns(ctx, m, nil); err != nil {
					errs[i] = fmt.Errorf("row %d (key %s): %w", i, it.t.printKey(m.Key), err)
				}
				return nil
			})
		default:
			plainIdx = append(plainIdx, i)
		}
	}

	if len(indexedIdx) > 0 {
		sub := make([]Mutation, len(indexedIdx))
		for j, i := range indexedIdx {
			sub[j] = muts[i]
		}
		for j, err := range it.writeIndexedBatch(ctx, sub, false) {
			if i := indexedIdx[j]; err != nil {
				errs[i] = fmt.Errorf("row %d (key %s): %w", i, it.t.printKey(muts[i].Key), err)
			}
		}
	}
	if len(plainIdx) > 0 {
		sub := make([]Mutation, len(plainIdx))
		for j, i := range plainIdx {
			sub[j] = it.stamp(muts[i])
		}
		route.ApplyPart(ctx, it.t.Apply, sub, plainIdx, errs)
	}
	_ = g.Wait()
	return route.RowErrors(errs), nil
}
