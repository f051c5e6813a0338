package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

// TestCLIIndex: create --index keeps an index with the table, describe and index list show it,
// verify finds the entries lost behind brine's back (exit code 3) and rebuild puts them back.
func TestCLIIndex(t *testing.T) { checkCLIIndex(t, newCLI(t)) }

// checkCLIIndex: index list, describe, verify, a loss behind brine's back found by verify and
// repaired by rebuild, and bad command lines, on c's store.
func checkCLIIndex(t *testing.T, c *cli) {
	orders := c.tab("orders")
	c.ok("create", "--store", c.store, "--table", orders, "--salt", "hash:4",
		"--index", "by_seller=salt=hash:2|key=c:d:seller|cover=d:amount")
	for i, seller := range []string{"s1", "s2", "s1"} {
		c.ok("put", "--store", c.store, "--table", orders, "o"+string(rune('0'+i)), "d:seller="+seller, "d:amount=1")
	}
	spec := "salt=hash:2|key=c:d:seller|cover=d:amount"
	if out := c.ok("index", "list", "--store", c.store, orders); out != "by_seller\t"+spec+"\ttable "+client.IndexTableName(orders, "by_seller")+"\tactive\n" {
		t.Fatalf("index list: %q", out)
	}
	if out := c.ok("describe", "--store", c.store, orders); !strings.Contains(out, spec) {
		t.Fatalf("describe shows no index:\n%s", out)
	}
	if out := c.ok("index", "verify", "--store", c.store, orders, "by_seller"); !strings.Contains(out, "3 rows, 3 entries, 0 missing, 0 stale, 0 extra") {
		t.Fatalf("verify: %q", out)
	}

	// Lose every entry behind brine's back.
	ctx := context.Background()
	b, err := openStore(ctx, c.env, c.store, true)
	if err != nil {
		t.Fatal(err)
	}
	var muts []backends.Mutation
	for row, err := range b.Scan(ctx, client.IndexTableName(orders, "by_seller"), backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		muts = append(muts, backends.Mutation{Key: row.Key, Delete: true})
	}
	if _, err := b.Apply(ctx, client.IndexTableName(orders, "by_seller"), muts); err != nil || len(muts) != 3 {
		t.Fatal(err, len(muts))
	}
	b.Close()

	out, _, err := c.run(ctx, "index", "verify", "--store", c.store, orders)
	if exitCode(ctx, err) != 3 || !strings.Contains(out, "3 missing") {
		t.Fatalf("verify after loss: exit %d (%v), %q", exitCode(ctx, err), err, out)
	}
	if out := c.ok("index", "rebuild", "--store", c.store, "--grace", "0", orders); !strings.Contains(out, "index by_seller rebuilt: 3 rows") {
		t.Fatalf("rebuild: %q", out)
	}
	if !strings.Contains(c.stderr.String(), "bucket 2/2") {
		t.Fatalf("rebuild progress: %q", c.stderr.String())
	}
	if out := c.ok("index", "verify", "--store", c.store, orders); !strings.Contains(out, "0 missing, 0 stale, 0 extra") {
		t.Fatalf("verify after rebuild: %q", out)
	}
	for _, bad := range [][]string{
		{"index"}, {"index", "drop", orders}, {"index", "list", "--store", c.store},
		{"index", "verify", "--store", c.store, orders, "nope"},
	} {
		if _, _, err := c.run(ctx, bad...); err == nil {
			t.Errorf("brine %q succeeded", bad)
		}
	}
}

// rowColumns parses a printed row ("KEY  fam:qual=value@ts  ...") into its key and column names.
func rowColumns(line string) (key string, cols []string) {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return "", nil
	}
	for _, f := range fields[1:] {
		col, _, _ := strings.Cut(f, "=")
		cols = append(cols, col)
	}
	return fields[0], cols
}

