package dropin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// rangeCase is a GetRange shape, given FORWARD; the BACKWARD twin swaps the bounds.
type rangeCase struct {
	name       string
	start, end *ots.PrimaryKey
}

func oneColumnCases() []rangeCase {
	return []rangeCase{
		{"full", infMin("pk"), infMax("pk")},
		{"monotonic slice", bin(seq(10)), bin(seq(250))},
		{"from a key", bin(seq(390)), infMax("pk")},
		{"to a key", infMin("pk"), bin([]byte{0x00, 0xFF})},
		{"one user prefix", bin([]byte("u003/")), bin([]byte("u0030"))},
		{"prefix keys", bin([]byte("p")), bin([]byte("pb"))},
		{"binary 0x00", bin([]byte{0x00}), bin([]byte{0x00, 0x00, 0x00})},
		{"binary 0xFF", bin([]byte{0xFF}), infMax("pk")},
		{"a and successors", bin([]byte("a")), bin([]byte("a\xff\x00"))},
		{"empty", bin([]byte("b")), bin([]byte("c"))},
		{"single key", bin(seq(7)), bin(append(seq(7), 0))},
	}
}

// TestGetRangeEqualsUnsalted: for every range shape, direction and limit, paging the drop-in's
// GetRange over a salted table returns the rows, in the order, that the plain SDK returns from an
// unsalted table holding the same logical keys; every page but the last has Limit rows and its
// NextStartPrimaryKey is the next page's first row. The server's page cap (7 rows) makes every bucket
// read follow NextStartPrimaryKey pages, which the drop-in's pages never show.
func TestGetRangeEqualsUnsalted(t *testing.T) {
	e := newEnv(t, tablestoretest.WithPageCap(7, 0))
	e.salted(t, "salted", "hash:16", "")
	e.raw(t, "plain", tablestore.KeyColumn{Name: "pk", Type: tablestore.KeyBinary})
	c := New(e.sdk)
	var pks []*ots.PrimaryKey
	for _, k := range testKeys(400) {
		pks = append(pks, bin(k))
	}
	e.putAll(t, c, "salted", pks)
	e.putAll(t, e.sdk, "plain", pks)

	for _, rc := range oneColumnCases() {
		for _, dir := range []ots.Direction{ots.FORWARD, ots.BACKWARD} {
			start, end := rc.start, rc.end
			if dir == ots.BACKWARD {
				start, end = end, start
			}
			crit := ots.RangeRowQueryCriteria{StartPrimaryKey: start, EndPrimaryKey: end, MaxVersion: 1, Direction: dir}
			ref := crit
			ref.TableName = "plain"
			want, _ := pages(t, e.sdk, ref, false)
			if (len(want) == 0) != (rc.name == "empty") && !(rc.name == "single key" && dir == ots.BACKWARD) {
				t.Fatalf("%s %v: the reference holds %d rows", rc.name, dir, len(want))
			}
			limits := []int32{0, 5, 64, 5000}
			if len(want) <= 40 {
				limits = append(limits, 1) // a page per row: only where that is few calls
			}
			for _, limit := range limits {
				t.Run(fmt.Sprintf("%s/%v/limit=%d", rc.name, dir, limit), func(t *testing.T) {
					q := crit
					q.TableName, q.Limit = "salted", limit
					got, calls := pages(t, c, q, true)
					if d := diffRows(got, want); d != "" {
						t.Fatal(d)
					}
					if limit > 0 {
						// Exactly as many calls as full pages, plus one for the remainder (or for
						// the empty range).
						if wantCalls := max(1, (len(want)+int(limit)-1)/int(limit)); calls != wantCalls {
							t.Fatalf("%d calls for %d rows at limit %d, want %d", calls, len(want), limit, wantCalls)
						}
					}
				})
			}
		}
	}
}

