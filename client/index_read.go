package client

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
)

// IndexRow is one answer of a query by index: the entry's key (the cursor for ResumeAfter) and the
// main row, or only its covered columns when the query asked for nothing else.
type IndexRow struct {
	IndexKey []byte
	Row
}

// indexChunk is how many entries a scan checks against their main rows in one batched read.
const indexChunk = 64

// Scan returns the main rows whose index keys lie in r, in index-key order (descending with
// Reverse), with the options of Table.Scan: Limit, Reverse, ResumeAfter (an IndexKey), Columns,
// Families, MaxVersions, BatchSize, RowFilter (applied to the main rows, in the client). It scans every bucket of the index in parallel and merges them
// as Table.Scan does. An entry is answered only if the main row, read after the entry, still has
// that index key; when Columns names only covered columns, a verified entry is answered from the
// index alone. Pending entries are repaired on the way (see the package documentation). An index
// still being built (AddIndex) is refused with ErrIndexBuilding, one being dropped with
// ErrIndexNotFound.
func (ix *Index) Scan(ctx context.Context, r Range, opts ...ReadOption) iter.Seq2[IndexRow, error] {
	cfg := readConfig(ix.t.t.keySchema, opts)
	return func(yield func(IndexRow, error) bool) {
		if err := ix.queryable(ctx); err != nil {
			yield(IndexRow{}, fmt.Errorf("index %s: %w", ix.cfg.Name, err))
			return
		}
		if err := driverkit.CheckLogicalFilter(cfg.Read.Filter, cfg.Read.Columns); err != nil {
			yield(IndexRow{}, fmt.Errorf("index %s: %w", ix.cfg.Name, err))
			return
		}
		err := ix.checkRange(r)
		if err == nil {
			err = route.CheckCursor("index "+ix.cfg.Name, r, cfg.After, ix.table.printKey)
		}
		if err != nil {
			yield(IndexRow{}, err)
			return
		}
		// The index scan has no limit: entries that fail the check do not count.
		var iopts []ReadOption
		if cfg.Reverse {
			iopts = append(iopts, Reverse())
		}
		if cfg.After != nil {
			iopts = append(iopts, ResumeAfter(cfg.After))
		}
		if cfg.BatchSize > 0 || cfg.Limit > 0 {
			iopts = append(iopts, BatchSize(max(cfg.BatchSize, min(cfg.Limit, indexChunk))))
		}
		n := 0
		chunk := make([]Row, 0, indexChunk)
		flush := func() bool {
			out, err := ix.resolve(ctx, chunk, cfg)
			chunk = chunk[:0]
			if err != nil {
				yield(IndexRow{}, fmt.Errorf("index %s: %w", ix.cfg.Name, err))
				return false
			}
			for _, ir := range out {
				if !yield(ir, nil) {
					return false
				}
				if n++; cfg.Limit > 0 && n >= cfg.Limit {
					return false
				}
			}
			return true
		}
		for e, err := range ix.table.Scan(ctx, r, iopts...) {
			if err != nil {
				yield(IndexRow{}, fmt.Errorf("index %s: %w", ix.cfg.Name, err))
				return
			}
			chunk = append(chunk, e)
			want := indexChunk
			if cfg.Limit > 0 {
				want = min(want, cfg.Limit-n)
			}
			if len(chunk) >= want && !flush() {
				return
			}
		}
		if len(chunk) > 0 {
			flush()
		}
	}
}

// Page reads one page of a query by the index: up to n rows of r (n > 0), after cursor (nil: from
// the start), with Scan's options, and the cursor of the next page, nil when no row follows. It
// reads one row more than it returns to tell. A cursor is refused outside r: it belongs to the query
// whose page returned it.
func (ix *Index) Page(ctx context.Context, r Range, cursor []byte, n int, opts ...ReadOption) (rows []IndexRow, next []byte, err error) {
	if n <= 0 {
		return nil, nil, fmt.Errorf("index %s page: %w: page size %d", ix.cfg.Name, ErrInvalidArgument, n)
	}
	opts = append(slices.Clip(opts), Limit(n+1))
	if cursor != nil {
		opts = append(opts, ResumeAfter(cursor))
	}
	for ir, err := range ix.Scan(ctx, r, opts...) {
		if err != nil {
			return nil, nil, err
		}
		if len(rows) == n {
			return rows, rows[n-1].IndexKey, nil
		}
		rows = append(rows, ir)
	}
	return rows, nil, nil
}

