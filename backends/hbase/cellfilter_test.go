package hbase

import (
	"fmt"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// TestServerFilters: which part of a filter with cell leaves the region servers get and which the
// driver trims (cellfilter.go).
func TestServerFilters(t *testing.T) {
	and := func(fs ...backends.Filter) backends.Filter {
		return backends.Filter{Kind: backends.FilterAnd, Subs: fs}
	}
	pred := backends.ValueFilter(backends.Column{Family: "d", Qualifier: "s"}, backends.Equal, []byte("v"))
	qual := backends.QualifierRegexFilter("^a")
	page := backends.CellsPerRowFilter(1, 2)
	tests := []struct {
		name     string
		f        backends.Filter
		versions int
		server   string // %T of the server filter, "" for none
		trim     int
	}{
		{"predicate only", pred, 0, "*filter.SingleColumnValueFilter", 0},
		{"selector alone", qual, 0, "*filter.QualifierFilter", 1},
		{"selectors", and(qual, backends.FamilyRegexFilter("d"), backends.QualifierRangeFilter(nil, false, []byte("b"), true)), 0, "*filter.List", 3},
		{"page alone", page, 1, "*filter.ColumnPaginationFilter", 0},
		{"page of versions", page, 2, "", 1},
		{"page after a selector", and(qual, page), 0, "", 2},
		{"predicate and selector", and(pred, qual), 0, "*filter.SingleColumnValueFilter", 1},
		{"predicate and page", and(pred, page), 0, "*filter.SingleColumnValueFilter", 1},
	}
	for _, tt := range tests {
		if err := driverkit.CheckFilter(&tt.f, nil); err != nil {
			t.Fatalf("%s: Check: %v", tt.name, err)
		}
		server, trim := serverFilters(&tt.f, tt.versions)
		got := ""
		if server != nil {
			got = fmt.Sprintf("%T", server)
			if _, err := server.ConstructPBFilter(); err != nil {
				t.Errorf("%s: ConstructPBFilter: %v", tt.name, err)
			}
		}
		if got != tt.server || len(trim) != tt.trim {
			t.Errorf("%s: server %s, %d trimmed leaves; want %s, %d", tt.name, got, len(trim), tt.server, tt.trim)
		}
	}
}
