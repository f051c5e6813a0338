package main

import (
	"strings"
	"testing"
)

// TestScanCellFiltersCLI: --filter's cell pseudo-columns trim what scan prints.
func TestScanCellFiltersCLI(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "orders", "--salt", "hash:4")
	c.ok("put", "--store", c.store, "--table", "orders", "--", "o1", "d:amt=0100", "d:day=2026-01-01", "d:status=paid")
	c.ok("put", "--store", c.store, "--table", "orders", "--", "o2", "d:amt=0200", "d:status=new")
	out := c.ok("scan", "--store", c.store, "--table", "orders", "--filter", "status = paid and @qualifier ~ '^(amt|day)$' and @cells > 1")
	if !strings.Contains(out, "2026-01-01") || strings.Contains(out, "0100") || strings.Contains(out, "paid") || strings.Contains(out, "o2") {
		t.Fatalf("cell-filtered scan:\n%s\nwant o1's d:day only", out)
	}
	out = c.ok("scan", "--store", c.store, "--table", "orders", "--filter", "@cells <= 1")
	if strings.Count(out, "0100")+strings.Count(out, "0200") != 2 || strings.Contains(out, "paid") || strings.Contains(out, "new") {
		t.Fatalf("first cell of each row:\n%s", out)
	}
	if _, _, err := c.run(t.Context(), "scan", "--store", c.store, "--table", "orders", "--filter", "@cells <= 1 or status = paid"); err == nil ||
		!strings.Contains(err.Error(), "under Or or Not") {
		t.Fatalf("@cells under or: %v", err)
	}
}
