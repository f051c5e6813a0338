package driverkit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// TestSplitCells: a filter's row predicates and cell leaves, nested Ands flattened.
func TestSplitCells(t *testing.T) {
	and := func(fs ...backends.Filter) backends.Filter {
		return backends.Filter{Kind: backends.FilterAnd, Subs: fs}
	}
	pred := backends.ValueFilter(backends.Column{Family: "d", Qualifier: "q"}, backends.Equal, nil)
	page := backends.CellsPerRowFilter(0, 1)
	fam := backends.FamilyRegexFilter("d")
	tests := []struct {
		name        string
		f           backends.Filter
		rows, cells int // row predicates (-1: none), cell leaves
	}{
		{"predicate", pred, 1, 0},
		{"cell leaf", page, -1, 1},
		{"and", and(pred, page), 1, 1},
		{"nested", and(and(pred, fam), and(and(page)), pred), 2, 2},
	}
	for _, tt := range tests {
		if err := driverkit.CheckFilter(&tt.f, nil); err != nil {
			t.Fatalf("%s: Check: %v", tt.name, err)
		}
		rows, cells := driverkit.SplitCells(&tt.f)
		n := -1
		switch {
		case rows == nil:
		case rows.Kind == backends.FilterAnd:
			n = len(rows.Subs)
		default:
			n = 1
		}
		if n != tt.rows || len(cells) != tt.cells {
			t.Errorf("%s: %d row predicates, %d cell leaves; want %d, %d", tt.name, n, len(cells), tt.rows, tt.cells)
		}
	}
}

// TestApplyCells: Apply keeps a nil filter's cells, returns nil for a row trimmed to nothing, and
// trims in place without touching what it did not keep.
func TestApplyCells(t *testing.T) {
	mk := func() []backends.Cell {
		var cs []backends.Cell
		for _, q := range []string{"a", "b", "c", "d"} {
			cs = append(cs, backends.Cell{Family: "f", Qualifier: q, Value: []byte(q)})
		}
		return cs
	}
	text := func(cs []backends.Cell) string {
		var b strings.Builder
		for _, c := range cs {
			b.WriteString(c.Qualifier)
		}
		return b.String()
	}
	var none *backends.Filter
	if got := text(driverkit.Apply(none, mk())); got != "abcd" {
		t.Errorf("nil filter: %q", got)
	}
	tests := []struct {
		f    backends.Filter
		want string
	}{
		{backends.QualifierRangeFilter([]byte("b"), false, nil, false), "cd"},
		{backends.QualifierRangeFilter(nil, false, []byte("b"), false), "a"},
		{backends.CellsPerRowFilter(1, 2), "bc"},
		{backends.CellsPerRowFilter(4, 0), ""},
		{backends.FamilyRegexFilter("^g$"), ""},
		{backends.Filter{Kind: backends.FilterAnd, Subs: []backends.Filter{backends.QualifierRegexFilter("[bd]"), backends.CellsPerRowFilter(1, 0)}}, "d"},
	}
	for _, tt := range tests {
		if err := driverkit.CheckFilter(&tt.f, nil); err != nil {
			t.Fatalf("%v: Check: %v", tt.f, err)
		}
		cs := mk()
		got := driverkit.Apply(&tt.f, cs)
		if text(got) != tt.want || (tt.want == "" && got != nil) {
			t.Errorf("%s: Apply = %q (nil: %v), want %q", fmt.Sprint(tt.f.Kind), text(got), got == nil, tt.want)
		}
	}
	// Under Or or Not, Check refuses with ErrUnsupported.
	or := backends.Filter{Kind: backends.FilterOr, Subs: []backends.Filter{backends.CellsPerRowFilter(0, 1)}}
	if err := driverkit.CheckFilter(&or, nil); !errors.Is(err, backends.ErrUnsupported) {
		t.Errorf("cell leaf under Or: %v, want ErrUnsupported", err)
	}
}