// TestGetRangeDefaultPage: without Limit a response holds WithPageRows rows and a cursor.
func TestGetRangeDefaultPage(t *testing.T) {
	e := newEnv(t, tablestoretest.WithPageCap(50, 0))
	e.salted(t, "s", "hash:4", "")
	c := New(e.sdk, WithPageRows(120))
	var pks []*ots.PrimaryKey
	for i := range 300 {
		pks = append(pks, bin(seq(i)))
	}
	e.putAll(t, c, "s", pks)
	resp, err := c.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &ots.RangeRowQueryCriteria{TableName: "s",
		StartPrimaryKey: infMin("pk"), EndPrimaryKey: infMax("pk"), MaxVersion: 1, Direction: ots.FORWARD}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Rows) != 120 || pkText(resp.NextStartPrimaryKey) != pkText(pks[120]) {
		t.Fatalf("%d rows, next %s; want 120 and %s", len(resp.Rows), pkText(resp.NextStartPrimaryKey), pkText(pks[120]))
	}
	if resp.ConsumedCapacityUnit == nil || resp.ConsumedCapacityUnit.Read <= 0 {
		t.Fatalf("consumed capacity not summed: %+v", resp.ConsumedCapacityUnit)
	}
}

// TestGetRangeMultiColumn: a three-column table salted by its first column, of a fixed width or
// variable, BINARY or STRING; ranges with INF_MIN and INF_MAX in later columns, within one DeviceID
// (one bucket) and across DeviceIDs (every bucket), equal the unsalted table's.
func TestGetRangeMultiColumn(t *testing.T) {
	for _, tt := range []struct {
		spec, key string
		first     tablestore.KeyType
		dev       func(int) any
	}{
		{"hash:8:prefix=6", "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER", tablestore.KeyBinary,
			func(i int) any { return fmt.Appendf(nil, "d%05d", i) }},
		// Variable devices, some prefixes of others ("d1", "d10"), and one holding 0x00.
		{"md5hex:1:sep=0x00", "DeviceID:BINARY,SellerID:STRING,CardID:INTEGER", tablestore.KeyBinary,
			func(i int) any { return fmt.Appendf(nil, "d%d\x00%d", i, i%2) }},
		{"hash:8:digits=1:sep=0x00", "DeviceID:STRING,SellerID:STRING,CardID:INTEGER", tablestore.KeyString,
			func(i int) any { return fmt.Sprintf("d%d", i) }},
	} {
		t.Run(tt.spec, func(t *testing.T) { testGetRangeMultiColumn(t, tt.spec, tt.key, tt.first, tt.dev) })
	}
}

func testGetRangeMultiColumn(t *testing.T, spec, key string, first tablestore.KeyType, dev func(int) any) {
	e := newEnv(t, tablestoretest.WithPageCap(5, 0))
	e.salted(t, "salted", spec, key)
	e.raw(t, "plain", tablestore.KeyColumn{Name: "DeviceID", Type: first},
		tablestore.KeyColumn{Name: "SellerID", Type: tablestore.KeyString}, tablestore.KeyColumn{Name: "CardID", Type: tablestore.KeyInteger})
	c := New(e.sdk)
	pk := func(dev any, seller any, card any) *ots.PrimaryKey {
		k := new(ots.PrimaryKey)
		for _, col := range []struct {
			name string
			v    any
		}{{"DeviceID", dev}, {"SellerID", seller}, {"CardID", card}} {
			switch col.v {
			case "MIN":
				k.AddPrimaryKeyColumnWithMinValue(col.name)
			case "MAX":
				k.AddPrimaryKeyColumnWithMaxValue(col.name)
			default:
				k.AddPrimaryKeyColumn(col.name, col.v)
			}
		}
		return k
	}
	var pks []*ots.PrimaryKey
	for d := range 20 {
		for _, s := range []string{"", "a", "a\x00b", "b", "\u00ff"} {
			for _, card := range []int64{-5, 0, 3, 1 << 40} {
				pks = append(pks, pk(dev(d), s, card))
			}
		}
	}
	e.putAll(t, c, "salted", pks)
	e.putAll(t, e.sdk, "plain", pks)
	cases := []rangeCase{
		{"full", infMin("DeviceID", "SellerID", "CardID"), infMax("DeviceID", "SellerID", "CardID")},
		{"one device", pk(dev(3), "MIN", "MIN"), pk(dev(3), "MAX", "MAX")},
		{"a device that prefixes others", pk(dev(1), "MIN", "MIN"), pk(dev(1), "MAX", "MAX")},
		{"one seller", pk(dev(4), "a", "MIN"), pk(dev(4), "a", "MAX")},
		{"inside a seller", pk(dev(4), "a", int64(0)), pk(dev(4), "b", int64(3))},
		{"devices", pk(dev(1), "b", int64(0)), pk(dev(15), "a", "MAX")}, // d1 < d10 < d15 under every layout
		{"empty", pk(dev(4), "c", "MIN"), pk(dev(4), "d", "MIN")},
	}
	for _, rc := range cases {
		for _, dir := range []ots.Direction{ots.FORWARD, ots.BACKWARD} {
			start, end := rc.start, rc.end
			if dir == ots.BACKWARD {
				start, end = end, start
			}
			crit := ots.RangeRowQueryCriteria{StartPrimaryKey: start, EndPrimaryKey: end, MaxVersion: 1, Direction: dir}
			ref := crit
			ref.TableName = "plain"
			want, _ := pages(t, e.sdk, ref, false)
			if (len(want) == 0) != (rc.name == "empty") {
				t.Fatalf("%s %v: the reference holds %d rows", rc.name, dir, len(want))
			}
			for _, limit := range []int32{0, 3} {
				q := crit
				q.TableName, q.Limit = "salted", limit
				got, _ := pages(t, c, q, true)
				if d := diffRows(got, want); d != "" {
					t.Fatalf("%s %v limit %d: %s", rc.name, dir, limit, d)
				}
			}
		}
	}
	// A range inside one DeviceID reads one bucket only.
	e.srv.ResetStats()
	q := ots.RangeRowQueryCriteria{TableName: "salted", StartPrimaryKey: pk(dev(3), "MIN", "MIN"), EndPrimaryKey: pk(dev(3), "MAX", "MAX"), MaxVersion: 1, Direction: ots.FORWARD}
	if _, err := c.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &q}); err != nil {
		t.Fatal(err)
	}
	if n := e.srv.Stats()["GetRange"].Requests; n > 4 { // 20 rows, 5 per page: one bucket's pages
		t.Fatalf("%d GetRange requests for one device's range, want one bucket's", n)
	}
}

