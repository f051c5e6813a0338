package local

import (
	"bytes"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
)

func TestCodecRoundTrip(t *testing.T) {
	cells := []cellRef{
		{fam: []byte("d"), qual: []byte(""), val: []byte{}, ts: 0},
		{fam: []byte("d"), qual: []byte("a"), val: []byte("v"), ts: 1},
		{fam: []byte("d"), qual: bytes.Repeat([]byte("q"), 300), val: bytes.Repeat([]byte{0, 0xFF}, 1000), ts: 1 << 62},
		{fam: []byte(""), qual: []byte("x"), val: nil, ts: 5},
		{fam: []byte("x"), qual: []byte("a"), val: []byte("w"), ts: 1700000000000},
	}
	enc := appendCells(nil, cells)
	if len(enc) != encodedLen(cells) {
		t.Fatalf("encodedLen %d, %d written", encodedLen(cells), len(enc))
	}
	got, err := decodeCells(nil, enc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, cells, func(a, b cellRef) bool {
		return bytes.Equal(a.fam, b.fam) && bytes.Equal(a.qual, b.qual) && bytes.Equal(a.val, b.val) && a.ts == b.ts
	}) {
		t.Fatalf("round trip: %+v", got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(appendCells(nil, []cellRef{{fam: []byte("d"), qual: []byte("q"), val: []byte("v"), ts: 7}}))
	f.Add([]byte{rowFormat, 0})
	f.Add([]byte{rowFormat, 2, 'q'})
	f.Fuzz(func(t *testing.T, b []byte) {
		cells, err := decodeCells(nil, b)
		if err != nil {
			return
		}
		// Whatever decodes re-encodes to the same bytes, unless the input wrote a family where it
		// was not needed (the encoder only writes changes).
		re := appendCells(nil, cells)
		if len(re) != encodedLen(cells) {
			t.Fatalf("encodedLen %d, %d written", encodedLen(cells), len(re))
		}
		again, err := decodeCells(nil, re)
		if err != nil || len(again) != len(cells) {
			t.Fatalf("re-encoding %q: %v", b, err)
		}
		cp := copier{}
		if _, err := cp.cells(b, backends.ReadOptions{Columns: []backends.Column{{Family: "d"}}, MaxVersions: 3}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMergePut(t *testing.T) {
	old := appendCells(nil, []cellRef{
		{fam: []byte("d"), qual: []byte("a"), val: []byte("old-a"), ts: 10},
		{fam: []byte("d"), qual: []byte("c"), val: []byte("old-c"), ts: 10},
	})
	m := backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{
		{Family: "d", Qualifier: "a", Value: []byte("stale"), Timestamp: 5},
		{Family: "d", Qualifier: "b", Value: []byte("new-b"), Timestamp: 5},
		{Family: "d", Qualifier: "c", Value: []byte("tie-c"), Timestamp: 10},
	}}
	c, err := prepare(nil, 1, &m, 99, &arena{})
	if err != nil {
		t.Fatal(err)
	}
	enc, _, err := mergePut(old, &c, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := decodeCells(nil, enc)
	want := []string{"old-a", "new-b", "tie-c"}
	if len(got) != 3 {
		t.Fatalf("merged %d cells", len(got))
	}
	for i, w := range want {
		if string(got[i].val) != w {
			t.Fatalf("cell %d = %q, want %q", i, got[i].val, w)
		}
	}
	// Nothing newer: nothing to write.
	m = backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "a", Value: []byte("stale"), Timestamp: 1}}}
	c, _ = prepare(nil, 1, &m, 99, &arena{})
	if enc, _, err := mergePut(old, &c, 1, nil); err != nil || enc != nil {
		t.Fatalf("stale put rewrote the row: %q, %v", enc, err)
	}
}
