package local

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"slices"

	"go.etcd.io/bbolt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// readChunk is how many keys of a Read share one read transaction.
const readChunk = 1024

// Read returns rows[i] for keys[i], copied out of the file.
func (s *Backend) Read(ctx context.Context, table string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: read %q: %w", table, err)
	}
	if err := s.usable(false); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("local: read %q: %w", table, err)
		}
	}
	ti, err := s.table(table)
	if err != nil {
		return nil, err
	}
	if err := driverkit.CheckRead(ti.families, opts); err != nil {
		return nil, fmt.Errorf("local: read %q: %w", table, err)
	}
	out := make([]backends.Row, len(keys))
	var cp copier
	for lo := 0; lo < len(keys); lo += readChunk {
		if lo > 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("local: read %q: %w", table, err)
			}
		}
		hi := min(lo+readChunk, len(keys))
		err := s.db.View(func(tx *bbolt.Tx) error {
			b := tx.Bucket(ti.bucket)
			if b == nil {
				return fmt.Errorf("local: read %q: %w", table, backends.ErrTableNotFound)
			}
			for i := lo; i < hi; i++ {
				out[i].Key = cp.bytes(keys[i])
				if v := b.Get(keys[i]); v != nil {
					cells, err := cp.cells(v, opts)
					if err != nil {
						return fmt.Errorf("local: read %q key %q: %w", table, keys[i], err)
					}
					out[i].Cells = cells
				}
			}
			return nil
		})
		if err != nil {
			return nil, dbErr(err)
		}
	}
	return out, nil
}

// Scan streams the rows of r in pages (driverkit.ScanPages). Each page is read in its own short read
// transaction and copied out before any row is yielded; the next page resumes after the last key
// examined.
func (s *Backend) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		fail := func(err error) { yield(backends.Row{}, fmt.Errorf("local: scan %q: %w", table, err)) }
		if err := ctx.Err(); err != nil {
			fail(err)
			return
		}
		if err := s.usable(false); err != nil {
			fail(err)
			return
		}
		ti, err := s.table(table)
		if err != nil {
			yield(backends.Row{}, err)
			return
		}
		if err := driverkit.CheckRead(ti.families, opts.ReadOptions); err != nil {
			fail(err)
			return
		}
		batch := opts.BatchSize
		if batch <= 0 {
			batch = s.cfg.scanBatch
		}
		sc := scanner{bucket: ti.bucket, r: r, opts: &opts}
		page := func(n int) ([]backends.Row, bool, error) {
			rows, more, err := sc.next(s.db, n)
			return rows, more, dbErr(err)
		}
		if err := driverkit.ScanPages(ctx, batch, opts.Limit, page, yield); err != nil {
			fail(err)
		}
	}
}

// Bounds of one scan batch besides its row count: bytes copied, and rows examined (a selective column
// filter may skip most rows).
const (
	batchBytes   = 4 << 20
	batchExamine = 8192
)

// scanner reads a range batch by batch.
type scanner struct {
	bucket []byte
	r      backends.Range
	opts   *backends.ScanOptions
	resume []byte // last key examined (a copy); nil before the first batch
	cp     copier
}

// next reads up to n rows in one read transaction; more reports whether rows may remain.
func (sc *scanner) next(db *bbolt.DB, n int) (rows []backends.Row, more bool, err error) {
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(sc.bucket)
		if b == nil {
			return backends.ErrTableNotFound
		}
		c := b.Cursor()
		k, v := sc.position(c)
		examined, copied := 0, 0
		var last []byte
		for ; k != nil; k, v = sc.step(c) {
			if !sc.inRange(k) {
				return nil
			}
			if len(rows) == n || examined == batchExamine || copied >= batchBytes {
				more = true
				break
			}
			examined++
			last = k
			row, ok, err := sc.cp.row(k, v, sc.opts.ReadOptions)
			if err != nil {
				return fmt.Errorf("key %q: %w", k, err)
			}
			if ok {
				rows = append(rows, row)
				copied += len(k) + len(v)
			}
		}
		if last != nil {
			sc.resume = bytes.Clone(last)
		}
		return nil
	})
	return rows, more, err
}

