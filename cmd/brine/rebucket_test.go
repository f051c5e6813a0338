package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
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

// TestCLIRebucketIndexed: rebucket moves a table with indexes and, named TABLE__ix_INDEX, one index's
// table; the index verifies clean and answers by index after each. A rebucket refused before it
// starts prints no --resume hint.
func TestCLIRebucketIndexed(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "orders", "--salt", "hash:4",
		"--index", "by_seller=salt=hash:2|key=c:d:seller|cover=d:amount")
	for i, seller := range []string{"s1", "s2", "s1", "s3"} {
		c.ok("put", "--store", c.store, "--table", "orders", fmt.Sprint("o", i), "d:seller="+seller, "d:amount=1")
	}
	ctx := context.Background()
	_, _, err := c.run(ctx, "rebucket", "--store", c.store, "orders", "--to", "hash:8", "--families", "x", "--fence", "10ms")
	if err == nil || !strings.Contains(err.Error(), `lack "d"`) || strings.Contains(err.Error(), "--resume") {
		t.Fatalf("rebucket without the indexed family: %v", err)
	}
	ixTable := client.IndexTableName("orders", "by_seller")
	for _, tc := range []struct{ table, to string }{{"orders", "hash:8"}, {ixTable, "hash:3"}} {
		if out := c.ok("rebucket", "--store", c.store, tc.table, "--to", tc.to, "--fence", "10ms"); out != tc.table+"\tsalt "+tc.to+"\n" {
			t.Fatalf("rebucket %s: %q", tc.table, out)
		}
		if out := c.ok("index", "verify", "--store", c.store, "orders", "by_seller"); !strings.Contains(out, "4 rows, 4 entries, 0 missing, 0 stale, 0 extra") {
			t.Fatalf("verify after the rebucket of %s: %q", tc.table, out)
		}
		if got := strings.Count(c.ok("scan", "--store", c.store, "--table", "orders", "--index", "by_seller", "--prefix", "s1"), "\n"); got != 2 {
			t.Fatalf("scan by seller s1 after the rebucket of %s: %d rows, want 2", tc.table, got)
		}
	}
	st, err := func() (client.RebucketProgress, error) {
		b, err := openStore(ctx, c.env, c.store, true)
		if err != nil {
			return client.RebucketProgress{}, err
		}
		defer b.Close()
		return client.New(b).RebucketStatus(ctx, ixTable)
	}()
	if err != nil || st.Table != ixTable+"_r1" || st.Spec != "hash:3" {
		t.Fatalf("index table after its rebucket: %+v %v", st, err)
	}
}
