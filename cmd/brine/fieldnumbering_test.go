package main

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
)

// TestCLILegacyFieldSpelling: every flag that takes a salting spec refuses mod's earlier field=K
// (K counted from 1) with the spec to write instead; the current field=kF is taken.
func TestCLILegacyFieldSpelling(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "src", "--salt", "hash:4", "--key", "host,ts:int64")
	in := c.file("in.csv", "host,ts\nweb1,1700000000123\n")
	const hint = `salting: invalid spec: "mod:8:field=2": field=2 counts fields from 1, brine's old spelling; write mod:8:field=k1: fields count from 0 (k0 is the first)`
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--store", c.store, "--table", "t", "--salt", "mod:8:field=2", "--key", "host,ts:int64"}, hint},
		{[]string{"import", "--store", c.store, "--table", "t", "--create", "--salt", "mod:8:field=2", "--key", "host,ts:int64", in}, hint},
		{[]string{"copy", "--from", c.store, "src", "--as", "t", "--salt", "mod:8:field=2"}, "--salt: " + hint},
		{[]string{"rebucket", "--store", c.store, "src", "--to", "mod:8:field=2"}, "--to: " + hint},
		{[]string{"create", "--store", c.store, "--table", "t", "--salt", "hash:4", "--key", "host,ts:int64", "--index", "by_ts=salt=mod:8:field=2|key=k1"},
			`invalid value "by_ts=salt=mod:8:field=2|key=k1" for flag -index: brine: invalid argument: index "by_ts" spec "salt=mod:8:field=2|key=k1": ` + hint},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			_, _, err := c.run(context.Background(), tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("brine %q: %v\nwant: %s", tc.args, err, tc.want)
			}
			if out := c.ok("tables", "--store", c.store); out != "src\tsalt hash:4, key host,ts:int64\n" {
				t.Errorf("tables after the refusal:\n%s", out)
			}
		})
	}
	c.ok("create", "--store", c.store, "--table", "t", "--salt", "mod:8:field=k1", "--key", "host,ts:int64")
	if out := c.ok("describe", "--store", c.store, "t"); !containsLine(out, "salt    mod:8:field=k1 (8 buckets)") {
		t.Errorf("describe:\n%s", out)
	}
}

// TestCLILegacyStoredSpec: a table an earlier brine created with --salt mod:8:field=2 --key
// host,ts:int64 is listed and described in the current spelling (describe names the stored one), the
// row that brine wrote under bucket ts % 8 is found, and its meta is left as it was.
func TestCLILegacyStoredSpec(t *testing.T) {
	ctx := context.Background()
	c := newCLI(t)
	path := filepath.Join(c.dir, "db")
	b, err := local.Open(context.Background(), local.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	ks, _ := keys.ParseSchema("host,ts:int64")
	k, _ := ks.Encode("web1", int64(1700000000123)) // bucket 1700000000123 % 8 = 3
	err = b.CreateTable(ctx, "old", backends.TableOptions{Families: []string{client.DefaultFamily},
		Meta: map[string]string{client.MetaSaltSpec: "mod:8:field=2", client.MetaKeySchema: "host,ts:int64"}})
	if err == nil {
		var rowErrs []error
		rowErrs, err = b.Apply(ctx, "old", []backends.Mutation{{Key: append([]byte{3}, k...),
			Cells: []backends.Cell{{Family: client.DefaultFamily, Qualifier: "v", Value: []byte("x"), Timestamp: 1000}}}})
		err = errors.Join(append(rowErrs, err)...)
	}
	if err := errors.Join(err, b.Close()); err != nil {
		t.Fatal(err)
	}

	if out := c.ok("tables", "--store", c.store); out != "old\tsalt mod:8:field=k1, key host,ts:int64\n" {
		t.Errorf("tables:\n%s", out)
	}
	if out := c.ok("describe", "--store", c.store, "old"); !containsLine(out, "salt    mod:8:field=k1 (8 buckets; stored as mod:8:field=2, brine's old spelling)") {
		t.Errorf("describe:\n%s", out)
	}
	if got := untimed(parseRows(t, c.ok("get", "--store", c.store, "--table", "old", "web1,1700000000123"))); got != "web1,1700000000123  d:v=x\n" {
		t.Errorf("get of the row the earlier brine wrote: %q", got)
	}
	c.ok("put", "--store", c.store, "--table", "old", "--salt", "mod:8:field=k1", "web2,1700000000125", "d:v=y")
	if got := untimed(parseRows(t, c.ok("scan", "--store", c.store, "--table", "old"))); got != "web1,1700000000123  d:v=x\nweb2,1700000000125  d:v=y\n" {
		t.Errorf("scan: %q", got)
	}

	b, err = local.Open(context.Background(), local.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	meta, err := b.TableMeta(ctx, "old")
	if err != nil || meta[client.MetaSaltSpec] != "mod:8:field=2" {
		t.Errorf("stored spec %q, %v; want it left as mod:8:field=2", meta[client.MetaSaltSpec], err)
	}
	k2, _ := ks.Encode("web2", int64(1700000000125)) // bucket 5
	rows, err := b.Read(ctx, "old", [][]byte{append([]byte{5}, k2...)}, backends.ReadOptions{})
	if err != nil || len(rows) != 1 || len(rows[0].Cells) != 1 {
		t.Errorf("the row put now is not under bucket 5, as the earlier brine would have put it: %v, %v", rows, err)
	}
}

// containsLine reports whether out has line as one of its lines.
func containsLine(out, line string) bool {
	return slices.Contains(strings.Split(out, "\n"), line)
}
