package filterexpr

import (
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

// The cell pseudo-columns, which trim each row's cells (client.FamilyRegexFilter and
// friends) instead of testing the row:
//
//	@family ~ re | @family = name            keep the cells of matching families
//	@qualifier ~ re                           keep the cells whose qualifier matches
//	@qualifier op value (op: = < <= > >=)     keep the cells whose qualifier compares so
//	@cells op n (op: = < <= > >=)             keep the cells at these 1-based positions in the row,
//	                                          counted after the other cell filters
//
// They may be ANDed with anything at the top level, not put under or or not. The @cells
// comparisons of an expression join into one window: `@cells > 2 and @cells <= 5` keeps the
// third to fifth cells.

const (
	familyPseudoColumn    = "@family"
	qualifierPseudoColumn = "@qualifier"
	cellsPseudoColumn     = "@cells"
)

// cellLeaf returns the filter of a cell pseudo-column comparison; ok is false for another name.
func cellLeaf(name, op, val string) (f client.Filter, ok bool, err error) {
	bad := func() (client.Filter, bool, error) {
		return client.Filter{}, true, fmt.Errorf("%s %s: %s does not take %s", name, op, name, op)
	}
	switch name {
	case familyPseudoColumn, qualifierPseudoColumn:
		if name == familyPseudoColumn && op == "=" {
			op, val = "~", "^"+regexp.QuoteMeta(val)+"$"
		}
		if op == "~" {
			if err := checkRegex(name, val); err != nil {
				return client.Filter{}, true, err
			}
			if name == familyPseudoColumn {
				return client.FamilyRegexFilter(val), true, nil
			}
			return client.QualifierRegexFilter(val), true, nil
		}
		if name == familyPseudoColumn {
			return bad()
		}
		v := []byte(val)
		switch op {
		case "=":
			return client.QualifierRangeFilter(v, true, v, true), true, nil
		case "<", "<=":
			return client.QualifierRangeFilter(nil, false, v, op == "<="), true, nil
		case ">", ">=":
			return client.QualifierRangeFilter(v, op == ">=", nil, false), true, nil
		}
		return bad()
	case cellsPseudoColumn:
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return client.Filter{}, true, fmt.Errorf("%s %s %q: want a cell position, a whole number >= 0", name, op, val)
		}
		// The positions lo < p <= hi, as an offset (lo) and a limit (hi-lo; 0: no hi).
		lo, hi := 0, 0
		switch op {
		case "=":
			lo, hi = n-1, n
		case "<":
			hi = n - 1
		case "<=":
			hi = n
		case ">":
			lo = n
		case ">=":
			lo = max(n-1, 0) // positions start at 1
		default:
			return bad()
		}
		if lo < 0 || (op != ">" && op != ">=" && hi <= lo) {
			return client.Filter{}, true, fmt.Errorf("%s %s %d: no cell has that position", name, op, n)
		}
		lim := 0
		if hi > 0 {
			lim = hi - lo
		}
		return client.CellsPerRowFilter(lo, lim), true, nil
	}
	return client.Filter{}, false, nil
}

// joinCells joins the @cells windows among f's top-level conjuncts (nested Ands included) into one
// at the end of the top-level And, since a read takes one cells-per-row filter.
func joinCells(f client.Filter) (client.Filter, error) {
	if f.Kind != backends.FilterAnd {
		return f, nil
	}
	lo, hi, n := 0, math.MaxInt, 0
	var strip func(f client.Filter, nested bool) (client.Filter, bool)
	strip = func(f client.Filter, nested bool) (client.Filter, bool) {
		switch f.Kind {
		case backends.FilterCellsPerRow:
			n++
			lo = max(lo, f.Offset)
			if f.Limit > 0 {
				hi = min(hi, f.Offset+f.Limit)
			}
			return client.Filter{}, false
		case backends.FilterAnd:
			var subs []client.Filter
			for _, s := range f.Subs {
				if s, keep := strip(s, true); keep {
					subs = append(subs, s)
				}
			}
			if nested && len(subs) == 1 {
				return subs[0], true // as the parser gives "(x)"
			}
			f.Subs = subs
			return f, len(subs) > 0
		}
		return f, true
	}
	out, keep := strip(f, false)
	if n < 2 {
		return f, nil
	}
	if hi <= lo {
		return client.Filter{}, fmt.Errorf("the %s comparisons leave no cell position", cellsPseudoColumn)
	}
	lim := 0
	if hi < math.MaxInt {
		lim = hi - lo
	}
	window := client.CellsPerRowFilter(lo, lim)
	if !keep {
		return window, nil
	}
	out.Subs = append(out.Subs, window)
	return out, nil
}
