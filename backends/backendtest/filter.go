package backendtest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/brine-kv/brine/backends"
)

var filterTests = append([]test{
	{"Kinds", testFilterKinds},
	{"Invalid", testFilterInvalid},
}, cellFilterTests...)

// Filter leaves for the cases below.
func fEq(q, v string) backends.Filter { return fCmp(q, backends.Equal, v) }
func fCmp(q string, op backends.CompareOp, v string) backends.Filter {
	fam, qual, _ := strings.Cut(q, ":")
	return backends.ValueFilter(col(fam, qual), op, []byte(v))
}
func fRe(q, pattern string) backends.Filter {
	fam, qual, _ := strings.Cut(q, ":")
	return backends.ValueRegexFilter(col(fam, qual), pattern)
}
func fAnd(fs ...backends.Filter) backends.Filter {
	return backends.Filter{Kind: backends.FilterAnd, Subs: fs}
}
func fOr(fs ...backends.Filter) backends.Filter {
	return backends.Filter{Kind: backends.FilterOr, Subs: fs}
}
func fNot(f backends.Filter) backends.Filter {
	return backends.Filter{Kind: backends.FilterNot, Subs: []backends.Filter{f}}
}

// testFilterKinds runs every filter kind, nested, through Scan (both ways, with and without a limit)
// and Read, on one table whose rows miss columns, hold an empty value and an older version.
func testFilterKinds(e *env) {
	name := e.createTable(backends.TableOptions{MaxVersions: 2})
	ts := e.ts
	e.apply(name,
		put("k01", cell("d", "status", "paid", ts), cell("d", "amt", "0100", ts), cell("x", "n", "a", ts)),
		put("k02", cell("d", "status", "new", ts), cell("d", "amt", "0250", ts)),
		put("k03", cell("d", "status", "paid", ts), cell("d", "amt", "0900", ts)),
		put("k04", cell("d", "amt", "0050", ts)),
		put("k05", cell("d", "status", "shipped", ts), cell("d", "amt", "0300", ts), cell("x", "n", "b", ts)),
		put("k06", cell("d", "status", "paid", ts), cell("d", "status", "refunded", ts+1)),
		put("k07", cell("x", "n", "c", ts)),
		put("k08", cell("d", "status", "", ts), cell("d", "amt", "1000", ts)),
	)
	all := keys("k01", "k02", "k03", "k04", "k05", "k06", "k07", "k08")
	tests := []struct {
		name string
		f    backends.Filter
		tr   backends.TimeRange
		cols []backends.Column
		want string // matching keys, space-separated
	}{
		{name: "equal", f: fEq("d:status", "paid"), want: "k01 k03"},
		{name: "not equal skips missing", f: fCmp("d:status", backends.NotEqual, "paid"), want: "k02 k05 k06 k08"},
		{name: "less", f: fCmp("d:amt", backends.Less, "0250"), want: "k01 k04"},
		{name: "less or equal", f: fCmp("d:amt", backends.LessOrEqual, "0250"), want: "k01 k02 k04"},
		{name: "greater", f: fCmp("d:amt", backends.Greater, "0300"), want: "k03 k08"},
		{name: "greater or equal", f: fCmp("d:amt", backends.GreaterOrEqual, "0300"), want: "k03 k05 k08"},
		{name: "equal empty value", f: fEq("d:status", ""), want: "k08"},
		{name: "prefix is less", f: fCmp("d:status", backends.Less, "paidx"), want: "k01 k02 k03 k08"},
		{name: "regex anchored", f: fRe("d:status", "^(paid|new)$"), want: "k01 k02 k03"},
		{name: "regex anywhere", f: fRe("d:status", "ed"), want: "k05 k06"},
		{name: "and", f: fAnd(fEq("d:status", "paid"), fCmp("d:amt", backends.Greater, "0500")), want: "k03"},
		{name: "or across families", f: fOr(fEq("d:status", "new"), fEq("x:n", "b")), want: "k02 k05"},
		{name: "not passes missing", f: fNot(fEq("d:status", "paid")), want: "k02 k04 k05 k06 k07 k08"},
		{name: "not regex", f: fNot(fRe("d:status", "^p")), want: "k02 k04 k05 k06 k07 k08"},
		{name: "not and", f: fNot(fAnd(fEq("d:status", "paid"), fCmp("d:amt", backends.Greater, "0500"))), want: "k01 k02 k04 k05 k06 k07 k08"},
		{name: "not or", f: fNot(fOr(fEq("d:status", "paid"), fCmp("d:amt", backends.Less, "0100"))), want: "k02 k05 k06 k07 k08"},
		{name: "not not", f: fNot(fNot(fEq("d:status", "paid"))), want: "k01 k03"},
		{name: "nested", f: fOr(fAnd(fEq("d:status", "paid"), fCmp("d:amt", backends.Less, "0500")), fNot(fRe("d:amt", "."))), want: "k01 k06 k07"},
		{name: "single sub-filter", f: fAnd(fEq("x:n", "c")), want: "k07"},
		{name: "family the table lacks is missing", f: fEq("nope:status", "paid"), want: ""},
		{name: "not of a family the table lacks", f: fNot(fEq("nope:status", "paid")), want: "k01 k02 k03 k04 k05 k06 k07 k08"},
		{name: "newest version in the time range", f: fEq("d:status", "paid"), tr: backends.TimeRange{From: ts, To: ts + 1}, want: "k01 k03 k06"},
		{name: "newer version fails", f: fEq("d:status", "refunded"), tr: backends.TimeRange{From: ts, To: ts + 1}, want: ""},
		{name: "filter on a selected family", f: fEq("d:status", "paid"), cols: []backends.Column{col("d", "")}, want: "k01 k03"},
		{name: "filter on a selected column", f: fCmp("d:amt", backends.GreaterOrEqual, "0900"), cols: []backends.Column{col("d", "amt")}, want: "k03 k08"},
	}
	for _, tt := range tests {
		want := strings.Fields(tt.want)
		ropts := backends.ReadOptions{Columns: tt.cols, TimeRange: tt.tr, Filter: &tt.f}
		// What the rows are without the filter, to check a filter keeps rows whole.
		plain, err := e.b.Read(e.ctx, name, all, backends.ReadOptions{Columns: tt.cols, TimeRange: tt.tr})
		if err != nil {
			e.Fatalf("%s: Read without filter: %v", tt.name, err)
		}
		var wantRows []backends.Row
		for _, r := range plain {
			if slices.Contains(want, string(r.Key)) {
				wantRows = append(wantRows, r)
			}
		}
		got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts}))
		if err != nil {
			e.Fatalf("%s: Scan: %v", tt.name, err)
		}
		e.wantRows(tt.name+": Scan", got, wantRows)

		rev, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts, Reverse: true, Limit: 2}))
		if err != nil {
			e.Fatalf("%s: reverse Scan: %v", tt.name, err)
		}
		wantRev := slices.Clone(wantRows)
		slices.Reverse(wantRev)
		e.wantRows(tt.name+": reverse Scan, limit 2", rev, wantRev[:min(2, len(wantRev))])

		// A reverse scan with a start bound (a bucket's range, as the client sends it).
		from, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{Start: []byte("k02")}, backends.ScanOptions{ReadOptions: ropts, Reverse: true}))
		if err != nil {
			e.Fatalf("%s: reverse Scan from k02: %v", tt.name, err)
		}
		e.wantRows(tt.name+": reverse Scan from k02", from, slices.DeleteFunc(slices.Clone(wantRev), func(r backends.Row) bool { return string(r.Key) < "k02" }))

		lim, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts, Limit: 1, BatchSize: 1}))
		if err != nil {
			e.Fatalf("%s: Scan limit 1: %v", tt.name, err)
		}
		e.wantRows(tt.name+": Scan, limit 1, batch 1", lim, wantRows[:min(1, len(wantRows))])

		rows, err := e.b.Read(e.ctx, name, all, ropts)
		if err != nil {
			e.Fatalf("%s: Read: %v", tt.name, err)
		}
		for i, r := range rows {
			wantCells := []backends.Cell(nil)
			if slices.Contains(want, string(r.Key)) {
				wantCells = plain[i].Cells
			}
			e.wantCells(fmt.Sprintf("%s: Read %q", tt.name, r.Key), r.Cells, wantCells)
		}
	}
}

