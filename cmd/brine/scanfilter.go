package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/filterexpr"
	"github.com/brine-kv/brine/keys"
)

// parseFilter parses a --filter expression (package filterexpr); bare qualifiers are in the
// default family.
func parseFilter(expr string) (client.Filter, error) {
	f, err := filterexpr.Parse(expr, client.DefaultFamily)
	if err != nil {
		return f, fmt.Errorf("--filter: %w", err)
	}
	return f, nil
}

// scanFilter is a --filter planned for one scan. The stores compare bytes, where a user means numbers
// and times: a comparison with a number or a time (= and != too: 12.5 = 12.50) is evaluated here, on the rows the store
// returns; so is @key ~ when keys print otherwise than the client matches them (in hex, or typed with
// a --key schema other than the table's: the client matches the table's printed keys itself), and
// the cell filters then (they trim a row after its row predicates pass). The rest of a top-level AND
// still runs in the store.
type scanFilter struct {
	f         client.Filter
	keysLocal bool           // @key ~ is evaluated here
	store     *client.Filter // nil: every row comes back
	local     bool           // the CLI evaluates f (and its limit) on the rows the store returns

	typed map[*client.Filter]*typedLeaf // comparisons against a number or a time
	cols  []client.Column               // the columns f tests
	seen  map[client.Column]bool        // of those, the ones a row the CLI read had
}

// typedLeaf is a comparison whose literal is a number or a time, and how many rows' values it met.
type typedLeaf struct {
	num        *float64
	at         *time.Time
	rows, bad  int // rows with the column; of them, rows whose value was not a number (a time)
	exprString string
}

// newScanFilter plans f for a scan whose keys print with kf, of a table with key schema ks (nil: none).
func newScanFilter(f client.Filter, kf keyFormat, ks *keys.Schema) *scanFilter {
	sf := &scanFilter{f: f, typed: map[*client.Filter]*typedLeaf{}, seen: map[client.Column]bool{}}
	sf.keysLocal = kf.hex || (kf.schema != nil && (ks == nil || kf.schema.String() != ks.String()))
	if kf.hex || kf.schema != nil {
		sf.f = driverkit.WithKeyText(f, kf.keyText) // what @key ~ matches wherever it runs here
	}
	cols := map[client.Column]bool{}
	sf.walk(&sf.f, cols)
	sf.cols = slices.SortedFunc(maps.Keys(cols), func(a, b client.Column) int {
		return strings.Compare(a.Family+":"+a.Qualifier, b.Family+":"+b.Qualifier)
	})
	if !sf.needsLocal(&sf.f) {
		sf.store = &sf.f
		return sf
	}
	sf.local = true
	if sf.f.Kind != backends.FilterAnd {
		return sf // one condition, which needs the CLI
	}
	var push []client.Filter
	for i := range sf.f.Subs {
		if c := &sf.f.Subs[i]; !sf.needsLocal(c) && !driverkit.HasCells(c) {
			push = append(push, *c)
		}
	}
	switch len(push) {
	case 0:
	case 1:
		sf.store = &push[0]
	default:
		all := client.AllFilters(push...)
		sf.store = &all
	}
	return sf
}

// walk finds f's typed comparisons and tested columns.
func (sf *scanFilter) walk(f *client.Filter, cols map[client.Column]bool) {
	switch f.Kind {
	case backends.FilterCompare, backends.FilterRegex:
		cols[f.Column] = true
		if f.Kind == backends.FilterCompare {
			if tl := parseTyped(string(f.Value)); tl != nil {
				tl.exprString = fmt.Sprintf("%s:%s %s %s", f.Column.Family, f.Column.Qualifier, f.Op, f.Value)
				sf.typed[f] = tl
			}
		}
	}
	for i := range f.Subs {
		sf.walk(&f.Subs[i], cols)
	}
}

// needsLocal reports whether f has a leaf the store cannot evaluate as the CLI means it.
func (sf *scanFilter) needsLocal(f *client.Filter) bool {
	if _, ok := sf.typed[f]; ok {
		return true
	}
	if f.Kind == backends.FilterKeyRegex && sf.keysLocal {
		return true
	}
	for i := range f.Subs {
		if sf.needsLocal(&f.Subs[i]) {
			return true
		}
	}
	return false
}

// options are the read options the store evaluates the filter by.
func (sf *scanFilter) options() []client.ReadOption {
	if sf.store == nil {
		return nil
	}
	return []client.ReadOption{client.RowFilter(*sf.store)}
}

// apply returns the row as the filter leaves it, and whether it passes; it notes the columns seen.
func (sf *scanFilter) apply(row client.Row) (client.Row, bool) {
	for _, c := range row.Cells {
		sf.seen[client.Column{Family: c.Family, Qualifier: c.Qualifier}] = true
	}
	if !sf.local {
		return row, true
	}
	if !sf.match(&sf.f, row) {
		return row, false
	}
	if driverkit.HasCells(&sf.f) {
		_, leaves := driverkit.SplitCells(&sf.f)
		row.Cells = driverkit.TrimCells(leaves, row.Cells)
	}
	return row, len(row.Cells) > 0
}

