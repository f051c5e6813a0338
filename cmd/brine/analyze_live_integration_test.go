//go:build integration

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestHBaseAnalyzeLive writes 2,000 rows into a hash:4 table and checks that analyze --store reports
// them: one region per bucket, and every write counted in some bucket once the region server's next
// load report (every 3 s) reached the master.
func TestHBaseAnalyzeLive(t *testing.T) {
	c := hbaseCLI(t)
	table := c.tab("live")
	c.ok("import", "--store", c.store, "--table", table, "--create", "--salt", "hash:4", "--key", typedKey, c.file("rows.csv", csvRows(2000, 2000)))

	ctx := context.Background()
	b, err := openStore(ctx, c.env, c.store, true)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := testkit.Salter(t, "hash:4")
	var l liveLoad
	for deadline := time.Now().Add(15 * time.Second); ; {
		status, err := clusterStatus(ctx, b.(*hbase.Backend))
		if err != nil {
			t.Fatal(err)
		}
		l = groupLoads(table, s, tableRegionLoads(status, table))
		var writes int64
		for _, g := range l.buckets {
			writes += g.writes
		}
		if writes >= 2000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s the master reports %d writes to %s, want 2000: %+v", writes, table, l.buckets)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for i, g := range l.buckets {
		if g.regions != 1 || g.writes == 0 {
			t.Errorf("bucket %d: %d regions, %d writes; want 1 region and some of the writes", i, g.regions, g.writes)
		}
	}

	svg := filepath.Join(t.TempDir(), "load.svg")
	out := c.ok("analyze", "--store", c.store, "--svg", svg, table)
	if !strings.Contains(out, "salt: hash:4   4 regions on 1 servers") || !strings.Contains(out, "requests per bucket") {
		t.Fatalf("analyze output:\n%s", out)
	}
	if pic, err := os.ReadFile(svg); err != nil || strings.Count(string(pic), "<rect ") != 5 {
		t.Fatalf("svg: %v, want 5 bars (4 buckets, 1 server):\n%s", err, pic)
	}
}
