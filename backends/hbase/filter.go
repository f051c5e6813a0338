package hbase

import (
	"github.com/tsuna/gohbase/filter"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// The whole of a backends.Filter runs on the region servers: every leaf is a SingleColumnValueFilter
// on the newest version (latestVersionOnly), And and Or are FilterLists, and Not, which HBase has no
// filter for, is pushed down to the leaves (De Morgan). A leaf drops a row without its column
// (filterIfMissing); a negated leaf negates its comparison and passes such a row, so that
// Not(leaf) passes exactly the rows leaf fails, as the contract says.

var compareTypes = [...]filter.CompareType{
	backends.Equal: filter.Equal, backends.NotEqual: filter.NotEqual, backends.Less: filter.Less,
	backends.LessOrEqual: filter.LessOrEqual, backends.Greater: filter.Greater, backends.GreaterOrEqual: filter.GreaterOrEqual,
}

// serverFilter returns the gohbase filter for f, which must have passed Check.
func serverFilter(f *backends.Filter) filter.Filter { return toHBase(f, false) }

func toHBase(f *backends.Filter, negate bool) filter.Filter {
	switch f.Kind {
	case backends.FilterCompare, backends.FilterRegex:
		op, cmp := f.Op, filter.Comparator(nil)
		if f.Kind == backends.FilterRegex {
			// Java's regex engine on the value decoded as UTF-8: RE2's syntax means the same there.
			op, cmp = backends.Equal, filter.NewRegexStringComparator(f.Pattern, 0, "UTF-8", "JAVA")
		} else {
			cmp = filter.NewBinaryComparator(filter.NewByteArrayComparable(f.Value))
		}
		if negate {
			op = driverkit.Negate(op)
		}
		return filter.NewSingleColumnValueFilter([]byte(f.Column.Family), []byte(f.Column.Qualifier),
			compareTypes[op], cmp, !negate, true)
	case backends.FilterNot:
		return toHBase(&f.Subs[0], !negate)
	}
	// And, Or; a negated And is an Or of negations, and the reverse.
	op := filter.MustPassAll
	if (f.Kind == backends.FilterOr) != negate {
		op = filter.MustPassOne
	}
	subs := make([]filter.Filter, len(f.Subs))
	for i := range f.Subs {
		subs[i] = toHBase(&f.Subs[i], negate)
	}
	return filter.NewList(op, subs...)
}

// reverseFilter wraps a server filter for a reversed scan. A region server refuses a reversed scan that
// loads families on demand (its default), which it does when the filter leaves a family
// non-essential, as a SingleColumnValueFilter does every family but its own. A filter that passes
// every cell (a ColumnRangeFilter without bounds, ANDed in) makes every family essential.
func reverseFilter(f filter.Filter) filter.Filter {
	return filter.NewList(filter.MustPassAll, filter.NewColumnRangeFilter(nil, nil, true, true), f)
}
