package backendtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brine-kv/brine/backends"
)

// cellFilterTests: the cell filters (backends/cellfilter.go), registered in filterTests.
var cellFilterTests = []test{
	{"Cells", testFilterCells},
	{"CellsInvalid", testFilterCellsInvalid},
}

func fFam(p string) backends.Filter  { return backends.FamilyRegexFilter(p) }
func fQual(p string) backends.Filter { return backends.QualifierRegexFilter(p) }
func fQRange(start string, si bool, end string, ei bool) backends.Filter {
	var s, e []byte
	if start != "" {
		s = []byte(start)
	}
	if end != "" {
		e = []byte(end)
	}
	return backends.QualifierRangeFilter(s, si, e, ei)
}
func fPage(offset, limit int) backends.Filter { return backends.CellsPerRowFilter(offset, limit) }

// flatCells writes rows as "key/family:qualifier=value" words, in order.
func flatCells(rows []backends.Row) string {
	var out []string
	for _, r := range rows {
		for _, c := range r.Cells {
			out = append(out, fmt.Sprintf("%s/%s:%s=%s", r.Key, c.Family, c.Qualifier, c.Value))
		}
	}
	return strings.Join(out, " ")
}

// testFilterCells runs every cell filter, alone, chained and with row predicates, through Scan
// (forward, reverse with a limit, forward with limit 1) and Read, against cells written out by hand.
func testFilterCells(e *env) {
	name := e.createTable(backends.TableOptions{MaxVersions: 2})
	ts := e.ts
	e.apply(name,
		put("k1", cell("d", "a", "a1", ts), cell("d", "b", "b1", ts), cell("d", "c", "c1", ts), cell("x", "a", "xa1", ts)),
		put("k2", cell("d", "b", "b2", ts), cell("d", "b", "b2new", ts+1), cell("x", "z", "xz2", ts)),
		put("k3", cell("x", "n", "n3", ts)),
		put("k4", cell("d", "status", "paid", ts), cell("d", "amt", "0100", ts), cell("d", "c", "c4", ts)),
	)
	all := keys("k1", "k2", "k3", "k4")
	tests := []struct {
		name     string
		f        backends.Filter
		versions int
		tr       backends.TimeRange
		cols     []backends.Column
		want     string // flatCells of the result
	}{
		{name: "family regex", f: fFam("^x$"), want: "k1/x:a=xa1 k2/x:z=xz2 k3/x:n=n3"},
		{name: "qualifier regex", f: fQual("^[ab]$"), want: "k1/d:a=a1 k1/d:b=b1 k1/x:a=xa1 k2/d:b=b2new"},
		{name: "qualifier range [b, c)", f: fQRange("b", true, "c", false), want: "k1/d:b=b1 k2/d:b=b2new"},
		{name: "qualifier range (a, c]", f: fQRange("a", false, "c", true), want: "k1/d:b=b1 k1/d:c=c1 k2/d:b=b2new k4/d:amt=0100 k4/d:c=c4"},
		{name: "qualifier range from n", f: fQRange("n", true, "", false), want: "k2/x:z=xz2 k3/x:n=n3 k4/d:status=paid"},
		{name: "qualifier range to a", f: fQRange("", false, "a", true), want: "k1/d:a=a1 k1/x:a=xa1"},
		{name: "qualifier range of one", f: fQRange("c", true, "c", true), want: "k1/d:c=c1 k4/d:c=c4"},
		{name: "cells per row limit", f: fPage(0, 1), want: "k1/d:a=a1 k2/d:b=b2new k3/x:n=n3 k4/d:amt=0100"},
		{name: "cells per row offset and limit", f: fPage(1, 2), want: "k1/d:b=b1 k1/d:c=c1 k2/x:z=xz2 k4/d:c=c4 k4/d:status=paid"},
		{name: "cells per row offset only", f: fPage(3, 0), want: "k1/x:a=xa1"},
		{name: "cells per row counts versions", f: fPage(0, 2), versions: 2, want: "k1/d:a=a1 k1/d:b=b1 k2/d:b=b2new k2/d:b=b2 k3/x:n=n3 k4/d:amt=0100 k4/d:c=c4"},
		{name: "limit after selection", f: fAnd(fPage(0, 1), fQual("^[a-c]$")), want: "k1/d:a=a1 k2/d:b=b2new k4/d:c=c4"},
		{name: "family and qualifier range", f: fAnd(fFam("d"), fQRange("b", true, "", false)), want: "k1/d:b=b1 k1/d:c=c1 k2/d:b=b2new k4/d:c=c4 k4/d:status=paid"},
		{name: "row predicate tests before trimming", f: fAnd(fEq("d:status", "paid"), fQual("^amt$")), want: "k4/d:amt=0100"},
		{name: "row predicate and limit", f: fAnd(fEq("d:status", "paid"), fPage(1, 1)), want: "k4/d:c=c4"},
		{name: "negated predicate and family", f: fAnd(fNot(fEq("d:status", "paid")), fFam("^x")), want: "k1/x:a=xa1 k2/x:z=xz2 k3/x:n=n3"},
		{name: "regex predicate and range", f: fAnd(fRe("d:b", "^b"), fQRange("b", false, "", false)), want: "k1/d:c=c1 k2/x:z=xz2"},
		{name: "time range then limit", f: fPage(0, 1), tr: backends.TimeRange{From: ts, To: ts + 1}, want: "k1/d:a=a1 k2/d:b=b2 k3/x:n=n3 k4/d:amt=0100"},
		{name: "selected family then offset", f: fPage(1, 0), cols: []backends.Column{col("d", "")}, want: "k1/d:b=b1 k1/d:c=c1 k4/d:c=c4 k4/d:status=paid"},
		{name: "nothing kept", f: fQual("^nope$"), want: ""},
		{name: "nested and", f: fAnd(fAnd(fEq("d:status", "paid"), fPage(0, 2)), fAnd(fFam("d"))), want: "k4/d:amt=0100 k4/d:c=c4"},
	}
	for _, tt := range tests {
		ropts := backends.ReadOptions{Columns: tt.cols, MaxVersions: tt.versions, TimeRange: tt.tr, Filter: &tt.f}
		got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts}))
		if err != nil {
			e.Fatalf("%s: Scan: %v", tt.name, err)
		}
		if g := flatCells(got); g != tt.want {
			e.Fatalf("%s: Scan:\n got  %s\n want %s", tt.name, g, tt.want)
		}
		for _, r := range got {
			if len(r.Cells) == 0 {
				e.Fatalf("%s: Scan returned row %q with no cells", tt.name, r.Key)
			}
		}

		// Rows trimmed to nothing do not count towards a limit.
		lim, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts, Limit: 1, BatchSize: 1}))
		if err != nil {
			e.Fatalf("%s: Scan limit 1: %v", tt.name, err)
		}
		e.wantRows(tt.name+": Scan, limit 1, batch 1", lim, got[:min(1, len(got))])

		rev, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts, Reverse: true, Limit: 2}))
		if err != nil {
			e.Fatalf("%s: reverse Scan: %v", tt.name, err)
		}
		wantRev := slices.Clone(got)
		slices.Reverse(wantRev)
		e.wantRows(tt.name+": reverse Scan, limit 2", rev, wantRev[:min(2, len(wantRev))])

		rows, err := e.b.Read(e.ctx, name, all, ropts)
		if err != nil {
			e.Fatalf("%s: Read: %v", tt.name, err)
		}
		for i, r := range rows {
			var want []backends.Cell
			if j := slices.IndexFunc(got, func(g backends.Row) bool { return string(g.Key) == string(all[i]) }); j >= 0 {
				want = got[j].Cells
			}
			e.wantCells(fmt.Sprintf("%s: Read %q", tt.name, r.Key), r.Cells, want)
		}
	}
}

