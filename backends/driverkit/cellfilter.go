package driverkit

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/brine-kv/brine/backends"
)

// The cell leaves of a filter, as backends' cellfilter.go states how they compose: they may stand
// only as the filter or a conjunct of its top-level And, and trim the cells of a row that passes the
// row predicates.

// IsCellLeaf reports whether f is a cell leaf.
func IsCellLeaf(f *backends.Filter) bool {
	return f.Kind >= backends.FilterFamilyRegex && f.Kind <= backends.FilterCellsPerRow
}

// HasCells reports whether f has a cell leaf.
func HasCells(f *backends.Filter) bool {
	if f == nil {
		return false
	}
	if IsCellLeaf(f) {
		return true
	}
	for i := range f.Subs {
		if HasCells(&f.Subs[i]) {
			return true
		}
	}
	return false
}

// checkCell validates one cell leaf; top says where it stands (see check).
func checkCell(f *backends.Filter, top bool) error {
	if !top {
		return fmt.Errorf("%w: filter: a cell filter under Or or Not (only the filter itself or its top-level And may trim cells)", backends.ErrUnsupported)
	}
	switch f.Kind {
	case backends.FilterFamilyRegex, backends.FilterQualifierRegex:
		if compiled(f) == nil {
			if _, err := regexp.Compile(f.Pattern); err != nil {
				return fmt.Errorf("%w: filter: %w", backends.ErrInvalidArgument, err)
			}
			return fmt.Errorf("%w: filter: regex leaf not built by its constructor", backends.ErrInvalidArgument)
		}
	case backends.FilterQualifierRange:
		if f.Start != nil && f.End != nil {
			if c := bytes.Compare(f.Start, f.End); c > 0 || (c == 0 && !(f.StartIncl && f.EndIncl)) {
				return fmt.Errorf("%w: filter: empty qualifier range %q..%q", backends.ErrInvalidArgument, f.Start, f.End)
			}
		}
	case backends.FilterCellsPerRow:
		if f.Offset < 0 || f.Limit < 0 {
			return fmt.Errorf("%w: filter: negative cells-per-row offset %d or limit %d", backends.ErrInvalidArgument, f.Offset, f.Limit)
		}
	}
	return nil
}

// checkCells refuses a second cells-per-row leaf (check has placed them all at the top).
func checkCells(f *backends.Filter) error {
	if f == nil {
		return nil
	}
	n := 0
	for _, c := range topLevel(f) {
		if c.Kind == backends.FilterCellsPerRow {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w: filter: %d cells-per-row filters, at most one", backends.ErrInvalidArgument, n)
	}
	return nil
}

// topLevel returns the conjuncts of f's top-level And, nested Ands flattened, or f alone.
func topLevel(f *backends.Filter) []backends.Filter {
	if f.Kind != backends.FilterAnd {
		return []backends.Filter{*f}
	}
	var out []backends.Filter
	for i := range f.Subs {
		out = append(out, topLevel(&f.Subs[i])...)
	}
	return out
}

// SplitCells separates a checked filter into its row predicates (nil: none) and its cell leaves.
func SplitCells(f *backends.Filter) (rows *backends.Filter, cells []backends.Filter) {
	if !HasCells(f) {
		return f, nil
	}
	var rs []backends.Filter
	for _, c := range topLevel(f) {
		if IsCellLeaf(&c) {
			cells = append(cells, c)
		} else {
			rs = append(rs, c)
		}
	}
	switch len(rs) {
	case 0:
	case 1:
		rows = &rs[0]
	default:
		rows = &backends.Filter{Kind: backends.FilterAnd, Subs: rs}
	}
	return rows, cells
}

// Apply returns the cells (sorted as a Row's are) that a read with f returns: nil when the row fails
// f's row predicates, else the cells its cell leaves keep, trimmed in place. A nil f keeps them all.
func Apply(f *backends.Filter, cells []backends.Cell) []backends.Cell { return ApplyRow(f, nil, cells) }

// ApplyRow is Apply for a row with this logical key, which FilterKeyRegex leaves test.
func ApplyRow(f *backends.Filter, key []byte, cells []backends.Cell) []backends.Cell {
	if !MatchRow(f, key, cells) {
		return nil
	}
	if !HasCells(f) {
		return cells
	}
	_, leaves := SplitCells(f)
	return TrimCells(leaves, cells)
}

// TrimCells applies checked cell leaves to a row's cells (sorted as a Row's are), in place.
func TrimCells(leaves []backends.Filter, cells []backends.Cell) []backends.Cell {
	out := cells[:0]
	var page *backends.Filter
	for i := range leaves {
		if leaves[i].Kind == backends.FilterCellsPerRow {
			page = &leaves[i]
		}
	}
	seen := 0
next:
	for _, c := range cells {
		for i := range leaves {
			if !keeps(&leaves[i], c) {
				continue next
			}
		}
		if page != nil {
			seen++
			if seen <= page.Offset || (page.Limit > 0 && seen > page.Offset+page.Limit) {
				continue
			}
		}
		out = append(out, c)
	}
	clear(cells[len(out):])
	if len(out) == 0 {
		return nil
	}
	return out
}

// keeps reports whether a selecting cell leaf keeps c; a cells-per-row leaf counts, so keeps all.
func keeps(f *backends.Filter, c backends.Cell) bool {
	switch f.Kind {
	case backends.FilterFamilyRegex:
		return compiled(f).MatchString(c.Family)
	case backends.FilterQualifierRegex:
		return compiled(f).MatchString(c.Qualifier)
	case backends.FilterQualifierRange:
		q := []byte(c.Qualifier)
		if f.Start != nil {
			if d := bytes.Compare(q, f.Start); d < 0 || (d == 0 && !f.StartIncl) {
				return false
			}
		}
		if f.End != nil {
			if d := bytes.Compare(q, f.End); d > 0 || (d == 0 && !f.EndIncl) {
				return false
			}
		}
	}
	return true
}
