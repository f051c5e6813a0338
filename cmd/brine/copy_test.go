package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/migrate"
)

// TestCLICopy copies a table from the embedded store to the Tablestore server (the SDK over HTTP),
// re-salted, checks it with verify, then copies a row written since as a catch-up pass.
func TestCLICopy(t *testing.T) {
	c := newCLI(t)
	from := c.store
	c.useTablestore(t)
	in := c.file("in.csv", csvRows(500, 500))
	c.ok("import", "--store", from, "--table", "src", "--create", "--salt", "hash:4", "--key", typedKey, in)
	dst := c.tab("dst")
	c.ok("copy", "--from", from, "--to", c.store, "src", "--as", dst, "--salt", "hash:8", "--versions", "all")
	c.ok("verify", "--from", from, "--to", c.store, "src", "--as", dst, "--versions", "all")
	if out := c.ok("describe", "--store", c.store, dst); !slices.Contains(strings.Split(out, "\n"), "salt    hash:8 (8 buckets)") {
		t.Errorf("describe of the copy:\n%s\nwant salt hash:8", out)
	}

	c.ok("put", "--store", from, "--table", "src", "h0,1767225600000", "d:v=late")
	if _, _, err := c.run(context.Background(), "verify", "--from", from, "--to", c.store, "src", "--as", dst); err == nil {
		t.Fatal("verify after a write to the source: equal, want a difference")
	}
	c.ok("copy", "--from", from, "--to", c.store, "src", "--as", dst, "--since", "2000-01-01")
	c.ok("verify", "--from", from, "--to", c.store, "src", "--as", dst)
}

func TestCLICopyBadInput(t *testing.T) {
	c := newCLI(t)
	c.ok("import", "--store", c.store, "--table", "src", "--create", "--salt", "hash:4", "--key", typedKey, c.file("in.csv", csvRows(10, 10)))
	for _, tc := range []struct {
		name string
		args []string
		want error
	}{
		{"onto itself", []string{"copy", "--from", c.store, "src"}, migrate.ErrSameTable},
		{"onto itself by --as", []string{"copy", "--from", c.store, "--to", c.store, "src", "--as", "src"}, migrate.ErrSameTable},
		{"bad --since", []string{"copy", "--from", c.store, "src", "--as", "b", "--since", "yesterday"}, nil},
		{"bad --versions", []string{"copy", "--from", c.store, "src", "--as", "b", "--versions", "some"}, nil},
		{"resume with nothing to resume", []string{"copy", "--from", c.store, "src", "--as", "b", "--resume"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.run(context.Background(), tc.args...)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("got %v, want an error (%v)", err, tc.want)
			}
			if out := c.ok("tables", "--store", c.store); out != "src\tsalt hash:4, key "+typedKey+"\n" {
				t.Errorf("tables after the refused copy:\n%s", out)
			}
		})
	}
}

// TestCLICopyTargetRefuses: a family the Tablestore target cannot hold (its column names take no
// '-') fails the copy before anything is written: no table, no checkpoint, on the target.
func TestCLICopyTargetRefuses(t *testing.T) {
	c := newCLI(t)
	from := c.store
	c.useTablestore(t)
	c.ok("create", "--store", from, "--table", "src", "--salt", "hash:2", "--families", "d,x-y")
	c.ok("put", "--store", from, "--table", "src", "k1", "x-y:v=1")
	_, _, err := c.run(context.Background(), "copy", "--from", from, "--to", c.store, "src")
	if !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("copy of a family Tablestore cannot hold: %v, want ErrInvalidArgument", err)
	}
	if out := c.ok("tables", "--store", c.store); out != "" {
		t.Errorf("tables on the target after the refused copy:\n%s", out)
	}
}
