package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
)

// TestCLITableWithoutSpec: a table brine did not create is described as such, refused by get and put
// without --salt (brine does not guess its salt), and read and written with the --salt given.
func TestCLITableWithoutSpec(t *testing.T) {
	c := newCLI(t)
	b, err := local.Open(context.Background(), local.Config{Path: filepath.Join(c.dir, "db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.CreateTable(context.Background(), "plain", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if out := c.ok("describe", "--store", c.store, "plain"); !strings.Contains(out, "salt    none stored") {
		t.Errorf("describe:\n%s", out)
	}
	for _, args := range [][]string{{"put", "k1", "d:v=x"}, {"get", "k1"}} {
		_, _, err := c.run(context.Background(), append(args, "--store", c.store, "--table", "plain")...)
		if !errors.Is(err, client.ErrNoSpec) || !strings.Contains(err.Error(), "--salt") {
			t.Errorf("%s without --salt: %v, want ErrNoSpec naming --salt", args[0], err)
		}
	}
	c.ok("put", "--store", c.store, "--table", "plain", "--salt", "none", "k1", "d:v=x")
	if out := c.ok("get", "--store", c.store, "--table", "plain", "--salt", "none", "k1"); untimed(parseRows(t, out)) != "k1  d:v=x\n" {
		t.Errorf("get --salt none: %q", out)
	}
}
