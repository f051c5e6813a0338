package filterexpr

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/client"
)

// formatFilter writes f back in the expression syntax, fully parenthesized, values quoted (column
// names too when they hold what the lexer splits on).
func formatFilter(f client.Filter) string {
	col := f.Column.Family + ":" + f.Column.Qualifier
	if strings.ContainsAny(col, " \t\n\r()~=!<>\"'") {
		col = strconv.Quote(col)
	}
	switch f.Kind {
	case backends.FilterCompare:
		return fmt.Sprintf("%s %s %q", col, f.Op, f.Value)
	case backends.FilterKeyRegex:
		return fmt.Sprintf("@key ~ %q", f.Pattern)
	case backends.FilterRegex:
		return fmt.Sprintf("%s ~ %q", col, f.Pattern)
	case backends.FilterNot:
		return "not " + formatFilter(f.Subs[0])
	case backends.FilterFamilyRegex:
		return fmt.Sprintf("@family ~ %q", f.Pattern)
	case backends.FilterQualifierRegex:
		return fmt.Sprintf("@qualifier ~ %q", f.Pattern)
	case backends.FilterQualifierRange:
		switch {
		case f.Start != nil && f.End != nil:
			return fmt.Sprintf("@qualifier = %q", f.Start) // the parser makes both bounds for = only
		case f.Start != nil && f.StartIncl:
			return fmt.Sprintf("@qualifier >= %q", f.Start)
		case f.Start != nil:
			return fmt.Sprintf("@qualifier > %q", f.Start)
		case f.EndIncl:
			return fmt.Sprintf("@qualifier <= %q", f.End)
		}
		return fmt.Sprintf("@qualifier < %q", f.End)
	case backends.FilterCellsPerRow:
		switch {
		case f.Limit == 0:
			return fmt.Sprintf("@cells > %d", f.Offset)
		case f.Offset == 0:
			return fmt.Sprintf("@cells <= %d", f.Limit)
		}
		return fmt.Sprintf("(@cells > %d and @cells <= %d)", f.Offset, f.Offset+f.Limit)
	}
	parts := make([]string, len(f.Subs))
	for i, s := range f.Subs {
		parts[i] = formatFilter(s)
	}
	sep := " and "
	if f.Kind == backends.FilterOr {
		sep = " or "
	}
	return "(" + strings.Join(parts, sep) + ")"
}

