package main

import (
	"context"
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
	if out := c.ok("index", "list", "--store", c.store, orders); out != "by_seller\t"+spec+"\ttable "+client.IndexTableName(orders, "by_seller")+"\n" {
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
