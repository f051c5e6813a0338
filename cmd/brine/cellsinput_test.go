package main

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestCLIScanCellsImportsBack: rows whose cells have different timestamps and families, which csv
// and jsonl cannot hold, scan out as --format cells and import back
// into another table equal, timestamps and all.
func TestCLIScanCellsImportsBack(t *testing.T) {
	c := newCLI(t)
	for _, tb := range []string{"a", "b"} {
		c.ok("create", "--store", c.store, "--table", tb, "--salt", "hash:4", "--key", "id:int64", "--families", "d,m")
	}
	c.ok("put", "--store", c.store, "--table", "a", "--ts", "1000", "1", "d:x=one")
	c.ok("put", "--store", c.store, "--table", "a", "--ts", "2000", "1", "m:y=two")
	c.ok("put", "--store", c.store, "--table", "a", "--ts", "3000", "2", "d:x=three")
	out := c.ok("scan", "--store", c.store, "--table", "a", "--format", "cells")
	if n := strings.Count(out, "\n"); n != 2 {
		t.Fatalf("scan --format cells: %d lines, want 2:\n%s", n, out)
	}
	c.ok("import", "--store", c.store, "--table", "b", "--format", "cells", c.file("a.cells", out))
	c.ok("verify", "--from", c.store, "a", "--as", "b", "--versions", "all")
	if got := c.ok("scan", "--store", c.store, "--table", "b", "--format", "cells"); got != out {
		t.Errorf("b scanned:\n%s\nwant a's:\n%s", got, out)
	}

	for _, tc := range []struct{ line, want string }{
		{`{"key":"1","cells":[{"family":"d","qualifier":"x","ts":1,"value":"eA=="}]}`, `no "raw" key bytes`},
		{`{"key":"1","raw":"aYAAAAAAAAAB","cells":[]}`, "no cells"},
		{`{"raw":"aYAAAAAAAAAB","cells":[{"family":"d","qualifier":"x","value":"eA=="}]}`, "positive milliseconds"},
		{`{"raw":"aYAAAAAAAAAB","rows":[]}`, "not a line of scan --format cells"},
	} {
		in := c.file("bad.cells", tc.line+"\n")
		_, _, err := c.run(context.Background(), "import", "--store", c.store, "--table", "b", "--format", "cells", in)
		errs, rerr := os.ReadFile(in + ".failed.cells.errors")
		if err == nil || rerr != nil || !strings.Contains(string(errs), tc.want) {
			t.Errorf("import of %s: %v, errors %q; want a failed row saying %q", tc.line, err, errs, tc.want)
		}
	}
	if _, _, err := c.run(context.Background(), "import", "--store", c.store, "--table", "b", "--format", "cells", "--ts-column", "t", c.file("a.cells", out)); err == nil {
		t.Error("--format cells with --ts-column: accepted")
	}
}
