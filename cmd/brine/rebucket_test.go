package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCLIRebucketResume: a rebucket killed during its first step is refused without --resume, then
// finished with it; the table keeps its rows under the new spec.
func TestCLIRebucketResume(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "t", "--salt", "hash:4")
	for i := range 20 {
		c.ok("put", "--store", c.store, "--table", "t", fmt.Sprintf("k%02d", i), "d:v="+fmt.Sprint(i))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, errOut, err := c.run(ctx, "rebucket", "--store", c.store, "t", "--to", "hash:8", "--fence", "10s")
	if err == nil || !strings.Contains(err.Error(), "--resume") || !strings.Contains(errOut, "pause") {
		t.Fatalf("killed rebucket: %v\n%s", err, errOut)
	}
	if _, _, err := c.run(context.Background(), "rebucket", "--store", c.store, "t", "--to", "hash:8"); err == nil || !strings.Contains(err.Error(), "pass --resume") {
		t.Fatalf("second start without --resume: %v", err)
	}
	if _, _, err := c.run(context.Background(), "rebucket", "--store", c.store, "t", "--resume", "--to", "hash:2", "--fence", "10ms"); err == nil || !strings.Contains(err.Error(), "another rebucket") {
		t.Fatalf("resume to another spec: %v", err)
	}
	out, errOut, err := c.run(context.Background(), "rebucket", "--store", c.store, "t", "--resume", "--fence", "10ms")
	if err != nil || out != "t\tsalt hash:8\n" || !strings.Contains(errOut, "8/8 buckets copied") && !strings.Contains(errOut, "4/4 buckets copied") {
		t.Fatalf("resume: %v\nstdout %q\nstderr %s", err, out, errOut)
	}
	if got := strings.Count(c.ok("scan", "--store", c.store, "--table", "t"), "\n"); got != 20 {
		t.Errorf("scan after the rebucket: %d rows, want 20", got)
	}
	if out := c.ok("describe", "--store", c.store, "t"); !strings.Contains(out, "hash:8") {
		t.Errorf("describe after the rebucket:\n%s", out)
	}
	if _, _, err := c.run(context.Background(), "rebucket", "--store", c.store, "t", "--resume"); err == nil || !strings.Contains(err.Error(), "no rebucket") {
		t.Errorf("--resume with nothing under way: %v", err)
	}
}
