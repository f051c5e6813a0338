package local

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// A row is stored as one bbolt value: a format byte, then its cells sorted by (family, qualifier), then
// newest first, the table's MaxVersions at most per column:
//
//	cell   = uvarint(len(qualifier)<<1 | newFamily) [uvarint(len(family)) family] qualifier
//	         uvarint(timestamp) uvarint(len(value)) value
//
// The family is written only when it differs from the previous cell's (newFamily = 1), since rows
// usually hold one or two families.
const rowFormat = 1

// errCorrupt marks a stored row that does not decode.
var errCorrupt = errors.New("local: corrupt row")

// cellRef is a cell whose bytes point into a buffer (a stored value, or a caller's mutation).
type cellRef struct {
	fam, qual, val []byte
	ts             int64
}

func compareRef(a, b *cellRef) int {
	if c := bytes.Compare(a.fam, b.fam); c != 0 {
		return c
	}
	return bytes.Compare(a.qual, b.qual)
}

// encodedLen is the length appendCells writes for cells.
func encodedLen(cells []cellRef) int {
	n := 1
	for i := range cells {
		c := &cells[i]
		h := uint64(len(c.qual)) << 1
		if i == 0 || !bytes.Equal(c.fam, cells[i-1].fam) {
			h |= 1
			n += uvarintLen(uint64(len(c.fam))) + len(c.fam)
		}
		n += uvarintLen(h) + len(c.qual) + uvarintLen(uint64(c.ts)) + uvarintLen(uint64(len(c.val))) + len(c.val)
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// appendCells encodes cells (sorted, one per column) as a row.
func appendCells(dst []byte, cells []cellRef) []byte {
	dst = append(dst, rowFormat)
	var fam []byte
	for i := range cells {
		c := &cells[i]
		newFam := i == 0 || !bytes.Equal(c.fam, fam)
		h := uint64(len(c.qual)) << 1
		if newFam {
			h |= 1
		}
		dst = binary.AppendUvarint(dst, h)
		if newFam {
			dst = binary.AppendUvarint(dst, uint64(len(c.fam)))
			dst = append(dst, c.fam...)
			fam = c.fam
		}
		dst = append(dst, c.qual...)
		dst = binary.AppendUvarint(dst, uint64(c.ts))
		dst = binary.AppendUvarint(dst, uint64(len(c.val)))
		dst = append(dst, c.val...)
	}
	return dst
}

// decodeCells appends the cells of a stored row to dst; they point into v.
func decodeCells(dst []cellRef, v []byte) ([]cellRef, error) {
	if len(v) == 0 || v[0] != rowFormat {
		return dst, errCorrupt
	}
	p := v[1:]
	var fam []byte
	first := true
	for len(p) > 0 {
		h, n := binary.Uvarint(p)
		if n <= 0 {
			return dst, errCorrupt
		}
		p = p[n:]
		if h&1 == 1 {
			fl, n := binary.Uvarint(p)
			if n <= 0 || uint64(len(p)-n) < fl {
				return dst, errCorrupt
			}
			fam = p[n : n+int(fl) : n+int(fl)]
			p = p[n+int(fl):]
		} else if first {
			return dst, errCorrupt
		}
		first = false
		ql := h >> 1
		if uint64(len(p)) < ql {
			return dst, errCorrupt
		}
		qual := p[:ql:ql]
		p = p[ql:]
		ts, n := binary.Uvarint(p)
		if n <= 0 {
			return dst, errCorrupt
		}
		p = p[n:]
		vl, n := binary.Uvarint(p)
		if n <= 0 || uint64(len(p)-n) < vl {
			return dst, errCorrupt
		}
		val := p[n : n+int(vl) : n+int(vl)]
		p = p[n+int(vl):]
		dst = append(dst, cellRef{fam: fam, qual: qual, val: val, ts: int64(ts)})
	}
	return dst, nil
}

// change is one validated mutation, prepared outside the write transaction.
type change struct {
	key   []byte
	del   bool
	cells []cellRef // put: sorted, the versions kept per column, stamped; delete: the columns named
	enc   []byte    // put: the cells encoded, written as is when the row is new
	// A put with cells of timestamp 0 (stamped: the store stamps them) is prepared with a guess of
	// its stamp, now; the write transaction replaces it with the stamp it gives (see restamp).
	stamped    bool
	allStamped bool // every cell, so restamping keeps the cells' order
	now        int64
}

// arena serves one Apply's prepared cells and encodings from a few large allocations, and shares
// the byte forms of family and qualifier names among its rows.
type arena struct {
	refs  []cellRef
	buf   []byte
	names map[string][]byte
}

func (a *arena) cellRefs(n int) []cellRef {
	if cap(a.refs)-len(a.refs) < n {
		a.refs = make([]cellRef, 0, max(n, min(2*cap(a.refs), 1024), 16))
	}
	s := a.refs[len(a.refs) : len(a.refs)+n : len(a.refs)+n]
	a.refs = a.refs[:len(a.refs)+n]
	return s
}

// bytes returns a buffer of length 0 and capacity n. Buffers handed out are never written again:
// bbolt keeps referring to a value until the transaction commits.
func (a *arena) bytes(n int) []byte {
	if n > 16<<10 {
		return make([]byte, 0, n)
	}
	if cap(a.buf)-len(a.buf) < n {
		// Chunks double from 4 KiB: a one-row call must not clear 256 KiB (it was a fifth of an
		// indexed import's CPU), and a large batch still takes few allocations.
		a.buf = make([]byte, 0, max(n, min(2*cap(a.buf), 256<<10), 4<<10))
	}
	start := len(a.buf)
	a.buf = a.buf[:start+n]
	return a.buf[start : start : start+n]
}

func (a *arena) name(s string) []byte {
	if b, ok := a.names[s]; ok {
		return b
	}
	b := []byte(s)
	if a.names == nil {
		a.names = map[string][]byte{}
	}
	if len(a.names) < 1024 {
		a.names[s] = b
	}
	return b
}

// prepare validates m and stamps, sorts and encodes its cells. families is nil when the table accepts
// any family. The change refers to m's keys and values, which the caller keeps until Apply returns.
func prepare(families map[string]bool, versions int, m *backends.Mutation, now int64, a *arena) (change, error) {
	if err := driverkit.CheckMutation(families, MaxKeyLen, m); err != nil {
		return change{}, err
	}
	c := change{key: m.Key, del: m.Delete, cells: a.cellRefs(len(m.Cells)), now: now}
	stamped := 0
	for i := range m.Cells {
		mc := &m.Cells[i]
		ts := mc.Timestamp
		if ts == 0 && !m.Delete { // a delete's 0 is every version
			ts = now
			stamped++
		}
		c.cells[i] = cellRef{fam: a.name(mc.Family), qual: a.name(mc.Qualifier), ts: ts}
		if !m.Delete {
			c.cells[i].val = mc.Value
		}
	}
	if m.Delete {
		return c, nil
	}
	c.stamped, c.allStamped = stamped > 0, stamped == len(m.Cells)
	if len(c.cells) > 1 {
		c.cells = driverkit.KeepVersions(c.cells, versions, compareCells, refTS)
	}
	c.enc = appendCells(a.bytes(encodedLen(c.cells)), c.cells)
	if len(c.enc) > maxRowBytes {
		return change{}, fmt.Errorf("%w: row of %d bytes, the limit is %d", backends.ErrInvalidArgument, len(c.enc), maxRowBytes)
	}
	return c, nil
}

// restamp gives c's store-stamped cells the stamp its write transaction assigns, in place of the
// guess prepare made. m is the mutation c was prepared from, by prepare(families, versions, m, ...);
// a serves the new encoding (bbolt may still refer to the old one until the commit).
func restamp(c *change, m *backends.Mutation, families map[string]bool, versions int, stamp int64, a *arena) error {
	if !c.stamped || c.now == stamp {
		return nil
	}
	if !c.allStamped {
		// Explicit versions among them: the versions kept may change with the stamp.
		nc, err := prepare(families, versions, m, stamp, a)
		if err != nil {
			return err
		}
		*c = nc
		return nil
	}
	for i := range c.cells {
		c.cells[i].ts = stamp
	}
	c.now = stamp
	c.enc = appendCells(a.bytes(encodedLen(c.cells)), c.cells)
	if len(c.enc) > maxRowBytes {
		return fmt.Errorf("%w: row of %d bytes, the limit is %d", backends.ErrInvalidArgument, len(c.enc), maxRowBytes)
	}
	return nil
}

func compareCells(a, b cellRef) int { return compareRef(&a, &b) }
func refTS(c cellRef) int64         { return c.ts }

// mergePut returns the row old with c's cells written over it, keeping versions of each column, or
// nil when no cell of c is kept (nothing to write). scratch is reused for decoding.
func mergePut(old []byte, c *change, versions int, scratch []cellRef) ([]byte, []cellRef, error) {
	olds, err := decodeCells(scratch[:0], old)
	if err != nil {
		return nil, olds, err
	}
	out, changed := driverkit.MergeVersions(olds, c.cells, versions, compareCells, refTS)
	if !changed {
		return nil, olds, nil
	}
	enc := appendCells(make([]byte, 0, encodedLen(out)), out)
	if len(enc) > maxRowBytes {
		return nil, olds, fmt.Errorf("%w: row would grow to %d bytes, the limit is %d", backends.ErrInvalidArgument, len(enc), maxRowBytes)
	}
	return enc, olds, nil
}

// mergeDelete returns the row old without the columns c names (a cell with an empty qualifier names a
// whole family), whether anything is left, and whether anything was removed.
func mergeDelete(old []byte, c *change, scratch []cellRef) (enc []byte, left, removed bool, _ []cellRef, _ error) {
	olds, err := decodeCells(scratch[:0], old)
	if err != nil {
		return nil, false, false, olds, err
	}
	kept := make([]cellRef, 0, len(olds))
	for _, o := range olds {
		if slices.ContainsFunc(c.cells, func(d cellRef) bool {
			return driverkit.Deletes(d.fam, d.qual, d.ts, o.fam, o.qual, o.ts)
		}) {
			removed = true
			continue
		}
		kept = append(kept, o)
	}
	if !removed || len(kept) == 0 {
		return nil, len(kept) > 0, removed, olds, nil
	}
	return appendCells(make([]byte, 0, encodedLen(kept)), kept), true, true, olds, nil
}
