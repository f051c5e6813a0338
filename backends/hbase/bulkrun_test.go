package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
)

func mkCell(row, fam, qual string, ts int64, val string) hfile.Cell {
	return hfile.Cell{Row: []byte(row), Family: []byte(fam), Qualifier: []byte(qual), Timestamp: ts, Type: hfile.TypePut, Value: []byte(val)}
}

func sameRunCell(a, b hfile.Cell) bool {
	return hfile.Compare(a, b) == 0 && a.Type == b.Type && bytes.Equal(a.Value, b.Value)
}

func encodeRun(cells []hfile.Cell) []byte {
	var b []byte
	for _, c := range cells {
		b = appendRunCell(b, c)
	}
	return append(b, runEnd)
}

func decodeAll(data []byte) ([]hfile.Cell, error) {
	var out []hfile.Cell
	for c, err := range decodeRun(bytes.NewReader(data)) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// TestRunCodec: runs round-trip exactly, and damaged ones fail with errBadRun.
func TestRunCodec(t *testing.T) {
	big := bytes.Repeat([]byte("v"), 200<<10) // past readRunField's small-read path
	cells := []hfile.Cell{
		mkCell("a", "d", "", 0, ""),
		mkCell("a", "d", "q", 1<<62, "x"),
		{Row: []byte{0, 0xff}, Family: []byte("f"), Qualifier: []byte{0}, Timestamp: 7, Type: hfile.TypePut, Value: big},
	}
	data := encodeRun(cells)
	got, err := decodeAll(data)
	if err != nil || !slices.EqualFunc(got, cells, sameRunCell) {
		t.Fatalf("round trip: %v, %d cells", err, len(got))
	}
	if got, err := decodeAll([]byte{runEnd}); err != nil || len(got) != 0 {
		t.Fatalf("empty run: %v %v", got, err)
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"nothing", nil},
		{"no end tag", data[:len(data)-1]},
		{"cut in a value", data[:len(data)/2]},
		{"after the end", append(slices.Clone(data), 1)},
		{"unknown tag", []byte{7}},
		{"row too long", append([]byte{runCell}, 0xff, 0xff, 0x03)},
		{"huge length, few bytes", append([]byte{runCell, 1, 'r', 1, 'd'}, 0xff, 0xff, 0xff, 0xff, 0x07, 'x')},
	} {
		if _, err := decodeAll(tc.data); !errors.Is(err, errBadRun) {
			t.Errorf("%s: %v, want errBadRun", tc.name, err)
		}
	}
}

// FuzzRunCodec: any bytes decode without panic; what decodes encodes back to bytes that decode
// to the same cells (not always the same bytes: a uvarint may have been written longer).
func FuzzRunCodec(f *testing.F) {
	f.Add(encodeRun([]hfile.Cell{mkCell("a", "d", "q", 5, "v")}))
	f.Add([]byte{runEnd})
	f.Add([]byte{runCell, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		cells, err := decodeAll(data)
		if err != nil {
			return
		}
		again, err := decodeAll(encodeRun(cells))
		if err != nil || !slices.EqualFunc(again, cells, sameRunCell) {
			t.Fatalf("re-encoded cells of %x decode to %v (%v)", data, again, err)
		}
	})
}

// TestMergeRuns: runs and the rest merge in HBase order; of equal keys the last in input wins.
func TestMergeRuns(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var input []hfile.Cell
	for i := range 3000 {
		row := fmt.Sprintf("r%03d", rng.IntN(200))
		input = append(input, mkCell(row, []string{"a", "b"}[rng.IntN(2)], fmt.Sprintf("q%d", rng.IntN(3)), int64(rng.IntN(4)), fmt.Sprint(i)))
	}
	// The model: last of each key in input order, sorted.
	last := map[string]hfile.Cell{}
	for _, c := range input {
		last[fmt.Sprintf("%s/%s/%s/%d", c.Row, c.Family, c.Qualifier, c.Timestamp)] = c
	}
	var want []hfile.Cell
	for _, c := range last {
		want = append(want, c)
	}
	slices.SortFunc(want, hfile.Compare)

	// Four runs of 700 and a rest of 200, as the partition would spill them.
	var runs []string
	for k := range 4 {
		part := slices.Clone(input[k*700 : (k+1)*700])
		sortRunCells(part)
		path := filepath.Join(dir, fmt.Sprint("run", k))
		if err := writeRun(path, part); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, path)
	}
	rest := slices.Clone(input[2800:])
	sortRunCells(rest)
	var got []hfile.Cell
	for c, err := range mergeRuns(context.Background(), runs, rest) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if !slices.EqualFunc(got, want, sameRunCell) {
		t.Fatalf("merged %d cells, want %d", len(got), len(want))
	}
	// Stopping early stops every run (goleak above), and a damaged run is an error.
	for range mergeRuns(context.Background(), runs, rest) {
		break
	}
	if err := os.WriteFile(runs[2], []byte{runCell, 3}, 0o600); err != nil {
		t.Fatal(err)
	}
	var merr error
	for _, err := range mergeRuns(context.Background(), runs, rest) {
		merr = err
	}
	if !errors.Is(merr, errBadRun) {
		t.Fatalf("damaged run: %v, want errBadRun", merr)
	}
}
