package client

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/wait"
)

// markWait is how long a write derived from a marked row waits before reading it again.
func markWait(ctx context.Context, attempt int) error {
	return wait.Sleep(ctx, time.Duration(attempt+1)*time.Millisecond)
}

// deleteColumns deletes columns no index uses, if cond (nil: none) holds on the row. A row
// mutation cannot both delete cells and write a new version, and every other change of a row
// writes one (what makes a conditional write's check atomic), so the delete runs under a mark:
//
//  1. read the row and its version; check cond;
//  2. replace the version with a mark ('d' + token), by compare-and-set on the version read
//     when cond was checked (markRow);
//  3. delete the columns, by compare-and-set on the mark: nothing changed since the mark;
//  4. replace the mark with a new version, by compare-and-set on the mark.
//
// A conditional write (CheckAndMutate, Increment) that reads a mark younger than DefaultIndexGrace
// waits and reads again, so none pairs the values before step 3 with the version after it; a delete
// that dies between steps 2 and 4 leaves that row's conditional writes failing with the retryable
// ErrIndexContention until the grace has passed. A writer that changes the row between steps 2 and
// 3 makes step 3 fail, and the delete starts again from step 1.
func (it *indexedTable) deleteColumns(ctx context.Context, m Mutation, cond *Condition) (applied bool, err error) {
	if err := it.t.checkKey(m.Key); err != nil {
		return false, err
	}
	vcol := it.versionColumn()
	setVersion := func(from, to []byte) (bool, error) {
		return it.t.CheckAndMutate(ctx, Condition{Family: vcol.Family, Qualifier: vcol.Qualifier, Value: from},
			Mutation{Key: m.Key, Cells: []Cell{{Family: vcol.Family, Qualifier: vcol.Qualifier, Value: to}}})
	}
	for attempt := range maxIndexedAttempts {
		row, err := it.readRow(ctx, m.Key)
		if err != nil {
			return false, err
		}
		v, _ := indexproto.Newest(row, vcol)
		if indexproto.Marked(v, DefaultIndexGrace) {
			if err := markWait(ctx, attempt); err != nil {
				return false, err
			}
			continue
		}
		if cond != nil && !driverkit.Holds(*cond, row) {
			return false, nil
		}
		if len(indexproto.DataCells(row)) == 0 {
			return true, nil // nothing to delete: a mark would leave a row of bookkeeping only
		}
		mark := indexproto.Status(indexproto.VersionMark, indexproto.NewToken())
		if ok, err := it.markRow(ctx, m.Key, v, mark, cond != nil); err != nil || !ok {
			if err != nil {
				return false, fmt.Errorf("mark: %w", err)
			}
			continue
		}
		del := Mutation{Key: m.Key, Delete: true, Cells: m.Cells}
		if leavesNoData(row, m.Cells) {
			// Deleting the row whole takes the version with it: no row of bookkeeping only is left
			// for scans to skip (and their limits to count). Under the mark, the row is the one read.
			del.Cells = nil
		}
		ok, err := it.t.CheckAndMutate(ctx, Condition{Family: vcol.Family, Qualifier: vcol.Qualifier, Value: mark}, del)
		if err != nil {
			// Whether or not the delete landed, a new version in place of the mark is right.
			_, _ = setVersion(mark, indexproto.NewToken())
			return false, fmt.Errorf("delete: %w", err)
		}
		if !ok {
			continue // the row changed after the mark, which a later write replaced
		}
		if del.Cells == nil {
			return true, nil
		}
		if _, err := setVersion(mark, indexproto.NewToken()); err != nil {
			// The delete is done; writes derived from the row wait out the mark's grace.
			it.t.c.core.Logger.WarnContext(ctx, "brine: column delete left its mark", "table", it.t.name, "key", it.t.printKey(m.Key), "err", err)
		}
		return true, nil
	}
	return false, driverkit.Retryable(fmt.Errorf("%w (%d attempts)", ErrIndexContention, maxIndexedAttempts))
}

// markRow puts the mark in place of the version: by compare-and-set on the version read when a
// condition was checked on the row, else blindly, so that a busy row's writers (each changing the
// version) cannot starve the delete. A blind mark is safe: a write that read the version before it
// fails its own compare-and-set, and one already in the row has its data there.
func (it *indexedTable) markRow(ctx context.Context, key, v, mark []byte, checked bool) (bool, error) {
	vcol := it.versionColumn()
	m := Mutation{Key: key, Cells: []Cell{{Family: vcol.Family, Qualifier: vcol.Qualifier, Value: mark}}}
	if checked {
		return it.t.CheckAndMutate(ctx, Condition{Family: vcol.Family, Qualifier: vcol.Qualifier, Value: v}, m)
	}
	rowErrs, err := it.t.Apply(ctx, []Mutation{m})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	return err == nil, err
}

// leavesNoData reports whether deleting cols (a whole family for an empty qualifier) removes every
// data cell of row. Not when one deletes a version: row holds the newest only, and older versions
// may show once it is gone.
func leavesNoData(row []Cell, cols []Cell) bool {
	if slices.ContainsFunc(cols, func(d Cell) bool { return d.Timestamp > 0 }) {
		return false
	}
	return !slices.ContainsFunc(indexproto.DataCells(row), func(c Cell) bool {
		return !slices.ContainsFunc(cols, func(d Cell) bool { return driverkit.Covers(d.Family, d.Qualifier, c.Family, c.Qualifier) })
	})
}

// readRow reads one row of the main table whole, with its version column, by its logical key:
// through the router, so that during a rebucket it is the row reads see (the version a compare-and-set
// on it tests).
func (it *indexedTable) readRow(ctx context.Context, key []byte) ([]Cell, error) {
	rows, err := it.t.GetMany(ctx, [][]byte{key})
	if err != nil {
		return nil, fmt.Errorf("read row: %w", err)
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("read row: driver returned %d rows for one key", len(rows))
	}
	return rows[0].Cells, nil
}
