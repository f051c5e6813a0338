package route

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// Reads during a rebucket. In migrate, a key's row in the new table, when it has one (copied, or
// marked by a writer), is the truth: the old table is no longer written, so a copied row equals its
// old row, and a marked row holds every change since. Otherwise the old row is. From copied on, the
// new table holds every row. The marker is never shown, and a row holding nothing else (a row
// deleted during the rebucket) is not there.

// stripMark removes the marker from a row's cells; it reports whether cells remain.
func stripMark(cells []backends.Cell) ([]backends.Cell, bool) {
	out := slices.DeleteFunc(cells, func(c backends.Cell) bool { return c.Family == markFamily })
	return out, len(out) > 0
}

// withMark adds the marker to a read restricted to some columns, so a marked row is seen as there
// even when it has none of them.
func withMark(rc ReadConfig) ReadConfig {
	if len(rc.Read.Columns) == 0 {
		return rc
	}
	return rc.withColumns(backends.Column{Family: markFamily, Qualifier: markQualifier})
}

func refuseTimeRange(rc ReadConfig, v *routeView, op, logical string) error {
	if v.row.state == stateMigrate && (rc.Read.TimeRange != (backends.TimeRange{})) {
		// The marker's own version may fall outside the range, and with it the proof that the new
		// row is the truth.
		return fmt.Errorf("%s %s: %w: reads with a time range wait until its rows are copied", op, logical, ErrRebucketing)
	}
	return nil
}

// migrateFilter takes a row filter out of the reads of the two tables in migrate, to be applied by
// the router after it has picked each key's row: pushed down, a new row failing it would be taken for
// a missing one, and the stale old row, which may pass, would be answered instead. It returns the
// options for the inner reads and the filter to apply (nil: none).
func migrateFilter(rc ReadConfig, v *routeView, op, logical string) (ReadConfig, *backends.Filter, error) {
	f := rc.Read.Filter
	if v.row.state != stateMigrate || f == nil {
		return rc, nil, nil
	}
	if err := driverkit.CheckLogicalFilter(f, rc.Read.Columns); err != nil {
		return rc, nil, fmt.Errorf("%s %s: %w", op, logical, err)
	}
	rc.Read.Filter = nil
	return rc, f, nil
}

// GetMany is Table.GetMany through the route.
func (r *Router) GetMany(ctx context.Context, keys [][]byte, rc ReadConfig) ([]backends.Row, error) {
	v, err := r.readView(ctx)
	if err != nil {
		return nil, err
	}
	if v.row.state == stateServing || v.row.state == statePause {
		return v.old.GetMany(ctx, keys, rc)
	}
	if err := refuseTimeRange(rc, v, "get", r.logical); err != nil {
		return nil, err
	}
	rc, f, err := migrateFilter(rc, v, "get", r.logical)
	if err != nil {
		return nil, err
	}
	rows, err := v.new.GetMany(ctx, keys, withMark(rc))
	if err != nil {
		return nil, err
	}
	if v.row.state == stateMigrate {
		var missing [][]byte
		var at []int
		for i, row := range rows {
			if len(row.Cells) == 0 {
				missing, at = append(missing, keys[i]), append(at, i)
			}
		}
		if len(missing) > 0 {
			old, err := v.old.GetMany(ctx, missing, rc)
			if err != nil {
				return nil, err
			}
			for j, i := range at {
				rows[i].Cells = old[j].Cells
			}
		}
	}
	for i := range rows {
		rows[i].Cells, _ = stripMark(rows[i].Cells)
		if f != nil && len(rows[i].Cells) > 0 {
			rows[i].Cells = driverkit.ApplyRow(f, keys[i], rows[i].Cells)
		}
	}
	return rows, nil
}

// migratingScan is the scan of rg while a rebucket moves the table's rows (v, from copy on): the new
// table's rows, in migrate merged with the old table's, each read whole by its own fan-out
// (Phys.scan), with the marker and the rows holding only it dropped.
func (r *Router) migratingScan(ctx context.Context, v *routeView, rg backends.Range, rc ReadConfig) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		if err := refuseTimeRange(rc, v, "scan", r.logical); err != nil {
			yield(backends.Row{}, err)
			return
		}
		rc, f, err := migrateFilter(rc, v, "scan", r.logical)
		if err != nil {
			yield(backends.Row{}, err)
			return
		}
		// Tombstones and superseded old rows are dropped after the stores' limits would apply: the
		// limit is applied here instead.
		inner := rc
		inner.Limit = 0
		src := v.new.scan(ctx, rg, withMark(inner))
		if v.row.state == stateMigrate {
			src = mergePreferFirst(src, v.old.scan(ctx, rg, inner), rc.Reverse)
		}
		n := 0
		for row, err := range src {
			if err != nil {
				yield(backends.Row{}, err)
				return
			}
			var ok bool
			if row.Cells, ok = stripMark(row.Cells); !ok {
				continue
			}
			if f != nil {
				if row.Cells = driverkit.ApplyRow(f, row.Key, row.Cells); len(row.Cells) == 0 {
					continue
				}
			}
			if !yield(row, nil) {
				return
			}
			if n++; rc.Limit > 0 && n >= rc.Limit {
				return
			}
		}
	}
}

// mergePreferFirst merges two streams in the same key order into one, taking a's row where both hold
// a key.
func mergePreferFirst(a, b iter.Seq2[backends.Row, error], reverse bool) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		na, stopA := iter.Pull2(a)
		defer stopA()
		nb, stopB := iter.Pull2(b)
		defer stopB()
		ra, ea, okA := na()
		rb, eb, okB := nb()
		for okA || okB {
			if okA && ea != nil {
				yield(backends.Row{}, ea)
				return
			}
			if okB && eb != nil {
				yield(backends.Row{}, eb)
				return
			}
			c := 0
			switch {
			case !okB:
				c = -1
			case !okA:
				c = 1
			default:
				c = bytes.Compare(ra.Key, rb.Key)
				if reverse {
					c = -c
				}
			}
			switch {
			case c < 0:
				if !yield(ra, nil) {
					return
				}
				ra, ea, okA = na()
			case c > 0:
				if !yield(rb, nil) {
					return
				}
				rb, eb, okB = nb()
			default:
				if !yield(ra, nil) {
					return
				}
				ra, ea, okA = na()
				rb, eb, okB = nb()
			}
		}
	}
}

// Get is Table.Get through the route.
func (r *Router) Get(ctx context.Context, key []byte, rc ReadConfig) (backends.Row, error) {
	v, err := r.readView(ctx)
	if err != nil {
		return backends.Row{}, fmt.Errorf("get %s: %w", r.PrintKey(key), err)
	}
	if v.row.state == stateServing || v.row.state == statePause {
		return v.old.Get(ctx, key, rc)
	}
	rows, err := r.GetMany(ctx, [][]byte{key}, rc)
	if err != nil {
		return backends.Row{}, fmt.Errorf("get: %w", err)
	}
	if len(rows[0].Cells) == 0 {
		return backends.Row{}, fmt.Errorf("get %s: %w", r.PrintKey(key), ErrNotFound)
	}
	return rows[0], nil
}
