package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/brine-kv/brine/migrate"
)

// TestCLICopyResumeMismatchKeys: a resume refused for another range names the keys as get prints
// them, not encoded; and the interrupt that stopped the copy says what stopped and how to go on.
func TestCLICopyResumeMismatchKeys(t *testing.T) {
	c := newCLI(t)
	c.ok("import", "--store", c.store, "--table", "src", "--create", "--salt", "hash:4", "--key", "id:int64", c.file("in.csv", idRows(5000)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.env.watchCopy = func(p migrate.Progress) {
		if p.Rows >= 500 {
			cancel()
		}
	}
	_, _, err := c.run(ctx, "copy", "--from", c.store, "src", "--as", "dst", "--start", "5", "--workers", "1")
	c.env.watchCopy = nil
	wantExit(t, err, exitInterrupted)
	if msg := err.Error(); strings.HasSuffix(msg, "context canceled") || !strings.Contains(msg, "--resume") {
		t.Errorf("the interrupt's error %q: want what stopped and how to resume, not a bare context canceled", msg)
	}
	_, _, err = c.run(context.Background(), "copy", "--from", c.store, "src", "--as", "dst", "--start", "7", "--resume")
	if !errors.Is(err, migrate.ErrResumeMismatch) {
		t.Fatalf("resume with another --start: %v, want ErrResumeMismatch", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `start="5" `) || !strings.Contains(msg, `start="7" `) || !strings.Contains(msg, "end=(none)") {
		t.Errorf("refusal %q: want start=\"5\" and start=\"7\", the keys as get prints them (quoted, as errors quote keys)", msg)
	}
}

func idRows(n int) string {
	var b strings.Builder
	b.WriteString("id,v\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,v%d\n", i, i)
	}
	return b.String()
}

// TestCLICopyIndexPhases: after its rows, an indexed copy says that it builds and verifies the
// target's indexes, rather than nothing for as long as that takes.
func TestCLICopyIndexPhases(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "t", "--salt", "hash:4", "--key", "id", "--index", "by_h=salt=hash:2|key=c:d:h")
	c.ok("import", "--store", c.store, "--table", "t", "--exclusive", c.file("in.csv", "id,h\na,1\nb,2\nc,3\n"))
	_, stderr, err := c.run(context.Background(), "copy", "--from", c.store, "t", "--as", "u")
	if err != nil {
		t.Fatalf("copy: %v\n%s", err, stderr)
	}
	for _, want := range []string{"copy: 3 rows copied; building the target's indexes", "copy: 3 rows copied; verifying index by_h"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("copy's stderr:\n%s\nwant %q", stderr, want)
		}
	}
}
