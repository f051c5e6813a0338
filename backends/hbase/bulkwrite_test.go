package hbase

import (
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
)

// TestPartition: rows go to the region holding them, and a spill empties the buffer into one
// sorted run per region that holds cells.
func TestPartition(t *testing.T) {
	spans := []regionSpan{{End: []byte("4")}, {Start: []byte("4"), End: []byte("8")}, {Start: []byte("8")}}
	for key, want := range map[string]int{"": 0, "0": 0, "3\xff": 0, "4": 1, "7": 1, "8": 2, "\xff": 2} {
		if got := regionOf(spans, []byte(key)); got != want {
			t.Errorf("regionOf(%q) = %d, want %d", key, got, want)
		}
	}
	if got := regionOf([]regionSpan{{}}, []byte("x")); got != 0 {
		t.Errorf("one region: %d", got)
	}
	dir := t.TempDir()
	p := newPartition(spans)
	p.add([]hfile.Cell{mkCell("5", "d", "q", 1, "a")})
	p.add([]hfile.Cell{mkCell("1", "d", "q", 1, "b"), mkCell("1", "d", "p", 1, "c")})
	if want := 3*cellOverhead + 3 + 3 + 3; p.buffered != want || p.peak != want {
		t.Fatalf("buffered %d, peak %d, want %d", p.buffered, p.peak, want)
	}
	n, err := p.spill(dir)
	if err != nil || n != 2 || p.buffered != 0 || p.buf[0] != nil || len(p.runs[0]) != 1 || len(p.runs[1]) != 1 || len(p.runs[2]) != 0 {
		t.Fatalf("spill: %d runs, %v, buffered %d, runs %v", n, err, p.buffered, p.runs)
	}
	var got []hfile.Cell
	for c, err := range readRun(p.runs[0][0]) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if want := []hfile.Cell{mkCell("1", "d", "p", 1, "c"), mkCell("1", "d", "q", 1, "b")}; !slices.EqualFunc(got, want, sameRunCell) {
		t.Fatalf("region 0's run: %v", got)
	}
}
