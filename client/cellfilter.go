package client

import (
	"github.com/brine-kv/brine/backends"
)

// Cell filters trim the cells of the rows a read returns, where the other filters keep or drop rows
// whole. Each may be the filter given to RowFilter or a conjunct of its top-level AllFilters (a
// bigtable chain); under AnyFilter or NotFilter the read fails with ErrUnsupported. The row
// predicates of the filter test the row before it is trimmed; then the cells every family regex,
// qualifier regex and qualifier range keep remain, and a CellsPerRowFilter pages over those. A row
// left with no cells is not returned (Get: ErrNotFound). Where each store trims: README, "Filters".

// FamilyRegexFilter keeps the cells whose family the RE2 pattern matches (anywhere unless anchored).
// A bad pattern fails the read with ErrInvalidArgument before anything is sent.
func FamilyRegexFilter(pattern string) Filter { return backends.FamilyRegexFilter(pattern) }

// QualifierRegexFilter keeps the cells whose qualifier the RE2 pattern matches.
func QualifierRegexFilter(pattern string) Filter { return backends.QualifierRegexFilter(pattern) }

// QualifierRangeFilter keeps the cells whose qualifier lies between start and end, compared bytewise
// (nil: no bound), each bound included when its flag says so. An empty range fails the read with
// ErrInvalidArgument.
func QualifierRangeFilter(start []byte, startIncl bool, end []byte, endIncl bool) Filter {
	return backends.QualifierRangeFilter(start, startIncl, end, endIncl)
}

// CellsPerRowFilter skips the first offset cells of each row (after the other cell filters, in row
// order: family, qualifier, newest version first) and keeps at most limit of the rest (0: all). A
// negative offset or limit, or a second CellsPerRowFilter, fails the read with ErrInvalidArgument.
func CellsPerRowFilter(offset, limit int) Filter { return backends.CellsPerRowFilter(offset, limit) }