// testFilterCellsInvalid: bad cell filters fail Read and Scan with ErrInvalidArgument, and a cell
// filter under Or or Not with ErrUnsupported, before anything is read.
func testFilterCellsInvalid(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("k", cell("d", "status", "paid", e.ts)))
	tests := []struct {
		name string
		f    backends.Filter
		want error
	}{
		{"bad family regex", fFam("("), backends.ErrInvalidArgument},
		{"bad qualifier regex", fAnd(fEq("d:status", "paid"), fQual("[")), backends.ErrInvalidArgument},
		{"regex leaf without its constructor", backends.Filter{Kind: backends.FilterQualifierRegex, Pattern: "a"}, backends.ErrInvalidArgument},
		{"empty qualifier range", fQRange("b", true, "a", true), backends.ErrInvalidArgument},
		{"empty qualifier range of one", fQRange("b", true, "b", false), backends.ErrInvalidArgument},
		{"negative limit", fPage(0, -1), backends.ErrInvalidArgument},
		{"negative offset", fPage(-1, 1), backends.ErrInvalidArgument},
		{"two cells-per-row", fAnd(fPage(0, 1), fPage(1, 1)), backends.ErrInvalidArgument},
		{"under or", fOr(fEq("d:status", "paid"), fQual("a")), backends.ErrUnsupported},
		{"under not", fNot(fFam("d")), backends.ErrUnsupported},
		{"under a nested and", fAnd(fEq("d:status", "paid"), fOr(fAnd(fPage(0, 1)))), backends.ErrUnsupported},
	}
	for _, tt := range tests {
		ropts := backends.ReadOptions{Filter: &tt.f}
		if _, err := e.b.Read(e.ctx, name, keys("k"), ropts); !errors.Is(err, tt.want) {
			e.Errorf("%s: Read error = %v, want %v", tt.name, err, tt.want)
		}
		if _, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts})); !errors.Is(err, tt.want) {
			e.Errorf("%s: Scan error = %v, want %v", tt.name, err, tt.want)
		}
	}
}
