package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
)

// scanData is the scan tests' table: binary keys with 0x00 and 0xFF, keys that prefix others, and 200
// rows "r/000".."r/199", of which every fifth has only family x and every third (of the others) has
// family x too, so that column filters skip rows.
func scanData(ts int64) []backends.Row {
	ks := [][]byte{
		{0x00}, {0x00, 0x00}, {0x00, 0x01}, {0x00, 0xFF}, {0x01}, {0x7F}, {0x80},
		{0xFE, 0xFF}, {0xFF}, {0xFF, 0x00}, {0xFF, 0xFF}, {0xFF, 0xFF, 0xFF},
		[]byte("a"), []byte("a\x00"), []byte("ab"), []byte("abc"), []byte("abd"), []byte("a\xff"),
		[]byte("b"), []byte("ba"),
	}
	for i := range 200 {
		ks = append(ks, fmt.Appendf(nil, "r/%03d", i))
	}
	slices.SortFunc(ks, bytes.Compare)
	rows := make([]backends.Row, len(ks))
	for i, k := range ks {
		var cells []backends.Cell
		n := -1
		if _, err := fmt.Sscanf(string(k), "r/%d", &n); err != nil {
			n = -1
		}
		if n < 0 || n%5 != 0 {
			cells = append(cells, backends.Cell{Family: "d", Qualifier: "k", Value: bytes.Clone(k), Timestamp: ts},
				cell("d", "n", fmt.Sprint(i), ts+int64(i)))
		}
		if n >= 0 && (n%5 == 0 || n%3 == 0) {
			cells = append(cells, cell("x", "q", fmt.Sprintf("x%d", n), ts))
		}
		rows[i] = backends.Row{Key: k, Cells: cells}
	}
	return rows
}

// ExpectKeys is the reference model of a scan, for tests of any layer that scans keys: the keys of
// sorted (ascending, no two equal) that lie in r, in scan order (descending when reverse), at most
// limit of them (0: no limit).
func ExpectKeys(sorted [][]byte, r backends.Range, reverse bool, limit int) [][]byte {
	return expect(sorted, func(k []byte) []byte { return k }, r, reverse, limit)
}

