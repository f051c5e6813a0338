//go:build integration

package integration

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
	"time"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestDropinValueFilters: gohbase's own value and column filters pass through the drop-in to every
// bucket's scanner, and a salted table answers as raw gohbase does on an unsalted one.
func TestDropinValueFilters(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 2*time.Minute)
	sides := bothSides(t, e, "hash:8", scanKeys())
	binEq := func(v string) filter.Comparator {
		return filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte(v)))
	}
	scvf := func(q string, op filter.CompareType, c filter.Comparator, ifMissing bool) filter.Filter {
		return filter.NewSingleColumnValueFilter([]byte(fam), []byte(q), op, c, ifMissing, true)
	}
	cases := []struct {
		name string
		f    filter.Filter
	}{
		{"SingleColumnValueFilter =", scvf("n", filter.Equal, binEq("7"), true)},
		{"SingleColumnValueFilter regex", scvf("q", filter.Equal, filter.NewRegexStringComparator("^v:g[AB]/00[0-4]", 0, "UTF-8", "JAVA"), true)},
		{"ValueFilter !=", filter.NewValueFilter(filter.NewCompareFilter(filter.NotEqual, binEq("2")))},
		{"QualifierFilter", filter.NewQualifierFilter(filter.NewCompareFilter(filter.Equal, binEq("n")))},
		{"FamilyFilter", filter.NewFamilyFilter(filter.NewCompareFilter(filter.Equal, binEq(fam)))},
		{"FilterList OR", filter.NewList(filter.MustPassOne, scvf("n", filter.Equal, binEq("1"), true), scvf("n", filter.Greater, binEq("8"), true))},
		{"FilterList AND", filter.NewList(filter.MustPassAll, scvf("n", filter.Equal, binEq("9"), true),
			filter.NewValueFilter(filter.NewCompareFilter(filter.NotEqual, binEq("x"))))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]row
			for i, s := range sides {
				opts := []func(hrpc.Call) error{hrpc.Filters(tc.f), hrpc.NumberOfRows(50)}
				rows, err := drain(s.c.Scan(must2(hrpc.NewScanStr(ctx, s.table, opts...))))
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				got[i] = rows
			}
			if d := diffRows(got[1], got[0]); d != "" {
				t.Fatalf("drop-in vs raw gohbase: %s", d)
			}
			if len(got[0]) == 0 {
				t.Fatal("the reference returned no row: the case tests nothing")
			}
		})
	}
	for _, key := range []string{"gC/0003", "a"} {
		var got [2]string
		for i, s := range sides {
			res, err := s.c.Get(must2(hrpc.NewGetStr(ctx, s.table, key, hrpc.Filters(scvf("n", filter.Equal, binEq("7"), true)))))
			if err != nil {
				t.Fatalf("Get %s, %s: %v", key, s.name, err)
			}
			got[i] = resultRow(res).String()
		}
		if got[0] != got[1] {
			t.Fatalf("Get %s with a value filter: drop-in %s, raw gohbase %s", key, got[1], got[0])
		}
	}
}

// TestHBaseSelectiveFilter: a filter that passes 1% of the rows runs on the region servers of every
// bucket; the filtered scan returns exactly those rows, also reversed with a limit. What it saves
// against reading every row is measured by `brine bench` (section filter), not here.
func TestHBaseSelectiveFilter(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 2*time.Minute)
	tbl := e.salted(t, "hash:8", 0)
	const n = 10_000
	payload := bytes.Repeat([]byte("x"), 200)
	muts := make([]client.Mutation, n)
	var want []uint64
	for i := range n {
		status := "new"
		if i%100 == 7 {
			status, want = "hot", append(want, uint64(i))
		}
		muts[i] = client.Mutation{Key: binary.BigEndian.AppendUint64(nil, uint64(i)), Cells: []client.Cell{
			{Family: fam, Qualifier: "s", Value: []byte(status)}, {Family: fam, Qualifier: "p", Value: payload},
		}}
	}
	if errs, err := tbl.Apply(ctx, muts); err != nil || errs != nil {
		t.Fatalf("Apply: %v %v", err, errs)
	}
	hot := client.RowFilter(client.ValueFilter(client.Column{Family: fam, Qualifier: "s"}, client.Equal, []byte("hot")))
	scan := func(opts ...client.ReadOption) []uint64 {
		var keys []uint64
		for r, err := range tbl.Scan(ctx, client.Range{}, opts...) {
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, binary.BigEndian.Uint64(r.Key))
		}
		return keys
	}
	if all := scan(); len(all) != n {
		t.Fatalf("full scan: %d rows, want %d", len(all), n)
	}
	if got := scan(hot); !slices.Equal(got, want) {
		t.Fatalf("filtered scan: %d rows, want %d (first %v)", len(got), len(want), got[:min(5, len(got))])
	}
	limited := scan(hot, client.Limit(3), client.Reverse())
	if wantRev := []uint64{want[len(want)-1], want[len(want)-2], want[len(want)-3]}; !slices.Equal(limited, wantRev) {
		t.Fatalf("filtered reverse scan, limit 3: %v, want %v", limited, wantRev)
	}
}