// TestCLIIndexReads: get and scan of an indexed table print the user's columns only (never the
// version column), and get/scan --index read by an index: typed values (a key field by the key
// schema, a column as text), prefix, range, limit with its cursor, reverse, filter, and covered
// columns.
func TestCLIIndexReads(t *testing.T) {
	c := newCLI(t)
	orders := c.tab("orders")
	c.ok("create", "--store", c.store, "--table", orders, "--salt", "hash:4", "--key", "region,no:int64",
		"--index", "by_seller=salt=hash:2|key=c:d:seller,k1|cover=d:amount",
		"--index", "by_ext=salt=none|key=c:d:ext|unique")
	for i, seller := range []string{"s1", "s2", "s1", "s1"} {
		c.ok("put", "--store", c.store, "--table", orders, fmt.Sprintf("eu,%d", i), "d:seller="+seller, fmt.Sprintf("d:amount=%d", 10*i), fmt.Sprintf("d:ext=e%d", i))
	}
	store := []string{"--store", c.store, "--table", orders}
	lines := func(out string) []string { return strings.Split(strings.TrimSuffix(out, "\n"), "\n") }
	if k, cols := rowColumns(c.ok(append([]string{"get"}, append(store, "eu,2")...)...)); k != "eu,2" || !slices.Equal(cols, []string{"d:amount", "d:ext", "d:seller"}) {
		t.Fatalf("get: key %q columns %q", k, cols)
	}
	for _, line := range lines(c.ok(append([]string{"scan"}, store...)...)) {
		if _, cols := rowColumns(line); !slices.Equal(cols, []string{"d:amount", "d:ext", "d:seller"}) {
			t.Fatalf("scan: columns %q", cols)
		}
	}
	keysOf := func(out string) []string {
		var ks []string
		for _, line := range lines(out) {
			k, _ := rowColumns(line)
			ks = append(ks, k)
		}
		return ks
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--prefix", "s1"}, []string{"eu,0", "eu,2", "eu,3"}},
		{[]string{"--prefix", "s1,2"}, []string{"eu,2"}},
		{[]string{"--prefix", "s1", "--reverse"}, []string{"eu,3", "eu,2", "eu,0"}},
		{[]string{"--start", "s1,2", "--end", "s2"}, []string{"eu,2", "eu,3"}},
		{[]string{"--prefix", "s1", "--filter", "amount = 30"}, []string{"eu,3"}},
		{[]string{"--prefix", "s1", "--limit", "2"}, []string{"eu,0", "eu,2"}},
	} {
		out := c.ok(append(append([]string{"scan"}, store...), append([]string{"--index", "by_seller", "--keys-only"}, tc.args...)...)...)
		if got := keysOf(out); !slices.Equal(got, tc.want) {
			t.Errorf("scan --index by_seller %q: %q, want %q", tc.args, got, tc.want)
		}
	}
	// The cursor the limited page printed resumes after its last row.
	c.stderr.Reset()
	c.ok(append(append([]string{"scan"}, store...), "--index", "by_seller", "--keys-only", "--prefix", "s1", "--limit", "2")...)
	_, cursor, ok := strings.Cut(strings.TrimSpace(c.stderr.String()), "next page: --after ")
	if !ok {
		t.Fatalf("no cursor in %q", c.stderr.String())
	}
	if got := keysOf(c.ok(append(append([]string{"scan"}, store...), "--index", "by_seller", "--keys-only", "--prefix", "s1", "--after", cursor)...)); !slices.Equal(got, []string{"eu,3"}) {
		t.Errorf("next page: %q", got)
	}
	out := c.ok(append(append([]string{"scan"}, store...), "--index", "by_seller", "--prefix", "s2", "--columns", "d:amount")...)
	if k, cols := rowColumns(out); k != "eu,1" || !slices.Equal(cols, []string{"d:amount"}) {
		t.Errorf("covered scan: key %q columns %q", k, cols)
	}
	if k, cols := rowColumns(c.ok(append(append([]string{"get"}, store...), "--index", "by_ext", "e3")...)); k != "eu,3" || len(cols) != 3 {
		t.Errorf("get --index by_ext e3: key %q columns %q", k, cols)
	}
	ctx := context.Background()
	for _, bad := range [][]string{
		{"get", "--index", "by_seller", "s1"},                // not unique
		{"get", "--index", "by_ext", "nope"},                 // no such row
		{"scan", "--index", "nope"},                          // no such index
		{"scan", "--index", "by_seller", "--prefix", "s1,x"}, // not an int64
		{"scan", "--index", "by_seller", "--after", "zz"},    // not hex
	} {
		if _, _, err := c.run(ctx, append(append([]string{bad[0]}, store...), bad[1:]...)...); err == nil {
			t.Errorf("brine %q succeeded", bad)
		}
	}
}
