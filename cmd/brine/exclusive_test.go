package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

// TestCLIExclusive: import --exclusive loads an indexed table at bulk speed and leaves its indexes
// exact and active; index add --exclusive builds a new index and index rebuild --exclusive repairs
// them all, each releasing the fence at its end; --exclusive on a table without indexes, and
// --resume without --exclusive, are refused before anything is written.
func TestCLIExclusive(t *testing.T) {
	c := newCLI(t)
	c.env.clientOptions = []client.Option{client.WithRouteRefresh(20 * time.Millisecond)} // a short fence
	ctx := context.Background()
	orders := c.tab("orders")
	c.ok("create", "--store", c.store, "--table", orders, "--salt", "hash:4", "--key", "no",
		"--index", "by_seller=salt=hash:2|key=c:d:seller", "--index", "by_ext=salt=hash:2|key=c:d:ext|unique")
	var b strings.Builder
	b.WriteString("no,seller,ext,amount\n")
	for i := range 500 {
		fmt.Fprintf(&b, "o%d,s%d,e%d,%d\n", i, i%7, i, i)
	}
	fmt.Fprintf(&b, "dup,s1,e5,0\n") // o5's unique value
	in := c.file("orders.csv", b.String())
	out, _, err := c.run(ctx, "import", "--store", c.store, "--table", orders, "--exclusive", "--batch", "50", in)
	if err == nil || !strings.HasPrefix(out, "read 501, written 500, failed 1,") {
		t.Fatalf("import --exclusive: %v\n%s", err, out)
	}
	verified := func() {
		t.Helper()
		if out := c.ok("index", "verify", "--store", c.store, orders); strings.Count(out, ", 0 missing, 0 stale, 0 extra") != strings.Count(out, "index ") {
			t.Fatalf("index verify:\n%s", out)
		}
	}
	verified()
	if out := c.ok("index", "list", "--store", c.store, orders); strings.Count(out, "\tactive\n") != 2 {
		t.Fatalf("index list after the import:\n%s", out)
	}
	if out := c.ok("index", "add", "--store", c.store, "--exclusive", orders, "--index", "by_amount=salt=hash:2|key=c:d:amount"); !strings.HasPrefix(out, "index by_amount added to "+orders+": 500 rows") {
		t.Fatalf("index add --exclusive: %q", out)
	}
	if out := c.ok("index", "rebuild", "--store", c.store, "--exclusive", orders); strings.Count(out, "rebuilt: 500 rows") != 3 {
		t.Fatalf("index rebuild --exclusive:\n%s", out)
	}
	verified()
	if rows := strings.Fields(c.ok("scan", "--store", c.store, "--table", orders, "--index", "by_amount", "--prefix", "42", "--keys-only")); len(rows) != 1 || rows[0] != "o42" {
		t.Fatalf("scan by the new index: %q", rows)
	}
	plain := c.tab("plain")
	c.ok("create", "--store", c.store, "--table", plain, "--salt", "hash:2", "--key", "no")
	for _, bad := range [][]string{
		{"import", "--store", c.store, "--table", plain, "--exclusive", in},
		{"import", "--store", c.store, "--table", orders, "--resume", in},
		{"index", "add", "--store", c.store, "--exclusive", plain, "--index", "by_x=salt=hash:2|key=c:d:seller"},
	} {
		if _, _, err := c.run(ctx, bad...); err == nil || errors.Is(err, backends.ErrTableNotFound) {
			t.Errorf("%v: %v, want a refusal", bad, err)
		}
	}
	if out := c.ok("scan", "--store", c.store, "--table", plain, "--keys-only"); out != "" {
		t.Fatalf("a refused import wrote: %q", out)
	}
}
