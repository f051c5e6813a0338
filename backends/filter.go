package backends

import (
	"fmt"
	"regexp"
)

// FilterKind says what a Filter node tests.
type FilterKind uint8

// The filter kinds. The leaves test one column's value; And, Or and Not combine other filters.
const (
	FilterCompare FilterKind = iota + 1 // the column's value compared with Value by Op
	FilterRegex                         // the column's value matched by Pattern
	FilterAnd                           // every one of Subs passes
	FilterOr                            // at least one of Subs passes
	FilterNot                           // Subs[0] does not pass
	// FilterKeyRegex: the row's logical key matched by Pattern. Package client evaluates it, after
	// stripping the salt; a driver refuses it, since it sees physical keys only.
	FilterKeyRegex
	// The cell leaves (cellfilter.go) trim the cells of a row instead of testing it.
	FilterFamilyRegex    // keep cells whose family Pattern matches
	FilterQualifierRegex // keep cells whose qualifier Pattern matches
	FilterQualifierRange // keep cells whose qualifier lies between Start and End
	FilterCellsPerRow    // skip the first Offset cells, keep at most Limit
)

// CompareOp is a comparison of a column's value (left) with a filter's Value (right), bytewise
// (unsigned, shorter prefix first), as HBase's BinaryComparator and Tablestore's BINARY compare.
type CompareOp uint8

// The comparisons.
const (
	Equal CompareOp = iota + 1
	NotEqual
	Less
	LessOrEqual
	Greater
	GreaterOrEqual
)

var opText = [...]string{Equal: "=", NotEqual: "!=", Less: "<", LessOrEqual: "<=", Greater: ">", GreaterOrEqual: ">="}

func (op CompareOp) String() string {
	if op >= Equal && op <= GreaterOrEqual {
		return opText[op]
	}
	return fmt.Sprintf("CompareOp(%d)", uint8(op))
}

// Filter is a predicate on a row, applied by the store to every row a read or scan would return (the
// cells left after ReadOptions' Columns, TimeRange and MaxVersions): a row that fails is not returned
// by a scan, and comes back with no cells from a read. Only its cell leaves (cellfilter.go) change
// the cells of a row that passes.
//
// A leaf tests the newest version of one column (Family and Qualifier both set) that the read sees;
// a row without that column fails the leaf, whatever Op, so Not(leaf) passes it. A family the table
// does not have is such a missing column (HBase cannot tell it apart before it runs the filter). Regexes use Go's
// RE2 syntax and match anywhere in the value unless anchored (HBase runs them as Java regexes, which
// agree on RE2's syntax). The zero Filter is invalid; a nil *Filter in ReadOptions passes every row.
//
// A read refuses, with ErrInvalidArgument, a filter with a leaf on a column (family and qualifier
// both needed) that the read does not select, an unknown comparison or kind, a pattern that does not
// compile or a regex leaf not made by its constructor, an And or Or without sub-filters, or a Not
// without exactly one (driverkit.CheckFilter states the rule once for every store).
type Filter struct {
	Kind    FilterKind
	Column  Column
	Op      CompareOp
	Value   []byte
	Pattern string
	Subs    []Filter

	// FilterQualifierRange: Start and End bound the qualifier (nil: unbounded), each included when
	// its Incl flag is set. FilterCellsPerRow: Offset and Limit (0: no limit).
	Start, End         []byte
	StartIncl, EndIncl bool
	Offset, Limit      int

	re      *regexp.Regexp                  // compiled Pattern, set by NewRegexFilter and NewKeyRegexFilter
	keyText func(key []byte) ([]byte, bool) // FilterKeyRegex: what it matches (WithKeyText); nil: the key
}

// NewCompareFilter returns the leaf "column op value".
func NewCompareFilter(col Column, op CompareOp, value []byte) Filter {
	return Filter{Kind: FilterCompare, Column: col, Op: op, Value: value}
}

// NewRegexFilter returns the leaf "column matches pattern"; a bad pattern fails the read.
func NewRegexFilter(col Column, pattern string) Filter {
	f := Filter{Kind: FilterRegex, Column: col, Pattern: pattern}
	f.re, _ = regexp.Compile(pattern)
	return f
}

// NewKeyRegexFilter returns the leaf "logical row key matches pattern"; see FilterKeyRegex.
func NewKeyRegexFilter(pattern string) Filter {
	f := Filter{Kind: FilterKeyRegex, Pattern: pattern}
	f.re, _ = regexp.Compile(pattern)
	return f
}

// WithKeyText returns a copy of f whose FilterKeyRegex leaves match text(key) instead of the key's
// bytes, and fail a key text reports false for (so Not of such a leaf passes the row, as Not of a
// leaf on a missing column does). Package client binds a table's printed keys so.
func (f Filter) WithKeyText(text func(key []byte) ([]byte, bool)) Filter {
	if f.Kind == FilterKeyRegex {
		f.keyText = text
		return f
	}
	if len(f.Subs) > 0 {
		subs := make([]Filter, len(f.Subs))
		for i := range f.Subs {
			subs[i] = f.Subs[i].WithKeyText(text)
		}
		f.Subs = subs
	}
	return f
}

// Regexp returns the compiled pattern of a regex leaf made by NewRegexFilter or NewKeyRegexFilter.
func (f *Filter) Regexp() *regexp.Regexp { return f.re }

// KeyText returns what a FilterKeyRegex leaf of f matches for a row with this logical key: the text
// WithKeyText bound, or the key itself. ok false means the key has no text, and the leaf fails.
func (f *Filter) KeyText(key []byte) (text []byte, ok bool) {
	if f.keyText != nil {
		return f.keyText(key)
	}
	return key, true
}
