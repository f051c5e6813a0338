package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

// TestCLIIndexAdd: index add gives a table in use an index (its first only with --no-plain-writers),
// which list shows, verify finds clean and get --index reads; index drop removes it and its table.
func TestCLIIndexAdd(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	orders := c.tab("orders")
	c.ok("create", "--store", c.store, "--table", orders, "--salt", "hash:4")
	for i, seller := range []string{"s1", "s2", "s1"} {
		c.ok("put", "--store", c.store, "--table", orders, "o"+string(rune('0'+i)), "d:seller="+seller, "d:amount=1")
	}
	spec := "salt=hash:2|key=c:d:seller|cover=d:amount"
	add := []string{"index", "add", "--store", c.store, "--fence", "1ms", orders, "--index", "by_seller=" + spec}
	if _, _, err := c.run(ctx, add...); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("first index without --no-plain-writers: %v, want ErrInvalidArgument", err)
	} else if msg := err.Error(); !strings.Contains(msg, "--no-plain-writers") || strings.Contains(msg, "NoPlainWriters") {
		t.Fatalf("first index without --no-plain-writers: %q names the Go option, not the flag", msg)
	}
	if out := c.ok(append(add, "--no-plain-writers")...); !strings.HasPrefix(out, "index by_seller added to "+orders+": 3 rows, ") {
		t.Fatalf("index add: %q", out)
	}
	if out := c.ok("index", "list", "--store", c.store, orders); out != "by_seller\t"+spec+"\ttable "+client.IndexTableName(orders, "by_seller")+"\tactive\n" {
		t.Fatalf("index list: %q", out)
	}
	if out := c.ok("index", "verify", "--store", c.store, orders); !strings.Contains(out, "3 rows, 3 entries, 0 missing, 0 stale, 0 extra") {
		t.Fatalf("verify: %q", out)
	}
	lines := strings.Split(strings.TrimSpace(c.ok("scan", "--store", c.store, "--table", orders, "--index", "by_seller", "--prefix", "s1")), "\n")
	if len(lines) != 2 {
		t.Fatalf("scan --index by_seller --prefix s1: %q", lines)
	}
	if out := c.ok("index", "drop", "--store", c.store, "--fence", "1ms", orders, "by_seller"); out != "index by_seller dropped from "+orders+"\n" {
		t.Fatalf("index drop: %q", out)
	}
	if out := c.ok("index", "list", "--store", c.store, orders); out != "table "+orders+" has no indexes\n" {
		t.Fatalf("index list after drop: %q", out)
	}
	if _, _, err := c.run(ctx, "index", "drop", "--store", c.store, orders, "by_seller"); !errors.Is(err, client.ErrIndexNotFound) {
		t.Fatalf("second drop: %v, want ErrIndexNotFound", err)
	}
	for _, bad := range [][]string{
		{"index", "add", "--store", c.store, orders}, {"index", "add", "--store", c.store, orders, "extra", "--index", "a=" + spec},
		{"index", "drop", "--store", c.store, orders},
	} {
		if _, _, err := c.run(ctx, bad...); err == nil {
			t.Errorf("brine %q succeeded", bad)
		}
	}
}

// TestCLIIndexListState: an index whose build failed stays building, and index list says so (queries
// by it are refused until it is active); dropping it leaves the table without indexes.
func TestCLIIndexListState(t *testing.T) {
	c := newCLI(t)
	ctx := context.Background()
	orders := c.tab("orders")
	c.ok("create", "--store", c.store, "--table", orders, "--salt", "hash:2")
	for i, seller := range []string{"s1", "s1"} {
		c.ok("put", "--store", c.store, "--table", orders, "o"+string(rune('0'+i)), "d:seller="+seller)
	}
	spec := "salt=hash:2|key=c:d:seller|unique"
	add := []string{"index", "add", "--store", c.store, "--fence", "1ms", "--no-plain-writers", orders, "--index", "by_seller=" + spec}
	if _, _, err := c.run(ctx, add...); !errors.Is(err, client.ErrUniqueViolation) {
		t.Fatalf("unique index over a shared value: %v, want ErrUniqueViolation", err)
	}
	fields := strings.Split(strings.TrimSuffix(c.ok("index", "list", "--store", c.store, orders), "\n"), "\t")
	if len(fields) != 4 || fields[0] != "by_seller" || fields[1] != spec || fields[3] != string(client.IndexBuilding) {
		t.Fatalf("index list after a failed build: %q, want by_seller, %s, its table, %s", fields, spec, client.IndexBuilding)
	}
	if _, _, err := c.run(ctx, "get", "--store", c.store, "--table", orders, "--index", "by_seller", "s1"); !errors.Is(err, client.ErrIndexBuilding) {
		t.Fatalf("get --index on a building index: %v, want ErrIndexBuilding", err)
	}
	c.ok("index", "drop", "--store", c.store, "--fence", "1ms", orders, "by_seller")
	if out := c.ok("index", "list", "--store", c.store, orders); out != "table "+orders+" has no indexes\n" {
		t.Fatalf("index list after drop: %q", out)
	}
}
