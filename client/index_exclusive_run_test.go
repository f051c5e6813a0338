package client

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

// TestEntryRun: a run gives back, sorted by key, the mutations it was given, cells and all, from
// batches added one after another.
func TestEntryRun(t *testing.T) {
	for _, tc := range []struct {
		name    string
		batches [][]Mutation
	}{
		{"empty", nil},
		{"one put", [][]Mutation{{{Key: []byte("k"), Cells: []Cell{{Family: "ix", Qualifier: "s", Value: []byte("v1"), Timestamp: 7}}}}}},
		{"deletes", [][]Mutation{{{Key: []byte("b"), Delete: true}, {Key: []byte("a"), Delete: true}}}},
		{"batches out of order", [][]Mutation{
			{{Key: []byte("m\x00z"), Cells: []Cell{{Family: "ix", Qualifier: "c", Value: []byte{1, 2}}, {Family: "ix", Qualifier: "k", Value: []byte("o1")}, {Family: "ix", Qualifier: "s", Value: []byte("v")}}}},
			{{Key: []byte("a"), Cells: []Cell{{Family: "ix", Qualifier: "s", Value: []byte("v"), Timestamp: math.MinInt64}}}, {Key: []byte("m"), Cells: []Cell{{Family: "d", Qualifier: "", Value: nil, Timestamp: math.MaxInt64}}}},
		}},
		{"a key given twice", [][]Mutation{{{Key: []byte("k"), Cells: []Cell{{Family: "ix", Qualifier: "s", Value: []byte("v")}}}}, {{Key: []byte("k"), Cells: []Cell{{Family: "ix", Qualifier: "s", Value: []byte("v")}}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r entryRun
			var want []Mutation
			size := 0
			for _, b := range tc.batches {
				size += r.add(b)
				want = append(want, b...)
			}
			if size != len(r.buf)+8*len(r.offs) {
				t.Errorf("add reported %d bytes, the run holds %d and %d offsets", size, len(r.buf), len(r.offs))
			}
			r.sort()
			got := r.mutations(r.offs, map[string]string{})
			slices.SortStableFunc(want, func(a, b Mutation) int { return bytes.Compare(a.Key, b.Key) })
			if !sameMutations(got, want) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

// FuzzEntryRun: whatever mutations a run holds, it gives them back, sorted by key.
func FuzzEntryRun(f *testing.F) {
	f.Add([]byte("k1\x00ix\x00s\x00v\x00"), int64(3), uint8(2))
	f.Add([]byte{}, int64(-1), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, ts int64, cells uint8) {
		// Cut data into keys and values at its zero bytes; each mutation takes cells%4 cells.
		parts := bytes.Split(data, []byte{0})
		var ms []Mutation
		for len(parts) > 0 {
			m := Mutation{Key: parts[0], Delete: len(parts[0])%2 == 1}
			parts = parts[1:]
			for range cells % 4 {
				if len(parts) < 3 {
					break
				}
				m.Cells = append(m.Cells, Cell{Family: string(parts[0]), Qualifier: string(parts[1]), Value: parts[2], Timestamp: ts})
				parts = parts[3:]
			}
			ms = append(ms, m)
		}
		var r entryRun
		half := len(ms) / 2
		r.add(ms[:half])
		r.add(ms[half:])
		r.sort()
		got := r.mutations(r.offs, map[string]string{})
		if !slices.IsSortedFunc(got, func(a, b Mutation) int { return bytes.Compare(a.Key, b.Key) }) {
			t.Fatalf("not sorted: %+v", got)
		}
		want := slices.Clone(ms)
		slices.SortStableFunc(want, func(a, b Mutation) int { return bytes.Compare(a.Key, b.Key) })
		// Two mutations of one key come back in either order: compare each key's group as a set.
		if len(got) != len(want) {
			t.Fatalf("got %d mutations, want %d", len(got), len(want))
		}
		for i := 0; i < len(want); {
			j := i
			for j < len(want) && bytes.Equal(want[j].Key, want[i].Key) {
				j++
			}
			for _, w := range want[i:j] {
				if !slices.ContainsFunc(got[i:j], func(g Mutation) bool { return sameMutations([]Mutation{g}, []Mutation{w}) }) {
					t.Fatalf("lost %+v; got %+v", w, got[i:j])
				}
			}
			i = j
		}
	})
}

// sameMutations compares keys, deletes and cells, an empty value equal to a nil one.
func sameMutations(a, b []Mutation) bool {
	return slices.EqualFunc(a, b, func(x, y Mutation) bool {
		return bytes.Equal(x.Key, y.Key) && x.Delete == y.Delete && slices.EqualFunc(x.Cells, y.Cells, func(c, d Cell) bool {
			return c.Family == d.Family && c.Qualifier == d.Qualifier && bytes.Equal(c.Value, d.Value) && c.Timestamp == d.Timestamp
		})
	})
}
