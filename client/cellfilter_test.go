package client_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// cellsText writes rows as "key:qualifier" words.
func cellsText(rows ...client.Row) string {
	var out []string
	for _, r := range rows {
		for _, c := range r.Cells {
			out = append(out, fmt.Sprintf("%s:%s", r.Key, c.Qualifier))
		}
	}
	return strings.Join(out, " ")
}

// TestCellFilters: cell filters through a salted table's Scan (with a limit), Get and GetMany, alone
// and with a row-key regex, whose other conjuncts test the row before the trimming.
func TestCellFilters(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	t.Cleanup(func() { c.Close() })
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
	if err != nil {
		t.Fatal(err)
	}
	muts := []client.Mutation{
		{Key: []byte("a1"), Cells: []client.Cell{testkit.Cell("amt", "1"), testkit.Cell("b", "x"), testkit.Cell("status", "paid")}},
		{Key: []byte("a2"), Cells: []client.Cell{testkit.Cell("amt", "2"), testkit.Cell("status", "new")}},
		{Key: []byte("b1"), Cells: []client.Cell{testkit.Cell("b", "y"), testkit.Cell("status", "paid")}},
		{Key: []byte("b2"), Cells: []client.Cell{testkit.Cell("status", "paid")}},
	}
	if errs, err := tbl.Apply(ctx, muts); err != nil || errs != nil {
		t.Fatal(err, errs)
	}
	status := client.ValueFilter(client.Column{Family: "d", Qualifier: "status"}, client.Equal, []byte("paid"))
	tests := []struct {
		name string
		f    client.Filter
		want string
	}{
		{"qualifier regex", client.QualifierRegexFilter("^a"), "a1:amt a2:amt"},
		{"cells per row", client.CellsPerRowFilter(1, 1), "a1:b a2:status b1:status"},
		{"family regex and range", client.AllFilters(client.FamilyRegexFilter("^d$"), client.QualifierRangeFilter([]byte("b"), true, []byte("s"), false)), "a1:b b1:b"},
		{"key regex in the client", client.AllFilters(client.KeyRegexFilter("^b"), client.QualifierRegexFilter("^s")), "b1:status b2:status"},
		{"predicate before trimming, in the client", client.AllFilters(client.AnyFilter(client.KeyRegexFilter("^a2"), status), client.QualifierRegexFilter("^amt$")), "a1:amt a2:amt"},
		{"predicate before trimming, with a limit", client.AllFilters(client.AnyFilter(client.KeyRegexFilter("^zz"), status), client.CellsPerRowFilter(0, 1)), "a1:amt b1:b b2:status"},
	}
	for _, tt := range tests {
		var rows []client.Row
		for row, err := range tbl.Scan(ctx, client.Range{}, client.RowFilter(tt.f)) {
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			rows = append(rows, row)
		}
		if got := cellsText(rows...); got != tt.want {
			t.Errorf("%s: Scan = %q, want %q", tt.name, got, tt.want)
		}
		var lim []client.Row
		for row, err := range tbl.Scan(ctx, client.Range{}, client.RowFilter(tt.f), client.Limit(1)) {
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			lim = append(lim, row)
		}
		if got, want := cellsText(lim...), cellsText(rows[:1]...); got != want {
			t.Errorf("%s: Scan, limit 1 = %q, want %q", tt.name, got, want)
		}
		many, err := tbl.GetMany(ctx, [][]byte{[]byte("a1"), []byte("a2"), []byte("b1"), []byte("b2")}, client.RowFilter(tt.f))
		if err != nil {
			t.Fatalf("%s: GetMany: %v", tt.name, err)
		}
		if got := cellsText(many...); got != tt.want {
			t.Errorf("%s: GetMany = %q, want %q", tt.name, got, tt.want)
		}
		for _, k := range []string{"a1", "b2"} {
			row, err := tbl.Get(ctx, []byte(k), client.RowFilter(tt.f))
			want := ""
			for _, w := range strings.Fields(tt.want) {
				if strings.HasPrefix(w, k+":") {
					want = strings.TrimSpace(want + " " + w)
				}
			}
			if want == "" {
				if !errors.Is(err, client.ErrNotFound) {
					t.Errorf("%s: Get %s = %v, %v; want ErrNotFound", tt.name, k, row, err)
				}
				continue
			}
			if err != nil || cellsText(row) != want {
				t.Errorf("%s: Get %s = %q, %v; want %q", tt.name, k, cellsText(row), err, want)
			}
		}
	}
	for _, f := range []client.Filter{client.NotFilter(client.QualifierRegexFilter("a")), client.AnyFilter(status, client.CellsPerRowFilter(0, 1))} {
		if _, err := tbl.Get(ctx, []byte("a1"), client.RowFilter(f)); !errors.Is(err, client.ErrUnsupported) {
			t.Errorf("Get with a cell filter under Or or Not: %v, want ErrUnsupported", err)
		}
	}
	if _, err := tbl.Get(ctx, []byte("a1"), client.RowFilter(client.CellsPerRowFilter(0, -1))); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("Get with a negative cells-per-row limit: %v, want ErrInvalidArgument", err)
	}
}
