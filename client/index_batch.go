package client

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/indexproto"
)

// writeIndexedBatch applies many indexed mutations with the protocol of writeIndexed, each step
// batched: the rows are read with one GetMany; the versions of rows that have none, the data writes
// and the settles are compare-and-set batches (Router.CheckAndMutateMany: one call per bucket batch on
// stores that batch them); the pending entries go in one Apply per non-unique index table and one
// claim batch per unique one. Only the entries a row moves away from are marked one row at a time,
// in parallel. A row that loses a race to another writer starts again alone through writeIndexed.
// touch rewrites the rows' entries without changing their data (Rebuild). errs[i] is muts[i]'s
// outcome, without the row's position, which is the caller's to add (muts may be part of a call).
// A row with a bad key fails alone, before anything is read or sent for it.
func (it *indexedTable) writeIndexedBatch(ctx context.Context, muts []Mutation, touch bool) []error {
	errs := make([]error, len(muts))
	var mu sync.Mutex
	fail := func(i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if errs[i] == nil {
			errs[i] = err
		}
	}
	var lkeys [][]byte
	var at []int
	for i, m := range muts {
		if err := it.t.checkKey(m.Key); err != nil {
			fail(i, err)
			continue
		}
		lkeys, at = append(lkeys, m.Key), append(at, i)
	}
	// Step 1, batched. A failed read fails every row it read: nothing was written.
	rows := make([]Row, len(muts))
	if len(lkeys) > 0 {
		got, err := it.t.GetMany(ctx, lkeys)
		for j, i := range at {
			if err != nil {
				fail(i, fmt.Errorf("read row: %w", err))
				continue
			}
			rows[i] = got[j]
		}
	}
	plans := make([]writePlan, len(muts))
	for i, m := range muts {
		if errs[i] != nil {
			continue
		}
		var err error
		if plans[i], err = it.planIndexed(m, rows[i].Cells, touch); err != nil {
			fail(i, err)
		}
	}
	alone := make([]bool, len(muts)) // lost a race: written again by writeIndexed
	live := func(i int) bool { return errs[i] == nil && !plans[i].skip && !alone[i] }

	// The end of step 1: a version of their own for rows read without one (ownVersion).
	var vs []backends.CondMutation
	var vi []int
	for i := range plans {
		if live(i) && plans[i].needsVersion() {
			vs, vi = append(vs, it.versionMutation(plans[i].m.Key)), append(vi, i)
		}
	}
	if len(vs) > 0 {
		applied, verrs := it.t.rt.CheckAndMutateMany(ctx, vs)
		for j, i := range vi {
			switch {
			case verrs[j] != nil:
				fail(i, fmt.Errorf("version write: %w", verrs[j]))
			case applied[j]:
				plans[i].oldV = vs[j].Mut.Cells[0].Value
			default:
				alone[i] = true
			}
		}
	}

	it.pendingBatch(ctx, plans, live, fail)

	// Step 3, batched.
	var dms []backends.CondMutation
	var di []int
	for i := range plans {
		if live(i) {
			dms, di = append(dms, it.dataMutation(plans[i])), append(di, i)
		}
	}
	settles := settleBatches{}
	if len(dms) > 0 {
		applied, derrs := it.t.rt.CheckAndMutateMany(ctx, dms)
		for j, i := range di {
			p := plans[i]
			switch {
			case derrs[j] != nil:
				fail(i, fmt.Errorf("data write: %w", derrs[j]))
			case !applied[j]:
				alone[i] = true // the entries left pending are answered from the row and repaired by readers
			default:
				settles.add(p.changes, p.pending, indexproto.Status(statusVerified, p.tok))
			}
		}
	}

	var g errgroup.Group
	g.SetLimit(it.t.c.core.Concurrency)
	// Step 4, batched per index table: an entry left pending is answered from its row
	// until a reader repairs it.
	g.Go(func() error {
		if err := it.sendSettles(ctx, settles); err != nil {
			it.t.c.core.Logger.WarnContext(ctx, "brine: index entries left pending", "table", it.t.name, "err", err)
		}
		return nil
	})
	for i := range plans {
		if alone[i] && errs[i] == nil {
			g.Go(func() error {
				if err := it.writeIndexed(ctx, plans[i].m, touch); err != nil {
					fail(i, err)
				}
				return nil
			})
		}
	}
	_ = g.Wait()
	return errs
}

