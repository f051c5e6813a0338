package driverkit

import (
	"cmp"
	"slices"

	"github.com/brine-kv/brine/backends"
)

// The version rules, in one place for the drivers that keep versions themselves (memory, local). T is
// the driver's cell type; column orders two cells by (family, qualifier) and ts gives a cell's
// timestamp. Cells of a row are kept sorted by column, then newest first.

// Versions returns n, or 1 for n <= 0: how many versions a table keeps or a read returns by default.
func Versions(n int) int { return max(n, 1) }

// KeepVersions sorts the cells of one put by column, newest first, and keeps at most n versions
// of each column. Of cells with the same column and timestamp the last given wins, as the later of
// two writes does in HBase. It reorders cells in place and returns a prefix of it.
func KeepVersions[T any](cells []T, n int, column func(a, b T) int, ts func(T) int64) []T {
	// Cells given in column order, one per column (most puts), are kept as they are.
	if distinctSorted(cells, column) {
		return cells
	}
	// Stable, so that among equal timestamps the given order remains and the last given is last.
	slices.SortStableFunc(cells, func(a, b T) int {
		if c := column(a, b); c != 0 {
			return c
		}
		return cmp.Compare(ts(b), ts(a))
	})
	out := cells[:0]
	kept := 0 // versions of out's last column
	for _, c := range cells {
		if k := len(out); k > 0 && column(out[k-1], c) == 0 {
			if ts(out[k-1]) == ts(c) {
				out[k-1] = c
				continue
			}
			if kept == Versions(n) {
				continue
			}
			kept++
			out = append(out, c)
			continue
		}
		kept = 1
		out = append(out, c)
	}
	return out
}

// distinctSorted reports whether each cell's column is after the one before it.
func distinctSorted[T any](cells []T, column func(a, b T) int) bool {
	for i := 1; i < len(cells); i++ {
		if column(cells[i-1], cells[i]) >= 0 {
			return false
		}
	}
	return true
}

// MergeVersions writes the versions of put over those of old (both sorted as KeepVersions leaves
// them): for each column the n newest of both, a version of put replacing one of old with the same
// timestamp. changed reports whether any version of put was kept; when it is false, out is old.
func MergeVersions[T any](old, put []T, n int, column func(a, b T) int, ts func(T) int64) (out []T, changed bool) {
	out = make([]T, 0, len(old)+len(put))
	i, j := 0, 0
	for i < len(old) || j < len(put) {
		var col T
		switch {
		case i == len(old):
			col = put[j]
		case j == len(put):
			col = old[i]
		case column(old[i], put[j]) <= 0:
			col = old[i]
		default:
			col = put[j]
		}
		// Merge this column's versions, newest first; on a tie the put's replaces the old one.
		kept := 0
		for {
			oi := i < len(old) && column(old[i], col) == 0
			pj := j < len(put) && column(put[j], col) == 0
			if !oi && !pj {
				break
			}
			var c T
			fromPut := false
			switch {
			case oi && pj && ts(old[i]) == ts(put[j]):
				c, fromPut = put[j], true
				i++
				j++
			case pj && (!oi || ts(put[j]) > ts(old[i])):
				c, fromPut = put[j], true
				j++
			default:
				c = old[i]
				i++
			}
			if kept < Versions(n) {
				out = append(out, c)
				kept++
				changed = changed || fromPut
			}
		}
	}
	if !changed {
		return old, false
	}
	return out, true
}

// SelectVersions keeps, of cells sorted as KeepVersions leaves them, the versions a read asks for:
// those in tr, at most maxVersions (default 1) of each column. It filters cells in place.
func SelectVersions[T any](cells []T, maxVersions int, tr backends.TimeRange, column func(a, b T) int, ts func(T) int64) []T {
	out := cells[:0]
	kept := 0
	for _, c := range cells {
		if !tr.Contains(ts(c)) {
			continue
		}
		if k := len(out); k > 0 && column(out[k-1], c) == 0 {
			if kept == Versions(maxVersions) {
				continue
			}
			kept++
		} else {
			kept = 1
		}
		out = append(out, c)
	}
	return out
}