// checkRange refuses a range whose start is after its end in the index's order, printed as the
// index's values. When the first part where they differ sorts descending, the error says so: a range
// over a descending part runs from its larger value to its smaller one.
func (ix *Index) checkRange(r Range) error {
	if len(r.End) == 0 || bytes.Compare(r.Start, r.End) <= 0 {
		return nil
	}
	why := "a descending scan takes the ascending range and Reverse()"
	for i, p := range ix.cfg.Parts {
		a, errA := keys.FieldSpan(r.Start, i)
		b, errB := keys.FieldSpan(r.End, i)
		if errA != nil || errB != nil {
			break
		}
		if bytes.Equal(r.Start[a.Start:a.End], r.End[b.Start:b.End]) {
			continue
		}
		if p.Desc {
			why = fmt.Sprintf("part %d, %s:%s, sorts descending: give its larger value as the start", i+1, p.Column.Family, p.Column.Qualifier)
		}
		break
	}
	return fmt.Errorf("index %s: %w: range start %s is after its end %s in the index's order (%s)",
		ix.cfg.Name, ErrInvalidArgument, ix.table.printKey(r.Start), ix.table.printKey(r.End), why)
}

// Get returns the main row whose unique index key is key (see Prefix): one index read and one row
// read. ErrNotFound when no row has it.
func (ix *Index) Get(ctx context.Context, key []byte, opts ...ReadOption) (Row, error) {
	if !ix.cfg.Unique {
		return Row{}, fmt.Errorf("index %s get: %w: the index is not unique (use Scan)", ix.cfg.Name, backends.ErrInvalidArgument)
	}
	if err := ix.queryable(ctx); err != nil {
		return Row{}, fmt.Errorf("index %s get: %w", ix.cfg.Name, err)
	}
	cfg := readConfig(ix.t.t.keySchema, opts)
	if err := driverkit.CheckLogicalFilter(cfg.Read.Filter, cfg.Read.Columns); err != nil {
		return Row{}, fmt.Errorf("index %s get: %w", ix.cfg.Name, err)
	}
	e, err := ix.table.Get(ctx, key)
	if err != nil {
		return Row{}, fmt.Errorf("index %s get: %w", ix.cfg.Name, err)
	}
	out, err := ix.resolve(ctx, []Row{e}, cfg)
	if err != nil {
		return Row{}, fmt.Errorf("index %s get %s: %w", ix.cfg.Name, ix.table.printKey(key), err)
	}
	if len(out) == 0 {
		return Row{}, fmt.Errorf("index %s get %s: %w", ix.cfg.Name, ix.table.printKey(key), ErrNotFound)
	}
	return out[0].Row, nil
}

// coveredOnly reports whether every column asked for is covered, so a verified entry answers alone.
func (ix *Index) coveredOnly(cols []Column) bool {
	return len(cols) > 0 && !slices.ContainsFunc(cols, func(c Column) bool {
		return c.Qualifier == "" || !slices.Contains(ix.cfg.Covered, c)
	})
}