// TestScanStops: Scan yields every row of the range in order; breaking out stops the bucket reads.
func TestScanStops(t *testing.T) {
	e := newEnv(t, tablestoretest.WithPageCap(10, 0))
	e.salted(t, "s", "hash:16", "")
	c := New(e.sdk)
	var pks []*ots.PrimaryKey
	var want []string
	for i := range 500 {
		pks = append(pks, bin(seq(i)))
		want = append(want, pkText(pks[i]))
	}
	e.putAll(t, c, "s", pks)
	crit := &ots.RangeRowQueryCriteria{TableName: "s", StartPrimaryKey: infMin("pk"), EndPrimaryKey: infMax("pk"), MaxVersion: 1, Direction: ots.BACKWARD}
	crit.StartPrimaryKey, crit.EndPrimaryKey = crit.EndPrimaryKey, crit.StartPrimaryKey
	var got []string
	for row, err := range c.Scan(context.Background(), crit) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, pkText(row.PrimaryKey))
	}
	slices.Reverse(want)
	if d := diffRows(got, want); d != "" {
		t.Fatal(d)
	}
	e.srv.ResetStats()
	n := 0
	for _, err := range c.Scan(context.Background(), crit) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 3 {
			break
		}
	}
	// Each of the 16 buckets reads at most its prefetch's worth of pages before the break stops it.
	if r := e.srv.Stats()["GetRange"].Requests; r > 16*4 {
		t.Fatalf("%d GetRange requests for 3 rows", r)
	}
	// A cancelled context ends the scan with its error, after the rows read before it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n = 0
	var last error
	for _, err := range c.Scan(ctx, crit) {
		if err != nil {
			last = err
			continue
		}
		if n++; n == 5 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) || n >= len(pks) {
		t.Fatalf("cancelled scan: %d rows, error %v", n, last)
	}
}