// testFilterInvalid: a filter that cannot be evaluated as given fails the call with
// ErrInvalidArgument, in Read and in Scan.
func testFilterInvalid(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("k", cell("d", "status", "paid", e.ts)))
	tests := []struct {
		name string
		f    backends.Filter
		cols []backends.Column
	}{
		{"no qualifier", backends.ValueFilter(col("d", ""), backends.Equal, nil), nil},
		{"column not selected", fEq("x:n", "a"), []backends.Column{col("d", "status")}},
		{"bad regex", fRe("d:status", "("), nil},
		{"unknown comparison", backends.ValueFilter(col("d", "status"), 0, nil), nil},
		{"empty and", fAnd(), nil},
		{"not with two", backends.Filter{Kind: backends.FilterNot, Subs: []backends.Filter{fEq("d:status", "a"), fEq("d:status", "b")}}, nil},
		{"zero filter", backends.Filter{}, nil},
		{"bad leaf inside", fOr(fEq("d:status", "a"), fNot(fRe("d:status", "["))), nil},
		{"row-key leaf (the client evaluates those)", fAnd(fEq("d:status", "a"), backends.KeyRegexFilter("k")), nil},
	}
	for _, tt := range tests {
		ropts := backends.ReadOptions{Columns: tt.cols, Filter: &tt.f}
		if _, err := e.b.Read(e.ctx, name, keys("k"), ropts); !errors.Is(err, backends.ErrInvalidArgument) {
			e.Errorf("%s: Read error = %v, want ErrInvalidArgument", tt.name, err)
		}
		if _, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: ropts})); !errors.Is(err, backends.ErrInvalidArgument) {
			e.Errorf("%s: Scan error = %v, want ErrInvalidArgument", tt.name, err)
		}
	}
}