// resolve checks entries against their main rows (read in one batch) and returns the answers, in
// order, repairing what it can.
func (ix *Index) resolve(ctx context.Context, entries []Row, cfg route.ReadConfig) ([]IndexRow, error) {
	f := cfg.Read.Filter
	// A filter is applied to the main row, read even when the columns asked for are covered: it may
	// look at columns the index does not copy.
	covered := f == nil && ix.coveredOnly(cfg.Read.Columns)
	var need [][]byte
	rowOf := make([]int, len(entries)) // entry -> its main row in need, or -1
	sts, mks := make([][]byte, len(entries)), make([][]byte, len(entries))
	for i, e := range entries {
		sts[i], _ = indexproto.Newest(e.Cells, Column{Family: indexFamily, Qualifier: statusQual})
		mks[i] = ix.def.MainKey(e.Key, e.Cells)
		rowOf[i] = -1
		if st, mk := sts[i], mks[i]; len(mk) > 0 && len(st) > 0 && !(covered && st[0] == statusVerified) {
			rowOf[i] = len(need)
			need = append(need, mk)
		}
	}
	var rows []Row
	if len(need) > 0 {
		var err error
		rows, err = ix.t.t.GetMany(ctx, need, MaxVersions(cfg.Read.MaxVersions)) // with the version column
		if err != nil {
			return nil, err
		}
	}
	out := make([]IndexRow, 0, len(entries))
	for i, e := range entries {
		st, mk := sts[i], mks[i]
		if len(mk) == 0 || len(st) == 0 {
			continue // not written by the protocol
		}
		mk = bytes.Clone(mk) // the answer's key, which may share the entry's
		if covered && st[0] == statusVerified {
			raw, _ := indexproto.Newest(e.Cells, Column{Family: indexFamily, Qualifier: indexproto.CoveredQual})
			cells, err := ix.def.DecodeCovered(raw)
			if err != nil {
				return nil, err
			}
			if cells = project(cells, cfg.Read.Columns); len(cells) > 0 {
				out = append(out, IndexRow{IndexKey: e.Key, Row: Row{Key: mk, Cells: cells}})
			}
			continue
		}
		row := rows[rowOf[i]]
		k, ok, err := ix.EntryKey(mk, row.Cells)
		match := err == nil && ok && bytes.Equal(k, e.Key)
		if match {
			// The filter trims in place: a copy, since repair below needs the row as read.
			cells := driverkit.ApplyRow(f, mk, slices.Clone(indexproto.DataCells(row.Cells)))
			if cells = project(cells, cfg.Read.Columns); len(cells) > 0 {
				out = append(out, IndexRow{IndexKey: e.Key, Row: Row{Key: mk, Cells: cells}})
			}
		}
		ix.repair(ctx, e.Key, st, mk, row.Cells, match)
	}
	return out, nil
}

// repair settles an entry the reader found pending or wrong, given the main row read after it. Each
// change is a compare-and-set on the exact status read, so it never undoes a later writer's step.
func (ix *Index) repair(ctx context.Context, key, st, mainKey []byte, row []Cell, match bool) {
	cond := Condition{Family: indexFamily, Qualifier: statusQual, Value: st}
	rowV, _ := indexproto.Newest(row, Column{Family: ix.t.indexFamily, Qualifier: versionQual})
	var m Mutation
	switch {
	case st[0] == statusVerified && match:
		return
	case st[0] == statusVerified:
		// No writer touched the entry since it was read (its status is unchanged) and the row read
		// after it does not match: a leftover the protocol should not leave; remove it.
		m = Mutation{Key: key, Delete: true}
	case match && bytes.Equal(st[1:], rowV):
		// The writer's data write is in the row and no later writer touched the entry: what its
		// step 4 would have done.
		m = Mutation{Key: key, Cells: []Cell{{Family: indexFamily, Qualifier: statusQual, Value: indexproto.Status(statusVerified, rowV)}}}
	case bytes.Equal(st[1:], rowV):
		m = Mutation{Key: key, Delete: true} // an entry the writer moved away from: its step 4
	case indexproto.TokenAge(st[1:]) < ix.grace:
		return // its writer may still be between steps 2 and 3
	case match:
		m = Mutation{Key: key, Cells: ix.def.EntryCells(mainKey, indexproto.Status(statusVerified, indexproto.NewToken()), row)}
	default:
		m = Mutation{Key: key, Delete: true}
	}
	if ix.table.rt.PausedNow(ctx) {
		// A repair is best effort (the answer was checked against the main row): it does not wait
		// for a rebucket's pause, which a rebucket whose process died leaves until it is resumed.
		return
	}
	if _, err := ix.table.CheckAndMutate(ctx, cond, m); err != nil {
		ix.t.t.c.core.Logger.DebugContext(ctx, "brine: index repair failed", "index", ix.cfg.Name, "key", ix.table.printKey(key), "err", err)
	}
}

// project keeps the cells the columns select (all when none are given).
func project(cells []Cell, cols []Column) []Cell {
	if len(cols) == 0 {
		return cells
	}
	return slices.DeleteFunc(slices.Clone(cells), func(c Cell) bool { return !driverkit.Selected(cols, c.Family, c.Qualifier) })
}
