package backends

import (
	"bytes"
	"fmt"
	"regexp"
)

// Cell filters trim the cells of a row where the other filters keep or drop it whole (bigtable's
// family, qualifier and column-range filters and its cells-per-row limit and offset). How they
// compose, on every store:
//
//   - A cell leaf may be the whole filter or a conjunct of its top-level And, Ands nested in it
//     included (a bigtable chain); under Or or Not (an interleave, or a negated trim) it fails the
//     read with ErrUnsupported.
//   - The row predicates (every other leaf, with their And, Or and Not) test the row as the read
//     sees it, before any trimming.
//   - Of a row that passes, the cells that every family regex, qualifier regex and qualifier range
//     keep remain (in any order: they commute); then a cells-per-row leaf skips the first Offset of
//     those, in row order (family, qualifier, newest version first), and keeps at most Limit. A
//     filter has at most one cells-per-row leaf.
//   - A row left with no cells is not returned, as with a TimeRange.

// NewFamilyRegexFilter keeps the cells whose family the RE2 pattern matches (anywhere unless
// anchored); a bad pattern is reported by Check.
func NewFamilyRegexFilter(pattern string) Filter {
	f := Filter{Kind: FilterFamilyRegex, Pattern: pattern}
	f.re, _ = regexp.Compile(pattern)
	return f
}

// NewQualifierRegexFilter keeps the cells whose qualifier the RE2 pattern matches.
func NewQualifierRegexFilter(pattern string) Filter {
	f := Filter{Kind: FilterQualifierRegex, Pattern: pattern}
	f.re, _ = regexp.Compile(pattern)
	return f
}

// NewQualifierRangeFilter keeps the cells whose qualifier lies between start and end (nil: no bound),
// each bound included when its flag says so.
func NewQualifierRangeFilter(start []byte, startIncl bool, end []byte, endIncl bool) Filter {
	return Filter{Kind: FilterQualifierRange, Start: start, StartIncl: startIncl, End: end, EndIncl: endIncl}
}

// NewCellsPerRowFilter skips the first offset cells of a row and keeps at most limit (0: all).
func NewCellsPerRowFilter(offset, limit int) Filter {
	return Filter{Kind: FilterCellsPerRow, Offset: offset, Limit: limit}
}

// IsCellLeaf reports whether f is a cell leaf.
func (f *Filter) IsCellLeaf() bool { return f.Kind >= FilterFamilyRegex && f.Kind <= FilterCellsPerRow }

// HasCells reports whether f has a cell leaf.
func (f *Filter) HasCells() bool {
	if f == nil {
		return false
	}
	if f.IsCellLeaf() {
		return true
	}
	for i := range f.Subs {
		if f.Subs[i].HasCells() {
			return true
		}
	}
	return false
}

// checkCell validates one cell leaf; top says where it stands (see check).
func (f *Filter) checkCell(top bool) error {
	if !top {
		return fmt.Errorf("%w: filter: a cell filter under Or or Not (only the filter itself or its top-level And may trim cells)", ErrUnsupported)
	}
	switch f.Kind {
	case FilterFamilyRegex, FilterQualifierRegex:
		if f.re == nil {
			if _, err := regexp.Compile(f.Pattern); err != nil {
				return fmt.Errorf("%w: filter: %w", ErrInvalidArgument, err)
			}
			return fmt.Errorf("%w: filter: regex leaf not built by its constructor", ErrInvalidArgument)
		}
	case FilterQualifierRange:
		if f.Start != nil && f.End != nil {
			if c := bytes.Compare(f.Start, f.End); c > 0 || (c == 0 && !(f.StartIncl && f.EndIncl)) {
				return fmt.Errorf("%w: filter: empty qualifier range %q..%q", ErrInvalidArgument, f.Start, f.End)
			}
		}
	case FilterCellsPerRow:
		if f.Offset < 0 || f.Limit < 0 {
			return fmt.Errorf("%w: filter: negative cells-per-row offset %d or limit %d", ErrInvalidArgument, f.Offset, f.Limit)
		}
	}
	return nil
}

// checkCells refuses a second cells-per-row leaf (check has placed them all at the top).
func (f *Filter) checkCells() error {
	if f == nil {
		return nil
	}
	n := 0
	for _, c := range f.topLevel() {
		if c.Kind == FilterCellsPerRow {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w: filter: %d cells-per-row filters, at most one", ErrInvalidArgument, n)
	}
	return nil
}

// topLevel returns the conjuncts of f's top-level And, nested Ands flattened, or f alone.
func (f *Filter) topLevel() []Filter {
	if f.Kind != FilterAnd {
		return []Filter{*f}
	}
	var out []Filter
	for i := range f.Subs {
		out = append(out, f.Subs[i].topLevel()...)
	}
	return out
}

// SplitCells separates a checked filter into its row predicates (nil: none) and its cell leaves.
func (f *Filter) SplitCells() (rows *Filter, cells []Filter) {
	if !f.HasCells() {
		return f, nil
	}
	var rs []Filter
	for _, c := range f.topLevel() {
		if c.IsCellLeaf() {
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
		rows = &Filter{Kind: FilterAnd, Subs: rs}
	}
	return rows, cells
}

// Apply returns the cells (sorted as a Row's are) that a read with f returns: nil when the row fails
// f's row predicates, else the cells its cell leaves keep, trimmed in place. A nil f keeps them all.
func (f *Filter) Apply(cells []Cell) []Cell { return f.ApplyRow(nil, cells) }

// ApplyRow is Apply for a row with this logical key, which FilterKeyRegex leaves test.
func (f *Filter) ApplyRow(key []byte, cells []Cell) []Cell {
	if !f.MatchRow(key, cells) {
		return nil
	}
	if !f.HasCells() {
		return cells
	}
	_, leaves := f.SplitCells()
	return TrimCells(leaves, cells)
}

// TrimCells applies checked cell leaves to a row's cells (sorted as a Row's are), in place.
func TrimCells(leaves []Filter, cells []Cell) []Cell {
	out := cells[:0]
	var page *Filter
	for i := range leaves {
		if leaves[i].Kind == FilterCellsPerRow {
			page = &leaves[i]
		}
	}
	seen := 0
next:
	for _, c := range cells {
		for i := range leaves {
			if !leaves[i].keeps(c) {
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
func (f *Filter) keeps(c Cell) bool {
	switch f.Kind {
	case FilterFamilyRegex:
		return f.re.MatchString(c.Family)
	case FilterQualifierRegex:
		return f.re.MatchString(c.Qualifier)
	case FilterQualifierRange:
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
