package backends

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckMutation(t *testing.T) {
	fams := map[string]bool{"d": true}
	cell := func(f string, ts int64) Cell {
		return Cell{Family: f, Qualifier: "q", Value: []byte("v"), Timestamp: ts}
	}
	tests := []struct {
		name     string
		families map[string]bool
		m        Mutation
		want     error
	}{
		{"put", fams, Mutation{Key: []byte("k"), Cells: []Cell{cell("d", 0)}}, nil},
		{"delete row", fams, Mutation{Key: []byte("k"), Delete: true}, nil},
		{"any family", nil, Mutation{Key: []byte("k"), Cells: []Cell{cell("x", 1)}}, nil},
		{"empty key", fams, Mutation{Cells: []Cell{cell("d", 0)}}, ErrInvalidKey},
		{"long key", fams, Mutation{Key: []byte(strings.Repeat("k", 9)), Cells: []Cell{cell("d", 0)}}, ErrInvalidKey},
		{"put without cells", fams, Mutation{Key: []byte("k")}, ErrInvalidArgument},
		{"unknown family", fams, Mutation{Key: []byte("k"), Cells: []Cell{cell("x", 0)}}, ErrInvalidArgument},
		{"negative timestamp", fams, Mutation{Key: []byte("k"), Delete: true, Cells: []Cell{cell("d", -1)}}, ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMutation(tc.families, 8, &tc.m)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("CheckMutation = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSelected(t *testing.T) {
	cols := []Column{{Family: "a", Qualifier: "x"}, {Family: "b"}}
	tests := []struct {
		cols      []Column
		fam, qual string
		want      bool
	}{
		{nil, "z", "z", true},
		{cols, "a", "x", true},
		{cols, "a", "y", false},
		{cols, "b", "anything", true},
		{cols, "c", "x", false},
		{cols, "ab", "", false},
	}
	for _, tc := range tests {
		if got := Selected(tc.cols, tc.fam, tc.qual); got != tc.want {
			t.Errorf("Selected(%v, %q, %q) = %v, want %v", tc.cols, tc.fam, tc.qual, got, tc.want)
		}
		if got := Selected(tc.cols, []byte(tc.fam), []byte(tc.qual)); got != tc.want {
			t.Errorf("Selected(%v, []byte %q, %q) = %v, want %v", tc.cols, tc.fam, tc.qual, got, tc.want)
		}
	}
	// The embedded store calls it per stored cell: it must not allocate.
	fam, qual := []byte("b"), []byte("x")
	if n := testing.AllocsPerRun(100, func() { Selected(cols, fam, qual) }); n != 0 {
		t.Errorf("Selected allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(100, func() { Covers(fam, qual, fam, qual) }); n != 0 {
		t.Errorf("Covers allocates %v times per call", n)
	}
}
