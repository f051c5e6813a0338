package main

import (
	"slices"
	"strings"
	"testing"
)

// = and != compare numbers with a number, as < and > do (12.5 = 12.50); a value that is not a number
// compares as bytes there, without a warning.
func TestScanFilterEqualNumbers(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "o", "--salt", "hash:4")
	for _, r := range [][]string{
		{"o1", "d:amount=12.50"},
		{"o2", "d:amount=12.5"},
		{"o3", "d:amount=1.25e1"},
		{"o4", "d:amount=13"},
		{"o5", "d:amount=n/a"},
		{"o6", "d:day=2026-01-01"},
		{"o7", "d:day=1767225600000"},
	} {
		c.ok(append([]string{"put", "--store", c.store, "--table", "o", "--"}, r...)...)
	}
	for _, tc := range []struct {
		filter string
		want   []string
	}{
		{"amount = 12.5", []string{"o1", "o2", "o3"}},
		{"amount = 12.50", []string{"o1", "o2", "o3"}},
		{"amount != 12.5", []string{"o4", "o5"}},
		{"amount = n/a", []string{"o5"}},
		{"amount != n/a", []string{"o1", "o2", "o3", "o4"}},
		{"not amount = 13", []string{"o1", "o2", "o3", "o5", "o6", "o7"}},
		{"day = 2026-01-01", []string{"o6", "o7"}},
	} {
		out, errOut, err := c.run(t.Context(), "scan", "--store", c.store, "--table", "o", "--filter", tc.filter)
		if err != nil {
			t.Fatalf("--filter %q: %v", tc.filter, err)
		}
		if got := rowKeys(parseRows(t, out)); !slices.Equal(got, tc.want) {
			t.Errorf("--filter %q: rows %q, want %q", tc.filter, got, tc.want)
		}
		if w := warnings(errOut); len(w) != 0 {
			t.Errorf("--filter %q: warnings %q", tc.filter, w)
		}
	}
}

// --strict makes what the filter warns about an error; a range with no rows is said as such, with no
// empty list of columns, and is no error even with --strict.
func TestScanFilterStrict(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "o", "--salt", "hash:4")
	c.ok("put", "--store", c.store, "--table", "o", "--", "o1", "d:status=paid", "d:ts=soon")
	c.ok("put", "--store", c.store, "--table", "o", "--", "o2", "d:status=new", "d:ts=1767225600000")
	for _, tc := range []struct {
		name   string
		args   []string
		strict bool
		failed bool   // the command fails
		warn   string // the start of the one warning line; "" for none
	}{
		{"misspelt column", []string{"--filter", "stauts = paid"}, false, false, "warning: no row in the range has column d:stauts"},
		{"misspelt column, strict", []string{"--filter", "stauts = paid"}, true, true, ""},
		{"unreadable values, strict", []string{"--filter", "ts < 2027-01-01"}, true, true, ""},
		{"good filter, strict", []string{"--filter", "status = paid"}, true, false, ""},
		{"empty range", []string{"--filter", "stauts = paid", "--start", "x", "--end", "y"}, false, false, "warning: the range holds no rows"},
		{"empty range, strict", []string{"--filter", "stauts = paid", "--start", "x", "--end", "y"}, true, false, "warning: the range holds no rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"scan", "--store", c.store, "--table", "o"}, tc.args...)
			if tc.strict {
				args = append(args, "--strict")
			}
			_, errOut, err := c.run(t.Context(), args...)
			if failed := err != nil; failed != tc.failed {
				t.Fatalf("brine %q: err %v, want failure %v", args, err, tc.failed)
			}
			if tc.failed && !strings.HasPrefix(err.Error(), "--strict: ") {
				t.Errorf("error %q does not name --strict", err)
			}
			w := warnings(errOut)
			switch {
			case tc.warn == "" && len(w) != 0:
				t.Errorf("warnings %q, want none", w)
			case tc.warn != "" && (len(w) != 1 || !strings.HasPrefix(w[0], tc.warn)):
				t.Errorf("warnings %q, want one starting %q", w, tc.warn)
			}
			for _, line := range w {
				if strings.Contains(line, "have: )") {
					t.Errorf("warning lists no columns: %q", line)
				}
			}
		})
	}
}

// scan --index compares as scan does: amount = 12.5 matches 12.50 in the main rows it reads, and
// --limit counts the rows that pass.
func TestIndexScanFilterNumbers(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "o", "--salt", "hash:4", "--index", "by_seller=salt=hash:2|key=c:d:seller")
	for _, r := range [][]string{
		{"o1", "d:seller=s1", "d:amount=12.50"},
		{"o2", "d:seller=s1", "d:amount=13"},
		{"o3", "d:seller=s1", "d:amount=12.5"},
		{"o4", "d:seller=s2", "d:amount=12.5"},
	} {
		c.ok(append([]string{"put", "--store", c.store, "--table", "o", "--"}, r...)...)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--filter", "amount = 12.5"}, []string{"o1", "o3"}},
		{[]string{"--filter", "amount > 12.6"}, []string{"o2"}},
		{[]string{"--filter", "amount = 12.5", "--limit", "1"}, []string{"o1"}},
	} {
		args := append([]string{"scan", "--store", c.store, "--table", "o", "--index", "by_seller", "--prefix", "s1"}, tc.args...)
		out := c.ok(args...)
		if got := rowKeys(parseRows(t, out)); !slices.Equal(got, tc.want) {
			t.Errorf("%q: rows %q, want %q", tc.args, got, tc.want)
		}
	}
}
