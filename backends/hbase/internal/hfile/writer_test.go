package hfile

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestCompare(t *testing.T) {
	base := Cell{Row: []byte("r"), Family: family, Qualifier: []byte("q"), Timestamp: 10, Type: TypePut}
	with := func(f func(*Cell)) Cell { c := base; f(&c); return c }
	tests := []struct {
		name string
		a, b Cell
		want int
	}{
		{"equal", base, base, 0},
		{"value ignored", base, with(func(c *Cell) { c.Value = []byte("v") }), 0},
		{"zero type is put", base, with(func(c *Cell) { c.Type = 0 }), 0},
		{"row first", with(func(c *Cell) { c.Row = []byte("a"); c.Timestamp = 1 }), base, -1},
		{"row prefix sorts first", with(func(c *Cell) { c.Row = []byte("r\x00") }), base, 1},
		{"family", with(func(c *Cell) { c.Family = []byte("e") }), base, -1},
		{"qualifier", with(func(c *Cell) { c.Qualifier = nil }), base, -1},
		{"newer first", with(func(c *Cell) { c.Timestamp = 11 }), base, -1},
		{"older last", with(func(c *Cell) { c.Timestamp = 9 }), base, 1},
		{"delete before put", with(func(c *Cell) { c.Type = TypeDelete }), base, -1},
		{"delete family before delete column", with(func(c *Cell) { c.Type = TypeDeleteFamily }), with(func(c *Cell) { c.Type = TypeDeleteColumn }), -1},
		{"bytes unsigned", with(func(c *Cell) { c.Row = []byte{0xff} }), with(func(c *Cell) { c.Row = []byte{0x7f} }), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Compare(tt.a, tt.b); got != tt.want {
				t.Errorf("Compare = %d, want %d", got, tt.want)
			}
			if got := Compare(tt.b, tt.a); got != -tt.want {
				t.Errorf("Compare reversed = %d, want %d", got, -tt.want)
			}
		})
	}
}

// TestRoundTrip writes every fixture and reads it back: the cells, the trailer's counts, the index
// walked through all its levels (one leaf entry per data block, each naming its block's first key).
func TestRoundTrip(t *testing.T) {
	for _, fx := range fixtures() {
		t.Run(fx.name, func(t *testing.T) {
			data := writeFile(t, fx)
			r, got := readAll(t, data)
			if len(got) != len(fx.cells) {
				t.Fatalf("read %d cells, wrote %d", len(got), len(fx.cells))
			}
			for i := range got {
				if !equalCells(got[i], fx.cells[i]) {
					t.Fatalf("cell %d: read %s %q, wrote %s %q", i, describe(got[i]), got[i].Value, describe(fx.cells[i]), fx.cells[i].Value)
				}
			}
			tr := r.Trailer
			if tr.NumDataIndexLevels != fx.levels || tr.EntryCount != int64(len(fx.cells)) || tr.Compression != fx.opts.withDefaults().Compression {
				t.Errorf("trailer: %d levels, %d entries, %v; want %d, %d, %v", tr.NumDataIndexLevels, tr.EntryCount, tr.Compression,
					fx.levels, len(fx.cells), fx.opts.withDefaults().Compression)
			}
			if tr.MajorVersion != 3 || tr.MinorVersion != 3 || tr.ComparatorClassName != comparatorName {
				t.Errorf("trailer: version %d.%d, comparator %q", tr.MajorVersion, tr.MinorVersion, tr.ComparatorClassName)
			}
			leaves, err := r.DataIndex()
			if err != nil {
				t.Fatal(err)
			}
			if fx.levels > 1 && len(r.MidKey) != 16 {
				t.Errorf("mid-key metadata of %d bytes, want 16", len(r.MidKey))
			}
			n := 0
			for i, e := range leaves {
				b, err := readBlock(bytes.NewReader(data), e.Offset, int64(len(data)), tr.Compression)
				if err != nil {
					t.Fatalf("leaf entry %d: %v", i, err)
				}
				if b.typ != magicData || b.onDiskSize != e.OnDiskSize {
					t.Fatalf("leaf entry %d points at a %v block of %d bytes, says %d", i, b.typ, b.onDiskSize, e.OnDiskSize)
				}
				first, _, err := parseCell(b.data, true)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(appendKey(nil, first), e.Key) || !equalCells(first, fx.cells[n]) {
					t.Fatalf("leaf entry %d: key %q, block starts with %s, cell %d is %s", i, e.Key, describe(first), n, describe(fx.cells[n]))
				}
				for d := b.data; len(d) > 0; n++ {
					_, m, err := parseCell(d, true)
					if err != nil {
						t.Fatal(err)
					}
					d = d[m:]
				}
			}
			if n != len(fx.cells) {
				t.Errorf("the index's blocks hold %d cells, want %d", n, len(fx.cells))
			}
		})
	}
}