func (sf *scanFilter) match(f *client.Filter, row client.Row) bool {
	switch f.Kind {
	case backends.FilterAnd:
		for i := range f.Subs {
			if !sf.match(&f.Subs[i], row) {
				return false
			}
		}
		return true
	case backends.FilterOr:
		for i := range f.Subs {
			if sf.match(&f.Subs[i], row) {
				return true
			}
		}
		return false
	case backends.FilterNot:
		return !sf.match(&f.Subs[0], row)
	case backends.FilterCompare:
		if tl := sf.typed[f]; tl != nil {
			return tl.match(f, row.Cells)
		}
	}
	return driverkit.MatchRow(f, row.Key, row.Cells)
}

var numberLiteral = regexp.MustCompile(`^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$`)

// parseTyped returns the typed form of a comparison's literal: a number, or a time (a date, or RFC
// 3339); nil for anything else, which compares as bytes.
func parseTyped(lit string) *typedLeaf {
	if numberLiteral.MatchString(lit) {
		if v, err := strconv.ParseFloat(lit, 64); err == nil {
			return &typedLeaf{num: &v}
		}
	}
	if t, ok := parseTime(lit); ok {
		return &typedLeaf{at: &t}
	}
	return nil
}

func parseTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.DateOnly, time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// match compares the newest value of f's column: as a number against a number literal; against a
// time literal, as milliseconds since 1970 when it is a whole number, else as a date or RFC 3339.
// A value that is neither fails an ordering comparison (and is counted for the warning); = and !=
// compare it as bytes, as the store would: it cannot be equal to a number or a time.
func (tl *typedLeaf) match(f *client.Filter, cells []client.Cell) bool {
	var v []byte
	found := false
	for _, c := range cells { // newest first within a column
		if c.Family == f.Column.Family && c.Qualifier == f.Column.Qualifier {
			v, found = c.Value, true
			break
		}
	}
	if !found {
		return false
	}
	tl.rows++
	cmp, ok := tl.compare(v)
	if !ok {
		if f.Op == client.Equal || f.Op == client.NotEqual {
			return driverkit.Match(f, cells)
		}
		tl.bad++
		return false
	}
	return driverkit.Satisfies(f.Op, cmp)
}

// compare compares v with the literal; false when v is not of the literal's kind.
func (tl *typedLeaf) compare(v []byte) (int, bool) {
	if tl.num != nil {
		x, err := strconv.ParseFloat(strings.TrimSpace(string(v)), 64)
		if err != nil {
			return 0, false
		}
		return compareFloat(x, *tl.num), true
	}
	var at time.Time
	if ms, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		at = time.UnixMilli(ms)
	} else if t, ok := parseTime(string(v)); ok {
		at = t
	} else {
		return 0, false
	}
	return at.Compare(*tl.at), true
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// warn says on w what made the filter fail rows without saying so: values a typed comparison could
// not read, and columns no row in the range has (a misspelt name), which it checks in the store
// for the columns no row read had. With strict these are an error instead (the rows were printed).
// A range that holds no rows is said as such: no filter column could be checked there, and no row
// was left out, so it is no error even with strict.
func (sf *scanFilter) warn(ctx context.Context, w io.Writer, t client.TableAPI, r client.Range, strict bool) error {
	var problems []string
	for _, tl := range sf.typed {
		if tl.bad == 0 {
			continue
		}
		kind := "a number"
		if tl.at != nil {
			kind = "a time (milliseconds since 1970, a date or RFC 3339)"
		}
		problems = append(problems, fmt.Sprintf("%s: %d of %d rows with the column hold a value that is not %s; they failed it", tl.exprString, tl.bad, tl.rows, kind))
	}
	slices.Sort(problems) // sf.typed is a map
	for _, col := range sf.cols {
		if sf.seen[col] {
			continue
		}
		found := false
		for _, err := range t.Scan(ctx, r, client.Columns(col), client.Limit(1)) {
			if err != nil {
				return err
			}
			found = true
		}
		if found {
			continue
		}
		var some []string
		seen := map[string]bool{}
		for row, err := range t.Scan(ctx, r, client.Limit(20)) {
			if err != nil {
				return err
			}
			for _, c := range row.Cells {
				if name := c.Family + ":" + c.Qualifier; !seen[name] {
					seen[name] = true
					some = append(some, name)
				}
			}
		}
		if len(some) == 0 {
			fmt.Fprintf(w, "warning: the range holds no rows, so the filter's column %s:%s could not be checked\n", col.Family, col.Qualifier)
			continue
		}
		slices.Sort(some)
		problems = append(problems, fmt.Sprintf("no row in the range has column %s:%s, so every comparison on it failed (the first rows have: %s)",
			col.Family, col.Qualifier, strings.Join(some, ", ")))
	}
	if strict && len(problems) > 0 {
		return fmt.Errorf("--strict: %s", strings.Join(problems, "; "))
	}
	for _, p := range problems {
		fmt.Fprintf(w, "warning: %s\n", p)
	}
	return nil
}
