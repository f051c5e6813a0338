package main

import (
	"context"
	"strings"
	"testing"
)

// TestCLIIndexPages pages a query by index with --limit: "next page" only while rows follow, "last
// page" on the page that ends the query (also when it is full), the pages together are the rows once
// each, and a cursor pasted into another query (another prefix, another direction) is refused.
func TestCLIIndexPages(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	orders := c.tab("orders")
	c.ok("create", "--store", c.store, "--table", orders, "--salt", "hash:4", "--index", "by_seller=salt=hash:2|key=c:d:seller")
	for _, o := range []string{"o1", "o2", "o3", "o4"} {
		c.ok("put", "--store", c.store, "--table", orders, o, "d:seller=s1")
	}
	c.ok("put", "--store", c.store, "--table", orders, "o5", "d:seller=s2")
	scan := func(extra ...string) (rows []string, next string, last bool) {
		t.Helper()
		args := append([]string{"scan", "--store", c.store, "--table", orders, "--index", "by_seller", "--prefix", "s1", "--limit", "2", "--keys-only"}, extra...)
		out, errOut, err := c.run(ctx, args...)
		if err != nil {
			t.Fatalf("%v: %v", extra, err)
		}
		_, next, _ = strings.Cut(strings.TrimSpace(errOut), "next page: --after ")
		return strings.Fields(out), next, strings.HasSuffix(strings.TrimSpace(errOut), "; last page")
	}
	var seen []string
	rows, next, last := scan()
	seen = append(seen, rows...)
	if next == "" || last {
		t.Fatalf("first page of 2 of 4 rows: next %q, last %v", next, last)
	}
	first := next
	rows, next, last = scan("--after", next)
	seen = append(seen, rows...)
	if next != "" || !last {
		t.Fatalf("second page, the query's end: next %q, last %v", next, last)
	}
	if strings.Join(seen, " ") != "o1 o2 o3 o4" {
		t.Fatalf("pages hold %q, want o1 o2 o3 o4 once each", seen)
	}
	for _, other := range [][]string{
		{"scan", "--store", c.store, "--table", orders, "--index", "by_seller", "--prefix", "s2", "--limit", "2", "--after", first},
		{"scan", "--store", c.store, "--table", orders, "--index", "by_seller", "--prefix", "s1", "--limit", "2", "--reverse", "--after", first},
	} {
		if _, _, err := c.run(ctx, other...); err == nil || !strings.Contains(err.Error(), "another query") {
			t.Errorf("%v: %v, want the cursor refused as another query's", other[len(other)-5:], err)
		}
	}
}
