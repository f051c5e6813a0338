package hbase

import (
	"math"

	"github.com/tsuna/gohbase/filter"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// Cell filters (backends/cellfilter.go) on HBase. A FilterList runs every sub-filter on every cell
// at once, with no order between them, so it cannot test a row before trimming it: a
// ColumnRangeFilter or a ColumnPaginationFilter ends a row's scan early (NEXT_ROW), hiding the
// column a SingleColumnValueFilter tests, and a ColumnPaginationFilter counts the cells the other
// filters drop. So the region servers get the cell leaves only where they mean the same there:
//
//   - cell leaves alone, without a cells-per-row leaf: FamilyFilter and QualifierFilter with a
//     RegexStringComparator and ColumnRangeFilter, ANDed;
//   - a cells-per-row leaf alone, on a read of one version: ColumnPaginationFilter, which counts
//     columns (one cell each then).
//
// Otherwise the servers get the row predicates only and the driver trims each row they send, with
// the shared evaluator, before it counts towards a scan's limit: the cells it drops cross the
// network. After the selecting leaves the driver trims again what the servers trimmed (the same
// rule twice keeps the same cells), so a server cannot return a cell the evaluator drops; a
// cells-per-row leaf, which would count twice, is the server's alone.

// serverFilters returns the gohbase filter for a checked f (nil: none) and the cell leaves the
// driver applies to each row the server sends.
func serverFilters(f *backends.Filter, versions int) (filter.Filter, []backends.Filter) {
	if f == nil {
		return nil, nil
	}
	rows, cells := driverkit.SplitCells(f)
	if len(cells) == 0 {
		return serverFilter(f), nil
	}
	if rows != nil {
		return serverFilter(rows), cells
	}
	if len(cells) == 1 && cells[0].Kind == backends.FilterCellsPerRow {
		if driverkit.Versions(versions) > 1 || cells[0].Offset >= math.MaxInt32 {
			return nil, cells
		}
		limit := cells[0].Limit
		if limit == 0 || limit > math.MaxInt32-cells[0].Offset {
			limit = math.MaxInt32 - cells[0].Offset // the server adds the two in an int32
		}
		return filter.NewColumnPaginationFilter(int32(limit), int32(cells[0].Offset), nil), nil
	}
	var subs []filter.Filter
	for i := range cells {
		if s := cellFilter(&cells[i]); s != nil {
			subs = append(subs, s)
		}
	}
	if len(subs) < len(cells) { // a cells-per-row leaf among them: see above
		return nil, cells
	}
	if len(subs) == 1 {
		return subs[0], cells
	}
	return filter.NewList(filter.MustPassAll, subs...), cells
}

// cellFilter returns the server filter of a selecting cell leaf; nil for cells-per-row.
func cellFilter(f *backends.Filter) filter.Filter {
	switch f.Kind {
	case backends.FilterFamilyRegex:
		return filter.NewFamilyFilter(filter.NewCompareFilter(filter.Equal,
			filter.NewRegexStringComparator(f.Pattern, 0, "UTF-8", "JAVA")))
	case backends.FilterQualifierRegex:
		return filter.NewQualifierFilter(filter.NewCompareFilter(filter.Equal,
			filter.NewRegexStringComparator(f.Pattern, 0, "UTF-8", "JAVA")))
	case backends.FilterQualifierRange:
		return filter.NewColumnRangeFilter(f.Start, f.End, f.StartIncl, f.EndIncl)
	}
	return nil
}
