package tablestoretest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

func TestOrdering(t *testing.T) {
	_, c := startServer(t)
	tests := []struct {
		name string
		typ  tablestore.PrimaryKeyType
		vals []any // in the service's order
	}{
		{"integer", tablestore.PrimaryKeyType_INTEGER, []any{int64(-1 << 63), int64(-10), int64(-1), int64(0), int64(2), int64(10), int64(1<<63 - 1)}},
		{"string", tablestore.PrimaryKeyType_STRING, []any{"", "A", "Z", "a", "a\x00", "ab", "b", "é"}},
		{"binary", tablestore.PrimaryKeyType_BINARY, []any{[]byte{}, []byte{0}, []byte{0, 0}, []byte{1}, []byte{0x7f}, []byte{0x80}, []byte{0xff}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			createTable(t, c, "t_"+tc.name, 1, col{"k", tc.typ})
			// Insert in a scrambled order so the tree, not insertion, sorts.
			for j := range tc.vals {
				i := (j * 5) % len(tc.vals)
				putRow(t, c, "t_"+tc.name, pk("k", tc.vals[i]), "v", int64(i))
			}
			var want []string
			for _, v := range tc.vals {
				want = append(want, fmt.Sprint(v))
			}
			got, _ := rangeKeys(t, c, "t_"+tc.name, tablestore.FORWARD, pk("k", tablestore.MinValue), pk("k", tablestore.MaxValue), 0)
			if !slices.Equal(got, want) {
				t.Errorf("forward = %q\nwant      %q", got, want)
			}
			got, _ = rangeKeys(t, c, "t_"+tc.name, tablestore.BACKWARD, pk("k", tablestore.MaxValue), pk("k", tablestore.MinValue), 0)
			slices.Reverse(want)
			if !slices.Equal(got, want) {
				t.Errorf("backward = %q\nwant       %q", got, want)
			}
		})
	}
}

func TestGetRangeBounds(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"a", tablestore.PrimaryKeyType_STRING}, col{"b", tablestore.PrimaryKeyType_INTEGER})
	for _, a := range []string{"A", "B", "C"} {
		for _, b := range []int64{1, 2} {
			putRow(t, c, "t", pk("a", a, "b", b), "v", a)
		}
	}
	min, max := tablestore.MinValue, tablestore.MaxValue
	tests := []struct {
		name       string
		dir        tablestore.Direction
		start, end *tablestore.PrimaryKey
		limit      int32
		want       string
	}{
		{"all", tablestore.FORWARD, pk("a", min, "b", min), pk("a", max, "b", max), 0, "A/1 A/2 B/1 B/2 C/1 C/2"},
		{"start inclusive end exclusive", tablestore.FORWARD, pk("a", "A", "b", int64(2)), pk("a", "C", "b", int64(1)), 0, "A/2 B/1 B/2"},
		{"prefix with INF", tablestore.FORWARD, pk("a", "B", "b", min), pk("a", "B", "b", max), 0, "B/1 B/2"},
		{"after prefix", tablestore.FORWARD, pk("a", "A", "b", max), pk("a", "C", "b", min), 0, "B/1 B/2"},
		{"backward", tablestore.BACKWARD, pk("a", "C", "b", int64(1)), pk("a", "A", "b", int64(1)), 0, "C/1 B/2 B/1 A/2"},
		{"backward INF", tablestore.BACKWARD, pk("a", max, "b", max), pk("a", min, "b", min), 0, "C/2 C/1 B/2 B/1 A/2 A/1"},
		{"limit pages", tablestore.FORWARD, pk("a", min, "b", min), pk("a", max, "b", max), 4, "A/1 A/2 B/1 B/2 C/1 C/2"},
		{"empty", tablestore.FORWARD, pk("a", "AA", "b", min), pk("a", "AB", "b", min), 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := rangeKeys(t, c, "t", tc.dir, tc.start, tc.end, tc.limit)
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}

	resp, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: pk("a", min, "b", min), EndPrimaryKey: pk("a", max, "b", max), MaxVersion: 1, Limit: 2,
		ColumnsToGet: []string{"v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Rows) != 2 || resp.NextStartPrimaryKey == nil || resp.NextStartPrimaryKey.PrimaryKeys[0].Value != "B" {
		t.Errorf("limit 2: %d rows, next %v", len(resp.Rows), resp.NextStartPrimaryKey)
	}

	errs := []struct {
		name       string
		dir        tablestore.Direction
		start, end *tablestore.PrimaryKey
		limit      int32
		message    string
	}{
		{"forward equal", tablestore.FORWARD, pk("a", "A", "b", int64(1)), pk("a", "A", "b", int64(1)), 0, "Begin key must less than end key in FORWARD."},
		{"forward reversed", tablestore.FORWARD, pk("a", "B", "b", min), pk("a", "A", "b", min), 0, "Begin key must less than end key in FORWARD."},
		{"backward reversed", tablestore.BACKWARD, pk("a", "A", "b", min), pk("a", "B", "b", min), 0, "Begin key must more than end key in BACKWARD."},
		{"negative limit", tablestore.FORWARD, pk("a", min, "b", min), pk("a", max, "b", max), -1, "The limit must be greater than 0."},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
				TableName: "t", StartPrimaryKey: tc.start, EndPrimaryKey: tc.end, Direction: tc.dir, MaxVersion: 1, Limit: tc.limit}})
			if oe := wantCode(t, err, "OTSParameterInvalid", 400); oe.Message != tc.message {
				t.Errorf("message = %q, want %q", oe.Message, tc.message)
			}
		})
	}
}

