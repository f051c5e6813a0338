package driverkit

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/internal/filterstate"
)

// The one evaluator of backends.Filter: the embedded and memory stores run it on every row, the
// server stores on what they cannot send to the server, and package client on row-key leaves (which
// it alone can test, on logical keys). Cell leaves are in cellfilter.go.

// CheckRead validates a read's columns and filter against a table's families (nil: any family).
func CheckRead(families map[string]bool, opts backends.ReadOptions) error {
	if err := CheckColumnFamilies(families, opts.Columns); err != nil {
		return err
	}
	return CheckFilter(opts.Filter, opts.Columns)
}

// CheckFilter validates a filter against a read's columns as backends.Filter states: every leaf
// names a column (family and qualifier) that the read selects, every comparison is known, every
// pattern compiles, And/Or have at least one sub-filter and Not exactly one; a row-key leaf is
// refused, since a driver sees physical keys. Errors wrap ErrInvalidArgument (ErrUnsupported for a
// cell leaf under Or or Not). It does not modify f, so one filter can be checked and matched by many
// goroutines at once. A nil f is valid.
func CheckFilter(f *backends.Filter, cols []backends.Column) error { return checkAll(f, cols, false) }

// CheckLogicalFilter is CheckFilter for package client, which evaluates FilterKeyRegex leaves itself.
func CheckLogicalFilter(f *backends.Filter, cols []backends.Column) error {
	return checkAll(f, cols, true)
}

func checkAll(f *backends.Filter, cols []backends.Column, keys bool) error {
	if err := check(f, cols, keys, true); err != nil {
		return err
	}
	return checkCells(f)
}

