package backends

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

// FamilyRegexFilter keeps the cells whose family the RE2 pattern matches (anywhere unless
// anchored); a bad pattern fails the read.
func FamilyRegexFilter(pattern string) Filter {
	return regexLeaf(Filter{Kind: FilterFamilyRegex, Pattern: pattern})
}

// QualifierRegexFilter keeps the cells whose qualifier the RE2 pattern matches.
func QualifierRegexFilter(pattern string) Filter {
	return regexLeaf(Filter{Kind: FilterQualifierRegex, Pattern: pattern})
}

// QualifierRangeFilter keeps the cells whose qualifier lies between start and end (nil: no bound),
// each bound included when its flag says so.
func QualifierRangeFilter(start []byte, startIncl bool, end []byte, endIncl bool) Filter {
	return Filter{Kind: FilterQualifierRange, Start: start, StartIncl: startIncl, End: end, EndIncl: endIncl}
}

// CellsPerRowFilter skips the first offset cells of a row and keeps at most limit (0: all).
func CellsPerRowFilter(offset, limit int) Filter {
	return Filter{Kind: FilterCellsPerRow, Offset: offset, Limit: limit}
}
