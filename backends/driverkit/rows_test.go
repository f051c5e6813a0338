package driverkit

import (
	"errors"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
)

func TestCheckMutation(t *testing.T) {
	fams := map[string]bool{"d": true}
	cell := func(f string, ts int64) backends.Cell {
		return backends.Cell{Family: f, Qualifier: "q", Value: []byte("v"), Timestamp: ts}
	}
	tests := []struct {
		name     string
		families map[string]bool
		m        backends.Mutation
		want     error
	}{
		{"put", fams, backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("d", 0)}}, nil},
		{"delete row", fams, backends.Mutation{Key: []byte("k"), Delete: true}, nil},
		{"any family", nil, backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("x", 1)}}, nil},
		{"empty key", fams, backends.Mutation{Cells: []backends.Cell{cell("d", 0)}}, backends.ErrInvalidKey},
		{"long key", fams, backends.Mutation{Key: []byte(strings.Repeat("k", 9)), Cells: []backends.Cell{cell("d", 0)}}, backends.ErrInvalidKey},
		{"put without cells", fams, backends.Mutation{Key: []byte("k")}, backends.ErrInvalidArgument},
		{"unknown family", fams, backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{cell("x", 0)}}, backends.ErrInvalidArgument},
		{"negative timestamp", fams, backends.Mutation{Key: []byte("k"), Delete: true, Cells: []backends.Cell{cell("d", -1)}}, backends.ErrInvalidArgument},
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
	cols := []backends.Column{{Family: "a", Qualifier: "x"}, {Family: "b"}}
	tests := []struct {
		cols      []backends.Column
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