// pendingBatch is step 2 for the live plans: new non-unique entries in one Apply per index table,
// new unique ones in one claim batch per index (claimMany), the entries left one row at a time
// (markPending). A failure fails its row, before its data write.
func (it *indexedTable) pendingBatch(ctx context.Context, plans []writePlan, live func(int) bool, fail func(int, error)) {
	puts := map[*Index][]Mutation{}
	claims := map[*Index][]claimReq{}
	putRows, claimRows := map[*Index][]int{}, map[*Index][]int{} // the row of each put and claim
	// The live rows, read before any goroutine may fail one.
	var rows []int
	for i := range plans {
		if live(i) {
			rows = append(rows, i)
		}
	}
	for _, i := range rows {
		p := plans[i]
		for _, c := range p.changes {
			switch {
			case !c.newOK:
			case c.ix.cfg.Unique:
				claims[c.ix] = append(claims[c.ix], claimReq{key: c.newKey, mainKey: p.m.Key, cells: c.cells})
				claimRows[c.ix] = append(claimRows[c.ix], i)
			default:
				puts[c.ix] = append(puts[c.ix], Mutation{Key: c.newKey, Cells: c.cells})
				putRows[c.ix] = append(putRows[c.ix], i)
			}
		}
	}
	var g errgroup.Group
	g.SetLimit(it.t.c.core.Concurrency)
	for ix, ms := range puts {
		g.Go(func() error {
			rowErrs, err := ix.table.Apply(ctx, ms)
			for j, i := range putRows[ix] {
				switch {
				case err != nil:
					fail(i, fmt.Errorf("index write: %w", err))
				case rowErrs != nil && rowErrs[j] != nil:
					fail(i, fmt.Errorf("index write: %w", rowErrs[j]))
				}
			}
			return nil
		})
	}
	for ix, cs := range claims {
		g.Go(func() error {
			for j, err := range ix.claimMany(ctx, cs) {
				if err != nil {
					fail(claimRows[ix][j], fmt.Errorf("index write: %w", err))
				}
			}
			return nil
		})
	}
	for _, i := range rows {
		if p := plans[i]; p.movesAny() {
			g.Go(func() error {
				if err := it.markPending(ctx, p.m.Key, p.changes, p.pending, false); err != nil {
					fail(i, err)
				}
				return nil
			})
		}
	}
	_ = g.Wait()
}

// movesAny reports whether the write leaves an entry.
func (p *writePlan) movesAny() bool {
	for _, c := range p.changes {
		if c.moves() {
			return true
		}
	}
	return false
}

// claimReq is one new unique entry to claim: its key, its row and its cells.
type claimReq struct {
	key, mainKey []byte
	cells        []Cell
}

// claimMany is claim for many entries of ix, in batches: first a compare-and-set batch that takes
// the keys no entry holds (an import of new rows: no read), then, for the others, one GetMany of
// their holders and a compare-and-set batch on the status read for those their own row holds. The
// rest (held by another row, which claim checks, or changed since the read) go through claim one by
// one.
func (ix *Index) claimMany(ctx context.Context, cs []claimReq) []error {
	errs := make([]error, len(cs))
	free := make([]backends.CondMutation, len(cs))
	for i, c := range cs {
		free[i] = backends.CondMutation{Cond: Condition{Family: indexFamily, Qualifier: statusQual}, Mut: Mutation{Key: c.key, Cells: c.cells}}
	}
	applied, ferrs := ix.table.rt.CheckAndMutateMany(ctx, free)
	var held []int
	for i := range cs {
		switch {
		case ferrs[i] != nil:
			errs[i] = ferrs[i]
		case !applied[i]:
			held = append(held, i)
		}
	}
	if len(held) == 0 {
		return errs
	}
	keys := make([][]byte, len(held))
	for j, i := range held {
		keys[j] = cs[i].key
	}
	holders, err := ix.table.GetMany(ctx, keys)
	if err != nil {
		for _, i := range held {
			errs[i] = err
		}
		return errs
	}
	var cms []backends.CondMutation
	var at []int
	slow := make([]bool, len(cs))
	for j, i := range held {
		c := cs[i]
		st, _ := indexproto.Newest(holders[j].Cells, Column{Family: indexFamily, Qualifier: statusQual})
		owner := ix.def.MainKey(c.key, holders[j].Cells)
		if len(owner) > 0 && !bytes.Equal(owner, c.mainKey) {
			slow[i] = true
			continue
		}
		cms = append(cms, backends.CondMutation{Cond: Condition{Family: indexFamily, Qualifier: statusQual, Value: st}, Mut: Mutation{Key: c.key, Cells: c.cells}})
		at = append(at, i)
	}
	if len(cms) > 0 {
		applied, cerrs := ix.table.rt.CheckAndMutateMany(ctx, cms)
		for j, i := range at {
			errs[i] = cerrs[j]
			slow[i] = cerrs[j] == nil && !applied[j]
		}
	}
	var g errgroup.Group
	g.SetLimit(ix.t.t.c.core.Concurrency)
	for i, c := range cs {
		if slow[i] {
			g.Go(func() error {
				errs[i] = ix.claim(ctx, c.key, c.mainKey, c.cells)
				return nil
			})
		}
	}
	_ = g.Wait()
	return errs
}
