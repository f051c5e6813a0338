package hfile

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"
)

// fixture is one file the tests write: by the unit tests, read back by this package's reader; by
// the integration test, read by HBase's own.
type fixture struct {
	name   string
	opts   Options
	cells  []Cell
	levels int // data index levels the file must have
}

var (
	family    = []byte("f")
	createdAt = time.UnixMilli(1_700_000_000_000)
)

// fixtures covers what a store file can hold and how big it can grow: one block, many blocks with
// a one-level index, two, three and four index levels (small index blocks force them), gzip, many
// versions and every delete marker, values bigger than a block with many checksum chunks, and no
// cells at all.
func fixtures() []fixture {
	opts := func(o Options) Options {
		o.Family, o.CreateTime = family, createdAt
		return o
	}
	return []fixture{
		{"tiny", opts(Options{}), puts(3, 1), 1},
		{"multi-block", opts(Options{BlockSize: 1024}), puts(5000, 1), 1},
		{"two-level", opts(Options{BlockSize: 512, IndexBlockSize: 1024}), puts(5000, 1), 2},
		{"three-level", opts(Options{BlockSize: 128, IndexBlockSize: 1024}), puts(12000, 1), 3},
		{"four-level", opts(Options{BlockSize: 128, IndexBlockSize: 512, MinIndexEntries: 4}), puts(12000, 1), 4},
		{"gzip-two-level", opts(Options{BlockSize: 512, IndexBlockSize: 1024, Compression: CompressionGzip}), puts(5000, 1), 2},
		{"versions-and-deletes", opts(Options{BlockSize: 256, SourceTask: "attempt_brine_0001_m_000000_0"}), versionsAndDeletes(), 1},
		{"big-values", opts(Options{BlockSize: 4096, BytesPerChecksum: 512}), bigValues(), 1},
		{"empty", opts(Options{}), nil, 1},
	}
}

// puts returns n rows of versions cells each, in HBase order.
func puts(n, versions int) []Cell {
	var cells []Cell
	for i := range n {
		for v := range versions {
			cells = append(cells, Cell{
				Row: fmt.Appendf(nil, "row%06d", i), Family: family, Qualifier: []byte("q"),
				Timestamp: int64(1000 + i + versions - v), Value: fmt.Appendf(nil, "value %d.%d", i, v),
			})
		}
	}
	return cells
}

// versionsAndDeletes has rows of several columns with ten versions each, binary keys, and every
// kind of delete marker at timestamps that tie with puts (the marker sorts first).
func versionsAndDeletes() []Cell {
	var cells []Cell
	for r := range 40 {
		row := []byte{byte(r), 0x00, 0xff, 'r'}
		cells = append(cells, Cell{Row: row, Family: family, Timestamp: 50, Type: TypeDeleteFamily})
		cells = append(cells, Cell{Row: row, Family: family, Timestamp: 40, Type: TypeDeleteFamilyVersion})
		for q := range 3 {
			qual := fmt.Appendf(nil, "c%d", q)
			cells = append(cells, Cell{Row: row, Family: family, Qualifier: qual, Timestamp: 30, Type: TypeDeleteColumn})
			cells = append(cells, Cell{Row: row, Family: family, Qualifier: qual, Timestamp: 20, Type: TypeDelete})
			for ts := int64(1); ts <= 10; ts++ {
				cells = append(cells, Cell{Row: row, Family: family, Qualifier: qual, Timestamp: ts * 5, Value: fmt.Appendf(nil, "%d/%d/%d", r, q, ts)})
			}
		}
	}
	slices.SortStableFunc(cells, Compare)
	return cells
}

func bigValues() []Cell {
	var cells []Cell
	for i := range 6 {
		cells = append(cells, Cell{
			Row: fmt.Appendf(nil, "big%d", i), Family: family, Qualifier: []byte("blob"), Timestamp: 7,
			Value: bytes.Repeat([]byte{byte('a' + i)}, 10_000*(i+1)),
		})
	}
	return cells
}

// writeFile writes fx's cells with fx's options and returns the file's bytes.
func writeFile(t testing.TB, fx fixture) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, fx.opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fx.cells {
		if err := w.Append(c); err != nil {
			t.Fatalf("%s: Append(%s): %v", fx.name, describe(c), err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("%s: Close: %v", fx.name, err)
	}
	return buf.Bytes()
}

// readAll opens data with this package's reader and returns its cells.
func readAll(t testing.TB, data []byte) (*Reader, []Cell) {
	t.Helper()
	r, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var cells []Cell
	for c, err := range r.Cells() {
		if err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	return r, cells
}

func equalCells(a, b Cell) bool {
	return Compare(a, b) == 0 && bytes.Equal(a.Value, b.Value) && a.typ() == b.typ()
}
