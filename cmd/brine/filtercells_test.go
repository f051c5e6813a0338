package main

import (
	"slices"
	"strings"
	"testing"
)

// TestScanCellFiltersCLI: --filter's cell pseudo-columns trim what scan prints.
func TestScanCellFiltersCLI(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "orders", "--salt", "hash:4")
	c.ok("put", "--store", c.store, "--table", "orders", "--", "o1", "d:amt=0100", "d:day=2026-01-01", "d:status=paid")
	c.ok("put", "--store", c.store, "--table", "orders", "--", "o2", "d:amt=0200", "d:status=new")
	for _, tc := range []struct {
		filter string
		want   map[string][]string // key -> cells as family:qualifier=value
	}{
		{"status = paid and @qualifier ~ '^(amt|day)$' and @cells > 1", map[string][]string{"o1": {"d:day=2026-01-01"}}},
		{"@cells <= 1", map[string][]string{"o1": {"d:amt=0100"}, "o2": {"d:amt=0200"}}},
	} {
		rows := parseRows(t, c.ok("scan", "--store", c.store, "--table", "orders", "--filter", tc.filter))
		got := map[string][]string{}
		for _, r := range rows {
			got[r.Key] = r.cols()
		}
		if len(got) != len(tc.want) {
			t.Errorf("--filter %q: rows %v, want %v", tc.filter, got, tc.want)
		}
		for k, w := range tc.want {
			if !slices.Equal(got[k], w) {
				t.Errorf("--filter %q: row %s has %v, want %v", tc.filter, k, got[k], w)
			}
		}
	}
	if _, _, err := c.run(t.Context(), "scan", "--store", c.store, "--table", "orders", "--filter", "@cells <= 1 or status = paid"); err == nil ||
		!strings.Contains(err.Error(), "under Or or Not") {
		t.Fatalf("@cells under or: %v", err)
	}
}
