package client

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"
)

// writeIndexedBatch applies many indexed mutations with the protocol of writeIndexed, batching what
// can be batched: the rows are read with one GetMany, and the pending entries of non-unique
// indexes are written with one Apply per index table; the compare-and-sets (old entries, unique
// claims, data, settle) go one per row, in parallel. A row whose data write loses to another writer
// starts again alone through writeIndexed. touch rewrites the rows' entries without changing their
// data (Rebuild). errs[i] is muts[i]'s outcome.
func (it *IndexedTable) writeIndexedBatch(ctx context.Context, muts []Mutation, touch bool) []error {
	errs := make([]error, len(muts))
	fail := func(i int, err error) { errs[i] = fmt.Errorf("row %d (key %s): %w", i, keyText(muts[i].Key), err) }
	lkeys := make([][]byte, len(muts))
	for i, m := range muts {
		lkeys[i] = m.Key
	}
	// Step 1, batched. A failed read fails every row: nothing was written.
	rows, err := it.t.GetMany(ctx, lkeys)
	if err != nil {
		for i := range muts {
			fail(i, fmt.Errorf("read row: %w", err))
		}
		return errs
	}
	plans := make([]writePlan, len(muts))
	for i, m := range muts {
		_, _, err := it.t.physical(m.Key)
		if err == nil {
			plans[i], err = it.planIndexed(m, rows[i].Cells, touch)
		}
		if err != nil {
			fail(i, err)
		}
	}
	done := make([]bool, len(plans)) // failed, or nothing to do
	for i := range plans {
		done[i] = errs[i] != nil || plans[i].skip
	}
	// The end of step 1 for rows read without a version; a row that changed since goes alone.
	alone := make([]bool, len(plans))
	var g errgroup.Group
	g.SetLimit(it.t.c.concurrency)
	for i := range plans {
		if done[i] {
			continue
		}
		g.Go(func() error {
			ok, err := it.ownVersion(ctx, &plans[i])
			switch {
			case err != nil:
				fail(i, err)
			case !ok:
				alone[i] = true
			}
			done[i] = !ok || err != nil
			return nil
		})
	}
	_ = g.Wait()

	// Step 2: the non-unique new entries in one Apply per index table, the rest one by one.
	type entryRef struct{ row int }
	puts := map[*Index][]Mutation{}
	refs := map[*Index][]entryRef{}
	for i, p := range plans {
		if done[i] {
			continue
		}
		for _, c := range p.changes {
			if c.newOK && !c.ix.cfg.Unique {
				puts[c.ix] = append(puts[c.ix], Mutation{Key: c.newKey, Cells: c.cells})
				refs[c.ix] = append(refs[c.ix], entryRef{i})
			}
		}
	}
	var mu sync.Mutex
	failLocked := func(i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if errs[i] == nil {
			fail(i, err)
		}
	}
	for ix, ms := range puts {
		g.Go(func() error {
			rowErrs, err := ix.table.Apply(ctx, ms)
			for j, r := range refs[ix] {
				switch {
				case err != nil:
					failLocked(r.row, fmt.Errorf("index write: %w", err))
				case rowErrs != nil && rowErrs[j] != nil:
					failLocked(r.row, fmt.Errorf("index write: %w", rowErrs[j]))
				}
			}
			return nil
		})
	}
	for i, p := range plans {
		if done[i] { // read while step 2's goroutines record failures
			continue
		}
		g.Go(func() error {
			if err := it.markPending(ctx, p.m.Key, p.changes, p.pending, false); err != nil {
				failLocked(i, err)
			}
			return nil
		})
	}
	_ = g.Wait()

	// Steps 3 and 4, one row at a time, in parallel; a lost race starts the row again alone.
	for i, p := range plans {
		if (done[i] && !alone[i]) || errs[i] != nil {
			continue
		}
		g.Go(func() error {
			applied := false
			var err error
			if !alone[i] {
				applied, err = it.dataWrite(ctx, p)
			}
			switch {
			case err != nil:
				fail(i, err)
			case !applied:
				if err := it.writeIndexed(ctx, p.m, touch); err != nil {
					fail(i, err)
				}
			default:
				it.finish(ctx, p)
			}
			return nil
		})
	}
	_ = g.Wait()
	return errs
}