// TestGetRangeCriteriaPassThrough: columns to get, filters and column pagination are applied by the
// service to every bucket as given; with a filter that drops most rows (pages come back short or empty
// with a cursor), the drop-in's pages still equal the unsalted table's rows.
func TestGetRangeCriteriaPassThrough(t *testing.T) {
	e := newEnv(t, tablestoretest.WithPageCap(6, 0))
	e.salted(t, "salted", "hash:8", "")
	e.raw(t, "plain", tablestore.KeyColumn{Name: "pk", Type: tablestore.KeyBinary})
	c := New(e.sdk)
	var pks []*ots.PrimaryKey
	for i := range 200 {
		pks = append(pks, bin(seq(i)))
	}
	e.putAll(t, c, "salted", pks)
	e.putAll(t, e.sdk, "plain", pks)
	filter := ots.NewCompositeColumnCondition(ots.LO_OR)
	filter.AddFilter(ots.NewSingleColumnCondition("n", ots.CT_LESS_THAN, int64(3)))
	filter.AddFilter(ots.NewSingleColumnCondition("n", ots.CT_GREATER_EQUAL, int64(190)))
	for _, tc := range []struct {
		name string
		mod  func(*ots.RangeRowQueryCriteria)
	}{
		{"columns", func(q *ots.RangeRowQueryCriteria) { q.ColumnsToGet = []string{"n"} }},
		{"absent column", func(q *ots.RangeRowQueryCriteria) { q.ColumnsToGet = []string{"zzz"} }},
		{"sparse filter", func(q *ots.RangeRowQueryCriteria) { q.Filter = filter }},
		{"column pagination", func(q *ots.RangeRowQueryCriteria) { q.Filter = &ots.PaginationFilter{Offset: 1, Limit: 1} }},
	} {
		for _, dir := range []ots.Direction{ots.FORWARD, ots.BACKWARD} {
			crit := ots.RangeRowQueryCriteria{StartPrimaryKey: infMin("pk"), EndPrimaryKey: infMax("pk"), MaxVersion: 1, Direction: dir, Limit: 4}
			if dir == ots.BACKWARD {
				crit.StartPrimaryKey, crit.EndPrimaryKey = crit.EndPrimaryKey, crit.StartPrimaryKey
			}
			tc.mod(&crit)
			ref := crit
			ref.TableName = "plain"
			want, _ := pages(t, e.sdk, ref, false)
			crit.TableName = "salted"
			got, _ := pages(t, c, crit, true)
			if d := diffRows(got, want); d != "" {
				t.Fatalf("%s %v: %s", tc.name, dir, d)
			}
		}
	}
}

// TestStringKey: a one-column STRING table under md5hex (a text salt): keys are strings both ways, and
// GetRange equals the unsalted STRING table's.
func TestStringKey(t *testing.T) {
	e := newEnv(t, tablestoretest.WithPageCap(4, 0))
	e.salted(t, "salted", "md5hex:1", "pk:STRING")
	e.raw(t, "plain", tablestore.KeyColumn{Name: "pk", Type: tablestore.KeyString})
	c := New(e.sdk)
	str := func(s string) *ots.PrimaryKey {
		pk := new(ots.PrimaryKey)
		pk.AddPrimaryKeyColumn("pk", s)
		return pk
	}
	var pks []*ots.PrimaryKey
	for i := range 60 {
		pks = append(pks, str(fmt.Sprintf("user%02d/order%03d", i%7, i)))
	}
	pks = append(pks, str("é"), str("z"), str("user"))
	e.putAll(t, c, "salted", pks)
	e.putAll(t, e.sdk, "plain", pks)
	for _, rc := range []rangeCase{
		{"full", infMin("pk"), infMax("pk")},
		{"one user", str("user03/"), str("user030")},
		{"from a key", str("user05/order040"), infMax("pk")},
	} {
		for _, dir := range []ots.Direction{ots.FORWARD, ots.BACKWARD} {
			crit := ots.RangeRowQueryCriteria{StartPrimaryKey: rc.start, EndPrimaryKey: rc.end, MaxVersion: 1, Direction: dir, Limit: 5}
			if dir == ots.BACKWARD {
				crit.StartPrimaryKey, crit.EndPrimaryKey = rc.end, rc.start
			}
			ref := crit
			ref.TableName = "plain"
			want, _ := pages(t, e.sdk, ref, false)
			crit.TableName = "salted"
			got, _ := pages(t, c, crit, true)
			if d := diffRows(got, want); d != "" || len(want) == 0 {
				t.Fatalf("%s %v: %s (%d rows)", rc.name, dir, d, len(want))
			}
		}
	}
	resp, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "salted", PrimaryKey: str("é"), MaxVersion: 1}})
	if err != nil || resp.PrimaryKey.PrimaryKeys[0].Value != "é" {
		t.Fatalf("GetRow: %v %v", resp, err)
	}
}
