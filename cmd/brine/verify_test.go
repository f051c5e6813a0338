package main

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestCLIVerify: verify finds one changed cell, one changed timestamp, a missing row and an extra row
// between a table and its copy on another store with another salting, prints each key as get does,
// and exits 3; equal tables exit 0. Run from the embedded store to itself and to the Tablestore server.
func TestCLIVerify(t *testing.T) {
	t.Run("local to local", func(t *testing.T) {
		c := newCLI(t)
		checkCLIVerify(t, c, c.store)
	})
	t.Run("local to tablestore", func(t *testing.T) {
		c := newCLI(t)
		local := c.store
		c.useTablestore(t)
		checkCLIVerify(t, c, local)
	})
}

// checkCLIVerify loads a table on from, copies it to c.store with scan --format and import, and
// compares them as they diverge.
func checkCLIVerify(t *testing.T, c *cli, from string) {
	ctx := context.Background()
	in := c.file("in.csv", csvRows(300, 300))
	src := "src"
	args := func(s ...string) []string { return append([]string{"--store", from}, s...) }
	c.ok(append([]string{"import"}, args("--table", src, "--create", "--salt", "hash:4", "--key", typedKey, in)...)...)
	dump := c.file("dump.jsonl", c.ok(append([]string{"scan"}, args("--table", src, "--format", "jsonl")...)...))
	dst := c.tab("dst")
	c.ok("import", "--store", c.store, "--table", dst, "--create", "--salt", "hash:8", "--key", typedKey, "--ts-column", "_ts", dump)
	verify := func() (lines []string, err error) {
		out, _, err := c.run(ctx, "verify", "--from", from, "--to", c.store, src, "--as", dst, "--chunk", "16")
		return strings.Split(strings.TrimSpace(out), "\n"), err
	}
	if lines, err := verify(); err != nil {
		t.Fatalf("equal tables: %v, %q", err, lines)
	}
	// The keys of csvRows(300, 300): h(i%7),1767225600000+i.
	c.ok("put", "--store", c.store, "--table", dst, "h1,1767225600008", "d:v=changed")
	c.ok("put", "--store", c.store, "--table", dst, "h2,1767225600009", "d:v=value 9") // its value again, a new timestamp
	c.ok("delete", "--store", c.store, "--table", dst, "h3,1767225600010")
	c.ok("put", "--store", c.store, "--table", dst, "h9,1", "d:v=extra")
	lines, err := verify()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 3 {
		t.Fatalf("diverged tables: %v, want exit 3", err)
	}
	var got []string
	for _, l := range lines {
		kind, rest, _ := strings.Cut(l, ": ")
		key, _, _ := strings.Cut(rest, " ")
		got = append(got, kind+" "+key)
	}
	want := []string{"changed h1,1767225600008", "changed h2,1767225600009", "only in --from h3,1767225600010", "only in --to h9,1"}
	if !slices.Equal(got, want) {
		t.Fatalf("differences:\n%s\nwant %q", strings.Join(lines, "\n"), want)
	}
}

// TestCLIVerifyNamesCells: a changed row's line names the cells that differ, and only those: a
// column deleted from the source is the one cell only in --to; a changed value is named on both
// sides.
func TestCLIVerifyNamesCells(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "src", "--salt", "hash:2")
	c.ok("put", "--store", c.store, "--table", "src", "--ts", "1000", "k1", "d:a=1", "d:b=2", "d:c=3")
	c.ok("put", "--store", c.store, "--table", "src", "--ts", "1000", "k2", "d:a=1", "d:b=2", "d:c=3", "d:e=5", "d:f=6")
	c.ok("copy", "--from", c.store, "src", "--as", "dst")
	c.ok("delete", "--store", c.store, "--table", "src", "k1", "d:b")
	c.ok("put", "--store", c.store, "--table", "src", "--ts", "2000", "k2", "d:a=9", "d:c=9", "d:e=9", "d:f=9")
	out, _, err := c.run(context.Background(), "verify", "--from", c.store, "src", "--as", "dst")
	wantExit(t, err, 3)
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		kind, rest, _ := strings.Cut(l, ": ")
		key, cells, _ := strings.Cut(rest, " ")
		got[kind+" "+key] = strings.TrimSuffix(strings.TrimPrefix(cells, "("), ")")
	}
	want := map[string]string{
		"changed k1": "d:b=2@1000 only in --to",
		"changed k2": "d:a=9@2000 in --from, d:a=1@1000 in --to; d:c=9@2000 in --from, d:c=3@1000 in --to; " +
			"d:e=9@2000 in --from, d:e=5@1000 in --to; and 1 more column",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("verify:\n%s\nwant %q", out, want)
	}
}
