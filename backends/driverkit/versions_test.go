package driverkit_test

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

type v struct {
	col string
	ts  int64
	val string
}

func byCol(a, b v) int      { return cmp.Compare(a.col, b.col) }
func stamp(c v) int64       { return c.ts }
func vs(cells ...v) []v     { return cells }
func fmtV(cells []v) string { return fmt.Sprint(cells) }

func TestKeepVersions(t *testing.T) {
	tests := []struct {
		name string
		in   []v
		n    int
		want []v
	}{
		{"one version: newest, last given on a tie", vs(v{"a", 1, "x"}, v{"a", 3, "y"}, v{"b", 2, "p"}, v{"a", 3, "z"}), 1, vs(v{"a", 3, "z"}, v{"b", 2, "p"})},
		{"n versions, newest first", vs(v{"a", 1, "1"}, v{"a", 3, "3"}, v{"a", 2, "2"}, v{"a", 4, "4"}), 3, vs(v{"a", 4, "4"}, v{"a", 3, "3"}, v{"a", 2, "2"})},
		{"zero means one", vs(v{"a", 1, "1"}, v{"a", 2, "2"}), 0, vs(v{"a", 2, "2"})},
		{"in column order, one each: as given", vs(v{"a", 1, "x"}, v{"b", 9, "y"}, v{"c", 5, "z"}), 1, vs(v{"a", 1, "x"}, v{"b", 9, "y"}, v{"c", 5, "z"})},
		{"in column order but one column twice", vs(v{"a", 1, "x"}, v{"b", 1, "y"}, v{"b", 2, "z"}), 1, vs(v{"a", 1, "x"}, v{"b", 2, "z"})},
		{"out of order after a sorted prefix", vs(v{"a", 1, "x"}, v{"c", 1, "y"}, v{"b", 1, "z"}), 1, vs(v{"a", 1, "x"}, v{"b", 1, "z"}, v{"c", 1, "y"})},
	}
	for _, tt := range tests {
		if got := driverkit.KeepVersions(slices.Clone(tt.in), tt.n, byCol, stamp); !slices.Equal(got, tt.want) {
			t.Errorf("%s: KeepVersions = %s, want %s", tt.name, fmtV(got), fmtV(tt.want))
		}
	}
}

func TestMergeVersions(t *testing.T) {
	tests := []struct {
		name     string
		old, put []v
		n        int
		want     []v
		changed  bool
	}{
		{"older put ignored with one version", vs(v{"a", 5, "old"}), vs(v{"a", 4, "put"}), 1, vs(v{"a", 5, "old"}), false},
		{"newer put wins", vs(v{"a", 5, "old"}), vs(v{"a", 6, "put"}), 1, vs(v{"a", 6, "put"}), true},
		{"tie goes to the put", vs(v{"a", 5, "old"}), vs(v{"a", 5, "put"}), 1, vs(v{"a", 5, "put"}), true},
		{"versions kept", vs(v{"a", 5, "5"}, v{"a", 3, "3"}), vs(v{"a", 4, "4"}), 3, vs(v{"a", 5, "5"}, v{"a", 4, "4"}, v{"a", 3, "3"}), true},
		{"oldest dropped", vs(v{"a", 5, "5"}, v{"a", 3, "3"}), vs(v{"a", 4, "4"}), 2, vs(v{"a", 5, "5"}, v{"a", 4, "4"}), true},
		{"put older than every kept version", vs(v{"a", 5, "5"}, v{"a", 3, "3"}), vs(v{"a", 1, "1"}), 2, vs(v{"a", 5, "5"}, v{"a", 3, "3"}), false},
		{"columns interleave", vs(v{"a", 1, "a"}, v{"c", 1, "c"}), vs(v{"b", 1, "b"}, v{"d", 1, "d"}), 1, vs(v{"a", 1, "a"}, v{"b", 1, "b"}, v{"c", 1, "c"}, v{"d", 1, "d"}), true},
	}
	for _, tt := range tests {
		got, changed := driverkit.MergeVersions(tt.old, tt.put, tt.n, byCol, stamp)
		if !slices.Equal(got, tt.want) || changed != tt.changed {
			t.Errorf("%s: MergeVersions = %s, %v; want %s, %v", tt.name, fmtV(got), changed, fmtV(tt.want), tt.changed)
		}
	}
}

func TestSelectVersions(t *testing.T) {
	row := vs(v{"a", 9, "a9"}, v{"a", 7, "a7"}, v{"a", 5, "a5"}, v{"b", 8, "b8"}, v{"b", 2, "b2"})
	tests := []struct {
		name string
		n    int
		tr   backends.TimeRange
		want []v
	}{
		{"default: newest of each", 0, backends.TimeRange{}, vs(v{"a", 9, "a9"}, v{"b", 8, "b8"})},
		{"two versions", 2, backends.TimeRange{}, vs(v{"a", 9, "a9"}, v{"a", 7, "a7"}, v{"b", 8, "b8"}, v{"b", 2, "b2"})},
		{"time range first, then versions", 1, backends.TimeRange{From: 3, To: 8}, vs(v{"a", 7, "a7"})},
		{"open-ended range", 5, backends.TimeRange{From: 6}, vs(v{"a", 9, "a9"}, v{"a", 7, "a7"}, v{"b", 8, "b8"})},
		{"nothing in range", 5, backends.TimeRange{From: 100}, nil},
	}
	for _, tt := range tests {
		got := driverkit.SelectVersions(slices.Clone(row), tt.n, tt.tr, byCol, stamp)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: SelectVersions = %s, want %s", tt.name, fmtV(got), fmtV(tt.want))
		}
	}
}