func TestFileInfo(t *testing.T) {
	fx := fixture{name: "deletes", opts: Options{Family: family, CreateTime: createdAt}, cells: versionsAndDeletes(), levels: 1}
	r, _ := readAll(t, writeFile(t, fx))
	from, to, err := r.Info.TimeRange()
	if err != nil {
		t.Fatal(err)
	}
	// Delete-column and delete-family markers stretch the range down to 0.
	if from != 0 || to != 50 {
		t.Errorf("TIMERANGE %d..%d, want 0..50", from, to)
	}
	last := fx.cells[len(fx.cells)-1]
	if !bytes.Equal(r.Info[InfoLastKey], appendKey(nil, last)) {
		t.Errorf("LASTKEY %q, want %q", r.Info[InfoLastKey], appendKey(nil, last))
	}
	int64s := []struct {
		name string
		want int64
	}{
		{InfoEarliestPutTS, 5},
		{InfoDeleteFamilyCount, 40},
		{InfoBulkLoadTime, createdAt.UnixMilli()},
		{InfoCreateTime, createdAt.UnixMilli()},
		{InfoMaxMemstoreTS, 0},
	}
	for _, tt := range int64s {
		if got, ok := r.Info.Int64(tt.name); !ok || got != tt.want {
			t.Errorf("%s = %d (%v), want %d", tt.name, got, ok, tt.want)
		}
	}
	if v, ok := r.Info.Int32(InfoKeyValueVersion); !ok || v != 1 {
		t.Errorf("KEY_VALUE_VERSION = %d (%v), want 1", v, ok)
	}
	if !bytes.Equal(r.Info[InfoMajorCompaction], []byte{0xff}) || !bytes.Equal(r.Info[InfoExcludeFromMinor], []byte{0}) {
		t.Errorf("MAJOR_COMPACTION_KEY %x, EXCLUDE_FROM_MINOR_COMPACTION %x", r.Info[InfoMajorCompaction], r.Info[InfoExcludeFromMinor])
	}
}

func TestAppendRefuses(t *testing.T) {
	cell := Cell{Row: []byte("b"), Family: family, Qualifier: []byte("q"), Timestamp: 5}
	with := func(f func(*Cell)) Cell { c := cell; f(&c); return c }
	tests := []struct {
		name string
		c    Cell
		want error
	}{
		{"earlier row", with(func(c *Cell) { c.Row = []byte("a") }), ErrOutOfOrder},
		{"newer version after older", with(func(c *Cell) { c.Timestamp = 6 }), ErrOutOfOrder},
		{"put before its delete", with(func(c *Cell) { c.Type = TypeDelete }), ErrOutOfOrder},
		{"other family", with(func(c *Cell) { c.Row, c.Family = []byte("c"), []byte("g") }), ErrFamily},
		{"empty row", with(func(c *Cell) { c.Row = nil }), ErrInvalidCell},
		{"row too long", with(func(c *Cell) { c.Row = bytes.Repeat([]byte("c"), MaxRowLen+1) }), ErrInvalidCell},
		{"negative timestamp", with(func(c *Cell) { c.Row, c.Timestamp = []byte("c"), -1 }), ErrInvalidCell},
		{"unknown type", with(func(c *Cell) { c.Row, c.Type = []byte("c"), 5 }), ErrInvalidCell},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, Options{Family: family})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Append(cell); err != nil {
				t.Fatal(err)
			}
			if err := w.Append(tt.c); !errors.Is(err, tt.want) {
				t.Fatalf("Append = %v, want %v", err, tt.want)
			}
			// A refused cell spoils nothing: the next good one is written, and the file holds both.
			next := with(func(c *Cell) { c.Row = []byte("z") })
			if err := w.Append(next); err != nil {
				t.Fatalf("Append after a refusal: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := w.Append(next); !errors.Is(err, ErrClosed) {
				t.Errorf("Append after Close = %v, want ErrClosed", err)
			}
			if _, cells := readAll(t, buf.Bytes()); len(cells) != 2 {
				t.Errorf("file holds %d cells, want 2", len(cells))
			}
		})
	}
}

func TestNewWriterRefuses(t *testing.T) {
	for _, opts := range []Options{{}, {Family: bytes.Repeat([]byte("f"), MaxFamilyLen+1)}, {Family: family, Compression: 6}} {
		if _, err := NewWriter(&bytes.Buffer{}, opts); err == nil {
			t.Errorf("NewWriter(%+v) accepted", opts)
		}
	}
}

// TestChecksums flips one byte in each block kind of a file (header or data) and expects the
// reader to refuse it; HBase's own check of the same corruption is in the integration test.
func TestChecksums(t *testing.T) {
	fx := fixtures()[2] // two-level: data, leaf, root index and file info blocks
	data := writeFile(t, fx)
	r, _ := readAll(t, data)
	leaves, err := r.DataIndex()
	if err != nil {
		t.Fatal(err)
	}
	offsets := map[string]int64{
		"data header": leaves[3].Offset + 10,
		"data cells":  leaves[3].Offset + headerSize + 20,
		"leaf index":  r.Root[1].Offset + headerSize + 5,
		"root index":  r.Trailer.LoadOnOpenOffset + headerSize + 3,
		"file info":   r.Trailer.FileInfoOffset + headerSize + 30,
	}
	for name, off := range offsets {
		t.Run(name, func(t *testing.T) {
			bad := bytes.Clone(data)
			bad[off] ^= 0x20
			rd, err := Open(bytes.NewReader(bad), int64(len(bad)))
			if err == nil {
				if _, err = rd.DataIndex(); err == nil {
					for _, err = range rd.Cells() {
						if err != nil {
							break
						}
					}
				}
			}
			if err == nil {
				t.Fatal("corruption went unseen")
			}
		})
	}
}

func TestVint(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 127, 128, -112, -113, 255, 256, 1 << 20, math.MaxInt32, math.MaxInt64, math.MinInt64} {
		b := appendVint(nil, v)
		got, n := readVint(b)
		if got != v || n != len(b) || vintSize(v) != len(b) {
			t.Errorf("vint %d: encoded %x, read %d in %d bytes", v, b, got, n)
		}
	}
}