// expect is ExpectKeys over any element with a key.
func expect[T any](sorted []T, key func(T) []byte, r backends.Range, reverse bool, limit int) []T {
	var out []T
	for _, e := range sorted {
		if r.Contains(key(e)) {
			out = append(out, e)
		}
	}
	if reverse {
		slices.Reverse(out)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// expectScan is what a scan of data (sorted) must return: the rows with a cell opts.Columns selects,
// those cells only.
func expectScan(data []backends.Row, r backends.Range, opts backends.ScanOptions) []backends.Row {
	var selected []backends.Row
	for _, row := range data {
		var cells []backends.Cell
		for _, c := range row.Cells {
			if len(opts.Columns) == 0 || slices.ContainsFunc(opts.Columns, func(col backends.Column) bool {
				return col.Family == c.Family && (col.Qualifier == "" || col.Qualifier == c.Qualifier)
			}) {
				cells = append(cells, c)
			}
		}
		if len(cells) > 0 {
			selected = append(selected, backends.Row{Key: row.Key, Cells: cells})
		}
	}
	return expect(selected, func(row backends.Row) []byte { return row.Key }, r, opts.Reverse, opts.Limit)
}

type scanCase struct {
	name       string
	r          backends.Range
	limit      int
	batchSize  int
	firstBatch int
	cols       []backends.Column
}

func rng(start, end string) backends.Range {
	var r backends.Range
	if start != "" {
		r.Start = []byte(start)
	}
	if end != "" {
		r.End = []byte(end)
	}
	return r
}

var scanCases = []scanCase{
	{name: "all"},
	{name: "start only", r: rng("b", "")},
	{name: "end only", r: rng("", "b")},
	{name: "empty non-nil bounds", r: backends.Range{Start: []byte{}, End: []byte{}}},
	{name: "existing bounds", r: rng("ab", "b")},
	{name: "bounds between keys", r: rng("aa", "abz")},
	{name: "one key", r: rng("a", "a\x00")},
	{name: "keys that extend the start", r: rng("a", "b")},
	{name: "end is a prefix of keys", r: rng("a\x00", "ab")},
	{name: "start equals end", r: rng("ab", "ab")},
	{name: "start after end", r: rng("b", "a")},
	{name: "before the first key", r: rng("", "\x00")},
	{name: "after the last key", r: rng("\xff\xff\xff\x00", "")},
	{name: "0x00 keys", r: rng("\x00", "\x01")},
	{name: "0x00 keys, end 0x00 0x00", r: rng("\x00", "\x00\x00")},
	{name: "0xFF keys", r: rng("\xff", "")},
	{name: "end 0xFF 0xFF", r: rng("\xfe", "\xff\xff")},
	{name: "end 0xFF", r: rng("\x7f", "\xff")},
	{name: "across regions", r: rng("9", "r/150")},
	{name: "end at a region boundary", r: rng("", "r/100")},
	{name: "start at a region boundary", r: rng("r/100", "r/110")},
	{name: "limit 1", limit: 1},
	{name: "limit in range", r: rng("r/010", "r/050"), limit: 7},
	{name: "limit equals rows", r: rng("a", "b"), limit: 6},
	{name: "limit above rows", r: rng("a", "b"), limit: 1000},
	{name: "limit on an empty range", r: rng("zz", "zzz"), limit: 5},
	{name: "batch 1", batchSize: 1},
	{name: "batch 7", batchSize: 7},
	{name: "batch 3 limit 10", batchSize: 3, limit: 10},
	{name: "batch 1 in range", r: rng("a", "b"), batchSize: 1},
	{name: "first batch 1, growing", firstBatch: 1},
	{name: "first batch 2, batch 7, limit 40", firstBatch: 2, batchSize: 7, limit: 40},
	{name: "first batch above the batch", r: rng("r/010", ""), firstBatch: 50, batchSize: 4},
	{name: "family", cols: []backends.Column{col("d", "")}},
	{name: "column, limit", cols: []backends.Column{col("x", "q")}, limit: 5},
	{name: "columns in range", r: rng("r/020", "r/060"), cols: []backends.Column{col("d", "k"), col("x", "q")}},
	{name: "sparse family, batch 2", cols: []backends.Column{col("x", "")}, batchSize: 2},
	{name: "no such column", cols: []backends.Column{col("d", "nope")}},
}

func (s *suite) testScan(t *testing.T) {
	e := s.env(t)
	data := scanData(e.ts)
	name := e.createTable(backends.TableOptions{SplitKeys: [][]byte{[]byte("a"), []byte("r/100"), {0xFF}}})
	var muts []backends.Mutation
	for _, r := range data {
		muts = append(muts, backends.Mutation{Key: r.Key, Cells: r.Cells})
	}
	e.apply(name, muts...)

	// The subtests share the parent's backend and table; only the ones that write make tables.
	sub := func(t *testing.T) *env {
		if !s.opts.Serial {
			t.Parallel()
		}
		return &env{T: t, s: s, b: e.b, ctx: e.ctx, ts: e.ts}
	}
	for _, tc := range scanCases {
		for _, reverse := range []bool{false, true} {
			dir := "forward"
			if reverse {
				dir = "reverse"
			}
			t.Run(tc.name+"/"+dir, func(t *testing.T) {
				e := sub(t)
				opts := backends.ScanOptions{
					ReadOptions: backends.ReadOptions{Columns: tc.cols}, Reverse: reverse, Limit: tc.limit, BatchSize: tc.batchSize,
					FirstBatch: tc.firstBatch,
				}
				got, err := e.scanAll(e.b.Scan(e.ctx, name, tc.r, opts))
				if err != nil {
					t.Fatalf("Scan(%q, %+v): %v", tc.r, opts, err)
				}
				e.wantRows(fmt.Sprintf("Scan([%q, %q), %+v)", tc.r.Start, tc.r.End, opts), got, expectScan(data, tc.r, opts))
			})
		}
	}
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprintf("BreakEarly/reverse=%v", reverse), func(t *testing.T) {
			e := sub(t)
			n := 0
			for _, err := range e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{Reverse: reverse, BatchSize: 2}) {
				if err != nil {
					t.Fatal(err)
				}
				if n++; n == 3 {
					break
				}
			}
			// The backend is still usable: nothing the first scan held is left behind.
			got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{Reverse: reverse}))
			if err != nil || len(got) != len(data) {
				t.Fatalf("scan after an abandoned one: %d rows, %v; want %d", len(got), err, len(data))
			}
		})
		t.Run(fmt.Sprintf("CancelMidScan/reverse=%v", reverse), func(t *testing.T) {
			e := sub(t)
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			n := 0
			var last error
			for _, err := range e.b.Scan(ctx, name, backends.Range{}, backends.ScanOptions{Reverse: reverse, BatchSize: 10}) {
				if last != nil {
					t.Fatalf("scan yielded after its error %v", last)
				}
				if err != nil {
					last = err
					continue
				}
				if n++; n == 5 {
					cancel()
				}
			}
			if !errors.Is(last, context.Canceled) {
				t.Fatalf("scan cancelled after %d rows ended with %v, want context.Canceled", n, last)
			}
		})
	}
	t.Run("BadFamilyNamesTable", func(t *testing.T) {
		// The client adds no name of its own to a store's scan error about the table it named.
		e := sub(t)
		_, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: backends.ReadOptions{Columns: []backends.Column{{Family: "zz"}}}}))
		if !errors.Is(err, backends.ErrInvalidArgument) || !strings.Contains(err.Error(), name) {
			t.Fatalf("scan of family zz: %v, want ErrInvalidArgument naming the table %s", err, name)
		}
	})
	t.Run("CancelledBeforeStart", func(t *testing.T) {
		e := sub(t)
		ctx, cancel := context.WithCancel(e.ctx)
		cancel()
		got, err := e.scanAll(e.b.Scan(ctx, name, backends.Range{}, backends.ScanOptions{}))
		if len(got) != 0 || !errors.Is(err, context.Canceled) {
			t.Fatalf("scan with a cancelled context = %s, %v; want no rows, context.Canceled", fmtKeys(got), err)
		}
	})
	t.Run("SlowConsumerWrites", func(t *testing.T) {
		// A consumer that writes while it scans: a driver that holds a read transaction or lock across
		// yields deadlocks or stalls here.
		e := sub(t)
		out := e.createTable(backends.TableOptions{})
		val := []byte(strings.Repeat("v", 4096))
		n := 0
		for row, err := range e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{BatchSize: 10}) {
			if err != nil {
				t.Fatal(err)
			}
			e.apply(out, backends.Mutation{Key: row.Key, Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: val, Timestamp: e.ts}}})
			n++
		}
		if n != len(data) {
			t.Fatalf("scan with a writing consumer returned %d rows, want %d", n, len(data))
		}
		got, err := e.scanAll(e.b.Scan(e.ctx, out, backends.Range{}, backends.ScanOptions{}))
		if err != nil || len(got) != len(data) {
			t.Fatalf("copied table: %d rows, %v; want %d", len(got), err, len(data))
		}
	})
}
