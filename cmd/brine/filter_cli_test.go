package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestScanFilterCLI: scan --filter takes package filterexpr's expressions.
func TestScanFilterCLI(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "orders", "--salt", "hash:4")
	for i, st := range []string{"paid", "new", "paid", "shipped", "paid"} {
		c.ok("put", "--store", c.store, "--table", "orders", "--", fmt.Sprintf("o%d", i), "d:status="+st, fmt.Sprintf("d:day=2026-01-0%d", i+1))
	}
	out := c.ok("scan", "--store", c.store, "--table", "orders", "--keys-only", "--filter", "status = paid and day > 2026-01-01")
	if got := strings.Fields(out); strings.Join(got, " ") != "o2 o4" {
		t.Fatalf("filtered scan: %q, want o2 o4", out)
	}
	out = c.ok("scan", "--store", c.store, "--table", "orders", "--keys-only", "--filter", "@key ~ '[0-2]$' and status = paid")
	if got := strings.Fields(out); strings.Join(got, " ") != "o0 o2" {
		t.Fatalf("filtered scan on keys: %q, want o0 o2", out)
	}
	out = c.ok("scan", "--store", c.store, "--table", "orders", "--keys-only", "--limit", "2", "--filter", "not status ~ '^p'")
	if got := strings.Fields(out); strings.Join(got, " ") != "o1 o3" {
		t.Fatalf("filtered scan with a limit: %q, want o1 o3", out)
	}
	if _, _, err := c.run(t.Context(), "scan", "--store", c.store, "--table", "orders", "--filter", "status = "); err == nil ||
		!strings.Contains(err.Error(), "expected a value after status =") {
		t.Fatalf("bad --filter: %v", err)
	}
}