func TestParseFilter(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"status = paid", `d:status = "paid"`},
		{"status = paid and ts > 2026-01-01", `(d:status = "paid" and d:ts > "2026-01-01")`},
		{"a=1 or b!=2 and c<3", `(d:a = "1" or (d:b != "2" and d:c < "3"))`},
		{"(a=1 or b>=2) and not c<=3", `((d:a = "1" or d:b >= "2") and not d:c <= "3")`},
		{"x:note ~ '^urg(ent)?'", `x:note ~ "^urg(ent)?"`},
		{`m:v = "two words" AND NOT NOT k = ''`, `(m:v = "two words" and not not d:k = "")`},
		{`v = "a\"b\x00"`, `d:v = "a\"b\x00"`},
		{"v = and", `d:v = "and"`},
		{"'not' = x", `d:not = "x"`},
		{"a=1 and b=2 and c=3", `(d:a = "1" and d:b = "2" and d:c = "3")`},
		{"@key ~ ^o[12] and not status = new", `(@key ~ "^o[12]" and not d:status = "new")`},
		{`"@key" = x`, `d:@key = "x"`},
		{"@family ~ ^d and @qualifier ~ '^a'", `(@family ~ "^d" and @qualifier ~ "^a")`},
		{"@family = a.b", `@family ~ "^a\\.b$"`},
		{"@qualifier >= b and @qualifier < c and @qualifier = q", `(@qualifier >= "b" and @qualifier < "c" and @qualifier = "q")`},
		{"@qualifier > b and @qualifier <= c", `(@qualifier > "b" and @qualifier <= "c")`},
		{"@cells <= 3", `@cells <= 3`},
		{"@cells < 3", `@cells <= 2`},
		{"@cells > 2", `@cells > 2`},
		{"@cells >= 2", `@cells > 1`},
		{"@cells >= 0", `@cells > 0`},
		{"@cells = 2", `(@cells > 1 and @cells <= 2)`},
		{"@cells > 2 and status = paid and @cells <= 5", `(d:status = "paid" and (@cells > 2 and @cells <= 5))`},
		{"(@cells > 2 and a = 1) and (@cells < 4 and @cells > 1)", `(d:a = "1" and (@cells > 2 and @cells <= 3))`},
		{"'@cells' = x", `d:@cells = "x"`},
		{"status = paid and @family = d and @qualifier >= a and @cells > 1 and @cells <= 3", // the README's
			`(d:status = "paid" and @family ~ "^d$" and @qualifier >= "a" and (@cells > 1 and @cells <= 3))`},
	}
	for _, tt := range tests {
		f, err := Parse(tt.expr, "d")
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.expr, err)
			continue
		}
		if got := formatFilter(f); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.expr, got, tt.want)
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"", "empty expression"},
		{"status", "expected one of = != < <= > >= ~ after status"},
		{"status =", "expected a value after status ="},
		{"status paid", `after status, got "paid"`},
		{"= paid", "at 0: expected a column name"},
		{"a = 1 and", "at the end: expected a column name"},
		{"(a = 1", "expected )"},
		{"a = 1)", `unexpected ")"`},
		{"a ! 1", "'!' must be followed by '='"},
		{`a = "open`, "unterminated string"},
		{`a = "\q"`, "bad string"},
		{"a ~ '('", "not a valid RE2 regex"},
		{":q = 1", "want family:qualifier or qualifier"},
		{"f: = 1", "want family:qualifier or qualifier"},
		{"@key = o1", "row keys take ~ only"},
		{"@key ~ '['", "not a valid RE2 regex"},
		{strings.Repeat("not ", 70) + "a = 1", "nested more than 64 deep"},
		{strings.Repeat("(", 70) + "a = 1" + strings.Repeat(")", 70), "nested more than 64 deep"},
		{"@family < d", "@family does not take <"},
		{"@family ~ '('", "not a valid RE2 regex"},
		{"@qualifier != a", "@qualifier does not take !="},
		{"@qualifier ~ '['", "not a valid RE2 regex"},
		{"@cells ~ 1", "@cells does not take ~"},
		{"@cells <= x", "want a cell position"},
		{"@cells <= -1", "want a cell position"},
		{"@cells <= 0", "no cell has that position"},
		{"@cells = 0", "no cell has that position"},
		{"@cells > 3 and @cells <= 3", "leave no cell position"},
		{"@cells <= 2 or a = 1", "under Or or Not"},
		{"not @family ~ d", "under Or or Not"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.expr, "d")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", tt.expr, err, tt.want)
		}
	}
}

// FuzzParseFilter: any input parses or fails with an error (no panic); what parses is a filter the
// store accepts, and prints back to an expression that parses to the same filter.
func FuzzParseFilter(f *testing.F) {
	for _, s := range []string{"status = paid and ts > 2026-01-01", "(a=1 or b>=2) and not c<=3",
		`x:n ~ "^a.*b$" or y:z != 'q'`, "not (a = 1)", "@key ~ ^k and a < 2", `a = "\x00\xff"`,
		"@family = d and @qualifier >= b and (@cells > 1 and a = 2) and @cells <= 4", "@cells = 3 or @qualifier ~ x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		flt, err := Parse(expr, "d")
		if err != nil {
			return
		}
		if err := driverkit.CheckLogicalFilter(&flt, nil); err != nil {
			t.Fatalf("Parse(%q) = a filter Check refuses: %v", expr, err)
		}
		text := formatFilter(flt)
		again, err := Parse(text, "other")
		if err != nil {
			t.Fatalf("Parse(%q) printed as %s, which does not parse: %v", expr, text, err)
		}
		if got := formatFilter(again); got != text {
			t.Fatalf("round trip of %q: %s, then %s", expr, text, got)
		}
	})
}