// check validates f's nodes; top says f is the filter or a conjunct of its top-level And, the
// only places a cell leaf may be.
func check(f *backends.Filter, cols []backends.Column, keys, top bool) error {
	if f == nil {
		return nil
	}
	if IsCellLeaf(f) {
		return checkCell(f, top)
	}
	switch f.Kind {
	case backends.FilterKeyRegex:
		if !keys {
			return fmt.Errorf("%w: filter on row keys: package client evaluates those, on logical keys", backends.ErrInvalidArgument)
		}
		return checkRegex(f)
	case backends.FilterCompare, backends.FilterRegex:
		if f.Column.Family == "" || f.Column.Qualifier == "" {
			return fmt.Errorf("%w: filter on column %q:%q: family and qualifier are both needed", backends.ErrInvalidArgument, f.Column.Family, f.Column.Qualifier)
		}
		if !Selected(cols, f.Column.Family, f.Column.Qualifier) {
			return fmt.Errorf("%w: filter on column %s:%s, which the read does not select", backends.ErrInvalidArgument, f.Column.Family, f.Column.Qualifier)
		}
		if f.Kind == backends.FilterCompare && (f.Op < backends.Equal || f.Op > backends.GreaterOrEqual) {
			return fmt.Errorf("%w: filter: unknown comparison %v", backends.ErrInvalidArgument, f.Op)
		}
		if f.Kind == backends.FilterRegex {
			return checkRegex(f)
		}
		return nil
	case backends.FilterAnd, backends.FilterOr, backends.FilterNot:
		if len(f.Subs) == 0 || (f.Kind == backends.FilterNot && len(f.Subs) != 1) {
			return fmt.Errorf("%w: filter: %d sub-filters for kind %d", backends.ErrInvalidArgument, len(f.Subs), f.Kind)
		}
		for i := range f.Subs {
			if err := check(&f.Subs[i], cols, keys, top && f.Kind == backends.FilterAnd); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%w: filter: unknown kind %d", backends.ErrInvalidArgument, f.Kind)
}

// checkRegex refuses a regex leaf whose pattern did not compile, or that no constructor built (its
// compiled pattern is unexported, so a hand-built leaf has none).
func checkRegex(f *backends.Filter) error {
	if compiled(f) != nil {
		return nil
	}
	if _, err := regexp.Compile(f.Pattern); err != nil {
		return fmt.Errorf("%w: filter: %w", backends.ErrInvalidArgument, err)
	}
	return fmt.Errorf("%w: filter: regex leaf not built by its constructor", backends.ErrInvalidArgument)
}

// compiled returns the pattern a regex leaf's constructor compiled, nil for a hand-built leaf or a
// pattern that did not compile.
func compiled(f *backends.Filter) *regexp.Regexp { return filterstate.Of(f).Re }

// WithKeyText returns a copy of f whose FilterKeyRegex leaves match text(key) instead of the key's
// bytes, and fail a key text reports false for (so Not of such a leaf passes the row, as Not of a
// leaf on a missing column does). Package client binds a table's printed keys so.
func WithKeyText(f backends.Filter, text func(key []byte) ([]byte, bool)) backends.Filter {
	if f.Kind == backends.FilterKeyRegex {
		filterstate.Of(&f).KeyText = text
		return f
	}
	if len(f.Subs) > 0 {
		subs := make([]backends.Filter, len(f.Subs))
		for i := range f.Subs {
			subs[i] = WithKeyText(f.Subs[i], text)
		}
		f.Subs = subs
	}
	return f
}

// keyText returns what a FilterKeyRegex leaf matches for a row with this logical key: the text
// WithKeyText bound, or the key itself. ok false means the key has no text, and the leaf fails.
func keyText(f *backends.Filter, key []byte) (text []byte, ok bool) {
	if t := filterstate.Of(f).KeyText; t != nil {
		return t(key)
	}
	return key, true
}

// Has reports whether f has a leaf of this kind (some stores cannot send regexes to the server; no
// store gets row-key leaves).
func Has(f *backends.Filter, kind backends.FilterKind) bool {
	if f == nil {
		return false
	}
	if f.Kind == kind {
		return true
	}
	for i := range f.Subs {
		if Has(&f.Subs[i], kind) {
			return true
		}
	}
	return false
}

// Match reports whether a row with these cells (sorted as a Row's are) passes f's row predicates; a
// nil f passes every row, and a cell leaf passes it (Apply trims the cells). f must have passed
// CheckFilter.
func Match(f *backends.Filter, cells []backends.Cell) bool { return MatchRow(f, nil, cells) }

// MatchRow is Match for a row with this logical key, which FilterKeyRegex leaves test.
func MatchRow(f *backends.Filter, key []byte, cells []backends.Cell) bool {
	if f == nil {
		return true
	}
	switch f.Kind {
	case backends.FilterKeyRegex:
		text, ok := keyText(f, key)
		return ok && compiled(f).Match(text)
	case backends.FilterCompare, backends.FilterRegex:
		v, ok := newest(cells, f.Column)
		if !ok {
			return false
		}
		if f.Kind == backends.FilterRegex {
			return compiled(f).Match(v)
		}
		return Satisfies(f.Op, bytes.Compare(v, f.Value))
	case backends.FilterAnd:
		for i := range f.Subs {
			if !MatchRow(&f.Subs[i], key, cells) {
				return false
			}
		}
		return true
	case backends.FilterOr:
		for i := range f.Subs {
			if MatchRow(&f.Subs[i], key, cells) {
				return true
			}
		}
		return false
	case backends.FilterNot:
		return !MatchRow(&f.Subs[0], key, cells)
	case backends.FilterFamilyRegex, backends.FilterQualifierRegex, backends.FilterQualifierRange, backends.FilterCellsPerRow:
		return true
	}
	return false
}

// Satisfies reports whether a value that compares as c with a leaf's operand (-1, 0 or +1, as
// bytes.Compare returns) passes op; false for an unknown op. The CLI, which compares typed values
// where a store compares bytes, uses it too, so that both read an op the same way.
func Satisfies(op backends.CompareOp, c int) bool {
	switch op {
	case backends.Equal:
		return c == 0
	case backends.NotEqual:
		return c != 0
	case backends.Less:
		return c < 0
	case backends.LessOrEqual:
		return c <= 0
	case backends.Greater:
		return c > 0
	case backends.GreaterOrEqual:
		return c >= 0
	}
	return false
}

// Negate returns the comparison that holds exactly when op does not (for a value that is present):
// a store that can only send a negated leaf's comparison (HBase) sends this one.
func Negate(op backends.CompareOp) backends.CompareOp {
	return [...]backends.CompareOp{backends.Equal: backends.NotEqual, backends.NotEqual: backends.Equal,
		backends.Less: backends.GreaterOrEqual, backends.LessOrEqual: backends.Greater,
		backends.Greater: backends.LessOrEqual, backends.GreaterOrEqual: backends.Less}[op]
}

// newest returns the value of col's first cell, the newest version, in cells sorted as a Row's are.
func newest(cells []backends.Cell, col backends.Column) ([]byte, bool) {
	for _, c := range cells {
		if c.Family == col.Family && c.Qualifier == col.Qualifier {
			return c.Value, true
		}
	}
	return nil, false
}
