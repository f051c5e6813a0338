package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
)

// TestScanFilterAsPrinted: --filter compares what scan prints: @key ~ matches the printed key of a
// table with a key schema (the store holds it encoded), and an ordering comparison with a number or a
// time compares numbers and times (a millisecond column against a date), not bytes; the rest of a
// top-level AND still runs in the store, and --limit counts the rows that pass.
func TestScanFilterAsPrinted(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "o", "--salt", "hash:4", "--key", "id")
	ms := func(y int, m time.Month) string {
		return strconv.FormatInt(time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), 10)
	}
	for _, r := range [][]string{
		{"O0000001", "d:status=paid", "d:ts=" + ms(2026, 2), "d:amt=99", "d:day=2026-02-01"},
		{"O0000002", "d:status=new", "d:ts=" + ms(2025, 12), "d:amt=250", "d:day=2025-12-01"},
		{"O0001000", "d:status=paid", "d:ts=" + ms(2026, 3), "d:amt=1000", "d:day=2026-03-01T10:00:00Z"},
	} {
		c.ok(append([]string{"put", "--store", c.store, "--table", "o", "--"}, r...)...)
	}
	for _, tc := range []struct {
		filter string
		extra  []string
		want   []string
	}{
		{filter: `@key ~ "^O0000001"`, want: []string{"O0000001"}},
		{filter: `@key ~ "^O000000" and status = paid`, want: []string{"O0000001"}},
		{filter: `not @key ~ "2$" and @qualifier ~ "^amt$"`, want: []string{"O0000001", "O0001000"}},
		{filter: "ts > 2026-01-01", want: []string{"O0000001", "O0001000"}},
		{filter: "ts >= 2026-03-01T00:00:00Z or amt < 100", want: []string{"O0000001", "O0001000"}},
		{filter: "day > 2026-01-01", want: []string{"O0000001", "O0001000"}},
		{filter: "amt > 100", want: []string{"O0000002", "O0001000"}},
		{filter: "amt > 100", extra: []string{"--limit", "1"}, want: []string{"O0000002"}},
		{filter: "amt = 99", want: []string{"O0000001"}},
	} {
		args := append([]string{"scan", "--store", c.store, "--table", "o", "--filter", tc.filter}, tc.extra...)
		out, errOut, err := c.run(t.Context(), args...)
		if err != nil {
			t.Fatalf("--filter %q: %v", tc.filter, err)
		}
		if got := rowKeys(parseRows(t, out)); !slices.Equal(got, tc.want) {
			t.Errorf("--filter %q %v: rows %q, want %q", tc.filter, tc.extra, got, tc.want)
		}
		if w := warnings(errOut); len(w) != 0 {
			t.Errorf("--filter %q: warnings %q", tc.filter, w)
		}
		if tc.filter == `not @key ~ "2$" and @qualifier ~ "^amt$"` {
			for _, r := range parseRows(t, out) {
				if !slices.Equal(r.cols()[:1], []string{"d:amt=" + map[string]string{"O0000001": "99", "O0001000": "1000"}[r.Key]}) || len(r.Cells) != 1 {
					t.Errorf("@qualifier with a key regex: row %s has %v, want its d:amt only", r.Key, r.cols())
				}
			}
		}
	}
}

// TestScanFilterHexKeys: with --hex, @key ~ matches the hex scan prints.
func TestScanFilterHexKeys(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "b", "--salt", "hash:4")
	for _, k := range []string{"00ff", "ff00", "0a0b"} {
		c.ok("put", "--store", c.store, "--table", "b", "--hex", k, "d:v=x")
	}
	out := c.ok("scan", "--store", c.store, "--table", "b", "--hex", "--filter", `@key ~ "^0"`)
	if got := rowKeys(parseRows(t, out)); !slices.Equal(got, []string{"00ff", "0a0b"}) {
		t.Errorf("@key ~ ^0 with --hex: %q, want 00ff 0a0b", got)
	}
}

// TestScanFilterWarns: a filter that fails rows for a reason the user cannot see says so on stderr
// when the scan ends: a column no row has (a misspelt name), and values a typed comparison cannot read.
func TestScanFilterWarns(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "o", "--salt", "hash:4")
	c.ok("put", "--store", c.store, "--table", "o", "--", "o1", "d:status=paid", "d:ts=soon")
	c.ok("put", "--store", c.store, "--table", "o", "--", "o2", "d:status=new", "d:ts=1767225600000")
	for _, tc := range []struct {
		filter string
		rows   int
		warn   string // the start of the one warning line
	}{
		{"stauts = paid", 0, "warning: no row in the range has column d:stauts, so every comparison on it failed (the first rows have: d:status, d:ts)"},
		{"status = paid or stauts = new", 1, "warning: no row in the range has column d:stauts,"},
		{"ts < 2027-01-01", 1, "warning: d:ts < 2027-01-01: 1 of 2 rows with the column hold a value that is not a time"},
	} {
		out, errOut, err := c.run(t.Context(), "scan", "--store", c.store, "--table", "o", "--filter", tc.filter)
		if err != nil {
			t.Fatalf("--filter %q: %v", tc.filter, err)
		}
		if n := len(parseRows(t, out)); n != tc.rows {
			t.Errorf("--filter %q: %d rows, want %d", tc.filter, n, tc.rows)
		}
		if w := warnings(errOut); len(w) != 1 || !strings.HasPrefix(w[0], tc.warn) {
			t.Errorf("--filter %q: warnings %q, want one starting %q", tc.filter, w, tc.warn)
		}
	}
}

// warnings returns the lines of stderr that are warnings.
func warnings(stderr string) []string {
	var out []string
	for line := range strings.SplitSeq(stderr, "\n") {
		if strings.HasPrefix(line, "warning: ") {
			out = append(out, line)
		}
	}
	return out
}

// TestScanFilterKeysWhere: @key ~ runs in the client (KeyRegexFilter on the table's printed keys)
// when scan prints keys as the table's schema does, here when they print otherwise.
func TestScanFilterKeysWhere(t *testing.T) {
	stored := testkit.Schema(t, "id,n:int64")
	other := testkit.Schema(t, "id")
	f := client.KeyRegexFilter("^O1")
	for _, tc := range []struct {
		name  string
		kf    keyFormat
		table *keys.Schema
		local bool
	}{
		{"the table's schema", keyFormat{schema: stored}, stored, false},
		{"--key equal to the table's", keyFormat{schema: other}, other, false},
		{"--key other than the table's", keyFormat{schema: other}, stored, true},
		{"--key, table without schema", keyFormat{schema: other}, nil, true},
		{"--hex", keyFormat{hex: true}, stored, true},
		{"text keys", keyFormat{}, nil, false},
	} {
		if got := newScanFilter(f, tc.kf, tc.table).local; got != tc.local {
			t.Errorf("%s: local %v, want %v", tc.name, got, tc.local)
		}
	}
	// Evaluated here, a key the --key schema cannot decode fails @key ~, as in the client.
	sf := newScanFilter(client.KeyRegexFilter(""), keyFormat{schema: other}, stored)
	good, _ := other.Encode("O1")
	for key, want := range map[string]bool{string(good): true, "O1": false} {
		if _, ok := sf.apply(client.Row{Key: []byte(key), Cells: []client.Cell{{Family: "d", Qualifier: "q"}}}); ok != want {
			t.Errorf("@key ~ \"\" on %q: %v, want %v", key, ok, want)
		}
	}
}
