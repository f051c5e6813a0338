package backends

import (
	"bytes"
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
	// stripping the salt; Check refuses it, since a driver sees physical keys only.
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

// Negate returns the comparison that holds exactly when op does not (for a value that is present).
func (op CompareOp) Negate() CompareOp {
	return [...]CompareOp{Equal: NotEqual, NotEqual: Equal, Less: GreaterOrEqual, LessOrEqual: Greater,
		Greater: LessOrEqual, GreaterOrEqual: Less}[op]
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

// NewRegexFilter returns the leaf "column matches pattern"; a bad pattern is reported by Check.
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

// Check validates a filter against a read's columns: every leaf names a column (family and
// qualifier) that the read selects, every comparison is known, every pattern
// compiles, And/Or have at least one sub-filter and Not exactly one. Errors wrap ErrInvalidArgument.
// Check does not modify f, so one filter can be checked and matched by many goroutines at once.
func (f *Filter) Check(cols []Column) error { return f.checkAll(cols, false) }

// CheckLogical is Check for package client, which evaluates FilterKeyRegex leaves itself.
func (f *Filter) CheckLogical(cols []Column) error { return f.checkAll(cols, true) }

func (f *Filter) checkAll(cols []Column, keys bool) error {
	if err := f.check(cols, keys, true); err != nil {
		return err
	}
	return f.checkCells()
}

// check validates f's nodes; top says f is the filter or a conjunct of its top-level And, the
// only places a cell leaf may be.
func (f *Filter) check(cols []Column, keys, top bool) error {
	if f == nil {
		return nil
	}
	if f.Kind >= FilterFamilyRegex && f.Kind <= FilterCellsPerRow {
		return f.checkCell(top)
	}
	switch f.Kind {
	case FilterKeyRegex:
		if !keys {
			return fmt.Errorf("%w: filter on row keys: package client evaluates those, on logical keys", ErrInvalidArgument)
		}
		return checkRegex(f)
	case FilterCompare, FilterRegex:
		if f.Column.Family == "" || f.Column.Qualifier == "" {
			return fmt.Errorf("%w: filter on column %q:%q: family and qualifier are both needed", ErrInvalidArgument, f.Column.Family, f.Column.Qualifier)
		}
		if !selects(cols, f.Column) {
			return fmt.Errorf("%w: filter on column %s:%s, which the read does not select", ErrInvalidArgument, f.Column.Family, f.Column.Qualifier)
		}
		if f.Kind == FilterCompare && (f.Op < Equal || f.Op > GreaterOrEqual) {
			return fmt.Errorf("%w: filter: unknown comparison %v", ErrInvalidArgument, f.Op)
		}
		if f.Kind == FilterRegex {
			return checkRegex(f)
		}
		return nil
	case FilterAnd, FilterOr, FilterNot:
		if len(f.Subs) == 0 || (f.Kind == FilterNot && len(f.Subs) != 1) {
			return fmt.Errorf("%w: filter: %d sub-filters for kind %d", ErrInvalidArgument, len(f.Subs), f.Kind)
		}
		for i := range f.Subs {
			if err := f.Subs[i].check(cols, keys, top && f.Kind == FilterAnd); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%w: filter: unknown kind %d", ErrInvalidArgument, f.Kind)
}

func checkRegex(f *Filter) error {
	if f.re != nil {
		return nil
	}
	if _, err := regexp.Compile(f.Pattern); err != nil {
		return fmt.Errorf("%w: filter: %w", ErrInvalidArgument, err)
	}
	return fmt.Errorf("%w: filter: regex leaf not built by NewRegexFilter or NewKeyRegexFilter", ErrInvalidArgument)
}

// Has reports whether a filter has a leaf of this kind (some stores cannot send regexes to the
// server; no store gets row-key leaves).
func (f *Filter) Has(kind FilterKind) bool {
	if f == nil {
		return false
	}
	if f.Kind == kind {
		return true
	}
	for i := range f.Subs {
		if f.Subs[i].Has(kind) {
			return true
		}
	}
	return false
}

// Match reports whether a row with these cells (sorted as a Row's are) passes f's row predicates; a
// nil f passes every row, and a cell leaf passes it (Apply trims the cells). It is the one evaluator
// of the filter semantics: the embedded and memory stores run it through Apply, and the other stores
// run it on what they cannot send to the server. f must have passed Check.
func (f *Filter) Match(cells []Cell) bool { return f.MatchRow(nil, cells) }

// MatchRow is Match for a row with this logical key, which FilterKeyRegex leaves test.
func (f *Filter) MatchRow(key []byte, cells []Cell) bool {
	if f == nil {
		return true
	}
	switch f.Kind {
	case FilterKeyRegex:
		if f.keyText != nil {
			text, ok := f.keyText(key)
			return ok && f.re.Match(text)
		}
		return f.re.Match(key)
	case FilterCompare, FilterRegex:
		v, ok := newest(cells, f.Column)
		if !ok {
			return false
		}
		if f.Kind == FilterRegex {
			return f.re.Match(v)
		}
		c := bytes.Compare(v, f.Value)
		switch f.Op {
		case Equal:
			return c == 0
		case NotEqual:
			return c != 0
		case Less:
			return c < 0
		case LessOrEqual:
			return c <= 0
		case Greater:
			return c > 0
		case GreaterOrEqual:
			return c >= 0
		}
		return false
	case FilterAnd:
		for i := range f.Subs {
			if !f.Subs[i].MatchRow(key, cells) {
				return false
			}
		}
		return true
	case FilterOr:
		for i := range f.Subs {
			if f.Subs[i].MatchRow(key, cells) {
				return true
			}
		}
		return false
	case FilterNot:
		return !f.Subs[0].MatchRow(key, cells)
	case FilterFamilyRegex, FilterQualifierRegex, FilterQualifierRange, FilterCellsPerRow:
		return true
	}
	return false
}

// newest returns the value of col's first cell, the newest version, in cells sorted as a Row's are.
func newest(cells []Cell, col Column) ([]byte, bool) {
	for _, c := range cells {
		if c.Family == col.Family && c.Qualifier == col.Qualifier {
			return c.Value, true
		}
	}
	return nil, false
}

// selects reports whether a read limited to cols (none: every column) returns col.
func selects(cols []Column, col Column) bool {
	if len(cols) == 0 {
		return true
	}
	for _, c := range cols {
		if c.Family == col.Family && (c.Qualifier == "" || c.Qualifier == col.Qualifier) {
			return true
		}
	}
	return false
}