func TestGetRangeFilter(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"k", tablestore.PrimaryKeyType_INTEGER})
	for i := range int64(10) {
		putRow(t, c, "t", pk("k", i), "v", i%3, "w", "x")
	}
	f := tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(0))
	resp, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: pk("k", tablestore.MinValue), EndPrimaryKey: pk("k", tablestore.MaxValue),
		MaxVersion: 1, Filter: f, ColumnsToGet: []string{"w"}}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for _, r := range resp.Rows {
		keys = append(keys, r.PrimaryKey.PrimaryKeys[0].Value.(int64))
		if len(r.Columns) != 1 || r.Columns[0].ColumnName != "w" {
			t.Errorf("columns = %v", r.Columns)
		}
	}
	if !slices.Equal(keys, []int64{0, 3, 6, 9}) {
		t.Errorf("filtered keys = %v", keys)
	}
}

func TestPagination(t *testing.T) {
	tests := []struct {
		name     string
		rows     int
		opts     []tablestoretest.Option
		limit    int32
		minPages int
	}{
		{"small row cap", 53, []tablestoretest.Option{tablestoretest.WithPageCap(7, 0)}, 0, 8},
		{"small byte cap", 40, []tablestoretest.Option{tablestoretest.WithPageCap(0, 200)}, 0, 5},
		{"limit below cap", 30, []tablestoretest.Option{tablestoretest.WithPageCap(7, 0)}, 5, 6},
		{"real cap", 5201, nil, 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := startServer(t, tc.opts...)
			createTable(t, c, "t", 1, col{"k", tablestore.PrimaryKeyType_INTEGER})
			for start := 0; start < tc.rows; start += 200 {
				req := &tablestore.BatchWriteRowRequest{}
				for i := start; i < min(start+200, tc.rows); i++ {
					ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", int64(i))}
					ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
					ch.AddColumn("payload", "0123456789")
					req.AddRowChange(ch)
				}
				if _, err := c.BatchWriteRow(req); err != nil {
					t.Fatal(err)
				}
			}
			srv.ResetStats()
			keys, pages := rangeKeys(t, c, "t", tablestore.FORWARD, pk("k", tablestore.MinValue), pk("k", tablestore.MaxValue), tc.limit)
			if len(keys) != tc.rows {
				t.Fatalf("read %d rows, want %d", len(keys), tc.rows)
			}
			for i, k := range keys {
				if k != fmt.Sprint(i) {
					t.Fatalf("row %d = %s", i, k)
				}
			}
			if pages < tc.minPages {
				t.Errorf("pages = %d, want >= %d", pages, tc.minPages)
			}
			st := srv.Stats()["GetRange"]
			if st.Requests != pages || st.RowsRead != tc.rows {
				t.Errorf("stats = %+v, want %d requests, %d rows", st, pages, tc.rows)
			}
			if tc.name == "real cap" {
				resp, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
					TableName: "t", StartPrimaryKey: pk("k", tablestore.MinValue), EndPrimaryKey: pk("k", tablestore.MaxValue), MaxVersion: 1}})
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Rows) != 5000 || resp.NextStartPrimaryKey.PrimaryKeys[0].Value != int64(5000) {
					t.Errorf("first page: %d rows, next %v", len(resp.Rows), resp.NextStartPrimaryKey)
				}
			}
		})
	}
}
