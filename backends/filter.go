package backends

import (
	"fmt"
	"regexp"

	"github.com/brine-kv/brine/backends/internal/filterstate"
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

	// st: the compiled Pattern (set by the regex constructors only) and a row-key leaf's key text
	// (driverkit.WithKeyText). Unexported, so that neither can be forged or seen by a user of package
	// client; driverkit reads them through filterstate.Of.
	st filterstate.State
}

func init() { filterstate.Of = func(f any) *filterstate.State { return &f.(*Filter).st } }

// ValueFilter returns the leaf "column op value".
func ValueFilter(col Column, op CompareOp, value []byte) Filter {
	return Filter{Kind: FilterCompare, Column: col, Op: op, Value: value}
}

// ValueRegexFilter returns the leaf "column matches pattern"; a bad pattern fails the read.
func ValueRegexFilter(col Column, pattern string) Filter {
	return regexLeaf(Filter{Kind: FilterRegex, Column: col, Pattern: pattern})
}

// KeyRegexFilter returns the leaf "logical row key matches pattern"; see FilterKeyRegex.
func KeyRegexFilter(pattern string) Filter {
	return regexLeaf(Filter{Kind: FilterKeyRegex, Pattern: pattern})
}

// regexLeaf returns f with its Pattern compiled, or without when it does not compile (the read then
// fails).
func regexLeaf(f Filter) Filter {
	f.st.Re, _ = regexp.Compile(f.Pattern)
	return f
}
