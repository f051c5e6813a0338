package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/brine-kv/brine/salting"
)

// TestCLISaltFitsKey: a salt that cannot place the keys of an id:int64 key, or whose table could not
// be scanned, is refused by every command that would make a table with it, before anything is
// written, in an error naming the spec and the key.
func TestCLISaltFitsKey(t *testing.T) {
	c := newCLI(t)
	in := c.file("in.csv", "id,v\n1,a\n2,b\n3,c\n")
	c.ok("import", "--store", c.store, "--table", "src", "--create", "--salt", "hash:4", "--key", "id:int64", in)
	const tables = "src\tsalt hash:4, key id:int64\n"
	for _, spec := range []string{"hash:16:fields=3", "mod:8:field=k1", "mod:8:offset=100,width=8"} {
		for _, args := range [][]string{
			{"create", "--store", c.store, "--table", "t", "--salt", spec, "--key", "id:int64"},
			{"import", "--store", c.store, "--table", "t", "--create", "--salt", spec, "--key", "id:int64", in},
			{"copy", "--from", c.store, "src", "--as", "t", "--salt", spec},
			{"rebucket", "--store", c.store, "src", "--to", spec},
		} {
			t.Run(args[0]+" "+spec, func(t *testing.T) {
				_, _, err := c.run(context.Background(), args...)
				if !errors.Is(err, salting.ErrSchemaMismatch) || !strings.Contains(err.Error(), spec) || !strings.Contains(err.Error(), "id:int64") {
					t.Fatalf("got %v, want a refusal naming %s and id:int64", err, spec)
				}
				if out := c.ok("tables", "--store", c.store); out != tables {
					t.Errorf("tables after the refusal:\n%s", out)
				}
			})
		}
	}
	// reverse has one bucket, in key order only within one leading value: a table copied or
	// rebucketed to it could not be scanned, and so not verified.
	for _, args := range [][]string{
		{"copy", "--from", c.store, "src", "--as", "t", "--salt", "reverse"},
		{"rebucket", "--store", c.store, "src", "--to", "reverse:fields=1"},
	} {
		t.Run(args[0]+" reverse", func(t *testing.T) {
			_, _, err := c.run(context.Background(), args...)
			if !errors.Is(err, salting.ErrUnorderedRange) || !strings.Contains(err.Error(), "cannot be scanned") {
				t.Fatalf("got %v, want a refusal: the table could not be scanned", err)
			}
			if out := c.ok("tables", "--store", c.store); out != tables {
				t.Errorf("tables after the refusal:\n%s", out)
			}
		})
	}
	c.ok("rebucket", "--store", c.store, "src", "--to", "mod:8:field=k0")
}