// position places c on the first key of this batch: the range's first (last, in reverse) key, or
// the one after (before) the resume key.
func (sc *scanner) position(c *bbolt.Cursor) ([]byte, []byte) {
	if !sc.opts.Reverse {
		if sc.resume == nil {
			if len(sc.r.Start) == 0 {
				return c.First()
			}
			return c.Seek(sc.r.Start)
		}
		k, v := c.Seek(sc.resume)
		if k != nil && bytes.Equal(k, sc.resume) {
			return c.Next()
		}
		return k, v
	}
	pivot := sc.resume // exclusive, like End
	if pivot == nil {
		pivot = sc.r.End
	}
	if len(pivot) == 0 {
		return c.Last()
	}
	// The greatest key below pivot.
	if k, _ := c.Seek(pivot); k == nil {
		return c.Last()
	}
	return c.Prev()
}

func (sc *scanner) step(c *bbolt.Cursor) ([]byte, []byte) {
	if sc.opts.Reverse {
		return c.Prev()
	}
	return c.Next()
}

// inRange reports whether a key reached by position/step is still in the range: only the far end
// can be crossed.
func (sc *scanner) inRange(k []byte) bool {
	if sc.opts.Reverse {
		return len(sc.r.Start) == 0 || bytes.Compare(k, sc.r.Start) >= 0
	}
	return len(sc.r.End) == 0 || bytes.Compare(k, sc.r.End) < 0
}

// copier copies keys and cells out of bbolt's memory into a few large allocations, with family and
// qualifier strings shared between rows.
type copier struct {
	buf     []byte
	cellBuf []backends.Cell
	strs    map[string]string
	scratch []cellRef
}

const (
	copyChunk = 64 << 10
	maxStrs   = 4096
)

func (cp *copier) bytes(b []byte) []byte {
	if len(b) > copyChunk/4 {
		return bytes.Clone(b)
	}
	if cap(cp.buf)-len(cp.buf) < len(b) {
		cp.buf = make([]byte, 0, copyChunk)
	}
	n := len(cp.buf)
	cp.buf = append(cp.buf, b...)
	// The capacity is clipped so that a caller appending to one value cannot overwrite the next.
	return cp.buf[n : n+len(b) : n+len(b)]
}

func (cp *copier) str(b []byte) string {
	if s, ok := cp.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	if cp.strs == nil {
		cp.strs = map[string]string{}
	}
	if len(cp.strs) < maxStrs {
		cp.strs[s] = s
	}
	return s
}

// cells decodes a stored row and returns copies of the cells a read with opts returns: none when
// opts.Filter fails the row or trims all its cells.
func (cp *copier) cells(v []byte, opts backends.ReadOptions) ([]backends.Cell, error) {
	refs, err := decodeCells(cp.scratch[:0], v)
	cp.scratch = refs
	if err != nil {
		return nil, err
	}
	// Filtered in place: refs is the copier's scratch.
	refs = slices.DeleteFunc(refs, func(r cellRef) bool { return !selected(&r, opts.Columns) })
	refs = driverkit.SelectVersions(refs, opts.MaxVersions, opts.TimeRange, compareCells, refTS)
	n := len(refs)
	if n == 0 {
		return nil, nil
	}
	if cap(cp.cellBuf)-len(cp.cellBuf) < n {
		cp.cellBuf = make([]backends.Cell, 0, max(n, 256))
	}
	start := len(cp.cellBuf)
	for i := range refs {
		r := &refs[i]
		cp.cellBuf = append(cp.cellBuf, backends.Cell{
			Family: cp.str(r.fam), Qualifier: cp.str(r.qual), Value: cp.bytes(r.val), Timestamp: r.ts,
		})
	}
	cells := driverkit.Apply(opts.Filter, cp.cellBuf[start:len(cp.cellBuf):len(cp.cellBuf)])
	if len(cells) == 0 {
		cp.cellBuf = cp.cellBuf[:start]
		return nil, nil
	}
	cp.cellBuf = cp.cellBuf[:start+len(cells)]
	return cells[:len(cells):len(cells)], nil
}

// row copies one stored row; ok is false when opts selects none of its cells.
func (cp *copier) row(k, v []byte, opts backends.ReadOptions) (backends.Row, bool, error) {
	cells, err := cp.cells(v, opts)
	if err != nil || len(cells) == 0 {
		return backends.Row{}, false, err
	}
	return backends.Row{Key: cp.bytes(k), Cells: cells}, true, nil
}

func selected(c *cellRef, cols []backends.Column) bool {
	return driverkit.Selected(cols, c.fam, c.qual)
}
