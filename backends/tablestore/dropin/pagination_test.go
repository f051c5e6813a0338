package dropin

import (
	"fmt"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends/tablestore"
)

// TestGetRowPagination: GetRow and BatchGetRow pass the SDK's ColumnPaginationFilter through (it pages
// over a row's columns, not its key): each row comes back with the same columns as from the
// unsalted table. GetRange's pass-through is in TestGetRangeCriteriaPassThrough.
func TestGetRowPagination(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "salted", "hash:8", "")
	e.raw(t, "plain", tablestore.KeyColumn{Name: "pk", Type: tablestore.KeyBinary})
	c := New(e.sdk)
	var pks []*ots.PrimaryKey
	for i := range 6 {
		pks = append(pks, bin(seq(i)))
	}
	e.putAll(t, c, "salted", pks)
	e.putAll(t, e.sdk, "plain", pks)
	cols := func(r []*ots.AttributeColumn) string {
		s := ""
		for _, c := range r {
			s += fmt.Sprintf("%s=%v ", c.ColumnName, c.Value)
		}
		return s
	}
	for _, page := range []*ots.PaginationFilter{{Offset: 0, Limit: 1}, {Offset: 1, Limit: 1}, {Offset: 2, Limit: 1}} {
		for i, pk := range pks {
			get := func(r interface {
				GetRow(*ots.GetRowRequest) (*ots.GetRowResponse, error)
			}, table string) string {
				resp, err := r.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{
					TableName: table, PrimaryKey: pk, MaxVersion: 1, Filter: page}})
				if err != nil {
					t.Fatalf("GetRow %s: %v", table, err)
				}
				return cols(resp.Columns)
			}
			got, want := get(c, "salted"), get(e.sdk, "plain")
			if got != want || (page.Offset < 2 && got == "") {
				t.Fatalf("GetRow %d, %+v: %q, want %q", i, *page, got, want)
			}
		}
		batch := func(r interface {
			BatchGetRow(*ots.BatchGetRowRequest) (*ots.BatchGetRowResponse, error)
		}, table string) []string {
			crit := &ots.MultiRowQueryCriteria{TableName: table, MaxVersion: 1, Filter: page}
			for _, pk := range pks {
				crit.AddRow(pk)
			}
			req := &ots.BatchGetRowRequest{}
			req.MultiRowQueryCriteria = append(req.MultiRowQueryCriteria, crit)
			resp, err := r.BatchGetRow(req)
			if err != nil {
				t.Fatalf("BatchGetRow %s: %v", table, err)
			}
			var out []string
			for _, rr := range resp.TableToRowsResult[table] {
				out = append(out, cols(rr.Columns))
			}
			return out
		}
		got, want := batch(c, "salted"), batch(e.sdk, "plain")
		if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != len(pks) {
			t.Fatalf("BatchGetRow %+v: %q, want %q", *page, got, want)
		}
	}
}
