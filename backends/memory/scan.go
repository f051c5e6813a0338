package memory

import (
	"bytes"
	"context"
	"fmt"
	"iter"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// Scan streams rows in pages (driverkit.ScanPages): each page is gathered under the read lock, which is
// released before any row is yielded, and the next page resumes after the last key examined.
func (b *Backend) Scan(ctx context.Context, name string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(backends.Row{}, fmt.Errorf("memory: scan %q: %w", name, err))
			return
		}
		t, err := b.table(name)
		if err != nil {
			yield(backends.Row{}, err)
			return
		}
		if err := driverkit.CheckRead(t.families, opts.ReadOptions); err != nil {
			yield(backends.Row{}, fmt.Errorf("memory: scan %q: %w", name, err))
			return
		}
		batch := opts.BatchSize
		if batch <= 0 {
			batch = b.scanBatch
		}
		var resume []byte // last key examined; nil before the first page
		page := func(n int) ([]backends.Row, bool, error) {
			rows, last, more, err := t.batch(r, opts, resume, n)
			if err != nil {
				return nil, false, err
			}
			resume = last
			// Copied after the lock is released: rows in the tree are never modified.
			out := make([]backends.Row, len(rows))
			for i, rw := range rows {
				out[i] = backends.Row{Key: bytes.Clone(rw.key), Cells: copyCells(rw.cells, opts.ReadOptions)}
			}
			return out, more, nil
		}
		if err := driverkit.ScanPages(ctx, batch, opts.Limit, page, yield); err != nil {
			yield(backends.Row{}, fmt.Errorf("memory: scan %q: %w", name, err))
		}
	}
}

// maxExamine bounds the rows one batch looks at, so that a selective column filter does not hold the
// lock over a whole table.
const maxExamine = 4096

// batch returns up to n rows of r that have a cell selected by opts.Columns, after (forward) or before
// (reverse) resume when it is not nil, with the last key examined and whether more may follow.
func (t *table) batch(r backends.Range, opts backends.ScanOptions, resume []byte, n int) (rows []*row, last []byte, more bool, err error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.dropped {
		return nil, nil, false, backends.ErrTableNotFound
	}
	examined := 0
	visit := func(rw *row) bool {
		if !r.Contains(rw.key) {
			return false // past the far end; the near end is handled by the pivot
		}
		if resume != nil && bytes.Equal(rw.key, resume) {
			return true // the pivot itself, already sent
		}
		if len(rows) == n || examined == maxExamine {
			more = true
			return false
		}
		examined++
		last = rw.key
		if len(visible(rw.cells, opts.ReadOptions)) > 0 {
			rows = append(rows, rw)
		}
		return true
	}
	switch {
	case !opts.Reverse && resume != nil:
		t.rows.AscendGreaterOrEqual(&row{key: resume}, visit)
	case !opts.Reverse && len(r.Start) > 0:
		t.rows.AscendGreaterOrEqual(&row{key: r.Start}, visit)
	case !opts.Reverse:
		t.rows.Ascend(visit)
	default:
		pivot := resume
		if pivot == nil {
			pivot = r.End
		}
		// The end is exclusive: skip a row equal to the pivot (End or the resume key).
		skip := func(rw *row) bool {
			if bytes.Equal(rw.key, pivot) {
				return true
			}
			return visit(rw)
		}
		if len(pivot) > 0 {
			t.rows.DescendLessOrEqual(&row{key: pivot}, skip)
		} else {
			t.rows.Descend(skip)
		}
	}
	return rows, last, more, nil
}
