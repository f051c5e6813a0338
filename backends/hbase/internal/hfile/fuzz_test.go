package hfile

import (
	"bytes"
	"slices"
	"testing"
)

// cellsFrom turns fuzz input into cells: each takes a few bytes for its shape (row, qualifier and
// value lengths, timestamp, type) and its bytes from what follows, so that the fuzzer reaches
// shared row prefixes, empty qualifiers, equal keys and every type.
func cellsFrom(data []byte) []Cell {
	types := []Type{TypePut, TypePut, TypeDelete, TypeDeleteFamilyVersion, TypeDeleteColumn, TypeDeleteFamily}
	take := func(n int) []byte {
		n = min(n, len(data))
		b := data[:n:n]
		data = data[n:]
		return b
	}
	var cells []Cell
	for len(data) >= 4 && len(cells) < 500 {
		shape := take(4)
		row := take(int(shape[0]%6) + 1)
		if len(row) == 0 {
			break
		}
		cells = append(cells, Cell{
			Row:       row,
			Family:    family,
			Qualifier: take(int(shape[1] % 4)),
			Timestamp: int64(shape[2] % 8),
			Type:      types[int(shape[3])%len(types)],
			Value:     take(int(shape[3] / 8)),
		})
	}
	slices.SortStableFunc(cells, Compare)
	return cells
}

// FuzzRoundTrip writes the cells of the input with block and index sizes of the input (small ones
// force many blocks and index levels), reads the file back with this package's reader, and wants
// the same cells in the same order, and an index whose leaf level names every data block by its
// first key.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("\x01\x00\x01\x04rowqvalue"), uint16(64), uint8(0), uint8(0), false)
	f.Add(bytes.Repeat([]byte("\x03\x02\x05\x21abcdefgh"), 300), uint16(40), uint8(60), uint8(1), true)
	f.Add(bytes.Repeat([]byte("\x05\x01\x07\x4cz\xff\x00q"), 500), uint16(1), uint8(1), uint8(3), false)
	f.Fuzz(func(t *testing.T, data []byte, blockSize uint16, indexSize, minEntries uint8, gz bool) {
		cells := cellsFrom(data)
		opts := Options{
			Family:          family,
			BlockSize:       int(blockSize%4096) + 1,
			IndexBlockSize:  int(indexSize) + 1,
			MinIndexEntries: int(minEntries%8) + 2, // 1 would take a level off per level, HBase's too
			CreateTime:      createdAt,
		}
		if gz {
			opts.Compression = CompressionGzip
		}
		file := writeFile(t, fixture{name: "fuzz", opts: opts, cells: cells})
		r, got := readAll(t, file)
		if len(got) != len(cells) {
			t.Fatalf("read %d cells, wrote %d", len(got), len(cells))
		}
		for i := range got {
			if !equalCells(got[i], cells[i]) {
				t.Fatalf("cell %d: read %s, wrote %s", i, describe(got[i]), describe(cells[i]))
			}
		}
		leaves, err := r.DataIndex()
		if err != nil {
			t.Fatal(err)
		}
		if r.Trailer.NumDataIndexLevels < 1 || r.Trailer.NumDataIndexLevels > 16 {
			t.Fatalf("%d index levels", r.Trailer.NumDataIndexLevels)
		}
		for i := 1; i < len(leaves); i++ {
			a, _ := ParseKey(leaves[i-1].Key)
			b, _ := ParseKey(leaves[i].Key)
			if Compare(a, b) >= 0 || leaves[i-1].Offset >= leaves[i].Offset {
				t.Fatalf("leaf entries %d and %d out of order: %s at %d, %s at %d", i-1, i, describe(a), leaves[i-1].Offset, describe(b), leaves[i].Offset)
			}
		}
		if len(cells) > 0 && (len(leaves) == 0 || !bytes.Equal(leaves[0].Key, appendKey(nil, cells[0]))) {
			t.Fatalf("the first leaf entry does not name the first cell")
		}
	})
}

// FuzzOpen feeds the reader arbitrary bytes after a valid file's head: it must return errors,
// never panic or allocate without bound.
func FuzzOpen(f *testing.F) {
	f.Add(writeFile(f, fixtures()[0]))
	f.Add(writeFile(f, fixture{name: "two-level", opts: Options{Family: family, BlockSize: 64, IndexBlockSize: 128, CreateTime: createdAt}, cells: puts(60, 2)}))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		_, _ = r.DataIndex()
		for _, err := range r.Cells() {
			if err != nil {
				return
			}
		}
	})
}
