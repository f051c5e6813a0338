package client_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestRebucketReadsAfterMigrateBegins: a handle that read the directory just before the migrate
// step was recorded still holds the pause view, yet a write lands in the new table at once. Its
// Get, GetMany, Scan and queries by index must answer that write, and its index repair must keep
// the entry the write verified. (They read the old table for up to a refresh interval: a reader's
// repair deleted the verified entry of a unique value, which a second row then took.)
func TestRebucketReadsAfterMigrateBegins(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c := client.New(b, client.WithRouteRefresh(testRefresh), client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: indextest.OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	key := indextest.OrderKey("o1")
	order := func(ext string) []client.Cell {
		return []client.Cell{
			{Family: "d", Qualifier: "seller", Value: []byte("host1")},
			{Family: "d", Qualifier: "ext", Value: []byte(ext)},
			{Family: "d", Qualifier: "ts", Value: indextest.TS(1)},
			{Family: "d", Qualifier: "amount", Value: []byte(ext + "-amount")},
		}
	}
	if err := tbl.Put(ctx, key, order("e0")...); err != nil {
		t.Fatal(err)
	}
	// The reader refreshes well inside the fence, as the rebucket requires.
	rc := client.New(b, client.WithRouteRefresh(testFence/2))
	defer rc.Close()
	reader, err := rc.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	byExt, err := reader.Index("by_ext")
	if err != nil {
		t.Fatal(err)
	}
	wantExt := func(what string, cells []client.Cell) {
		t.Helper()
		for _, cl := range cells {
			if cl.Family == "d" && cl.Qualifier == "ext" && string(cl.Value) != "e1" {
				t.Errorf("%s: ext %q, want the write's e1", what, cl.Value)
			}
		}
	}
	progress := func(p client.RebucketProgress) {
		switch p.State {
		case "pause":
			time.Sleep(testFence / 2) // the reader's view expires; its next read takes the pause view
			if _, err := reader.Get(ctx, key); err != nil {
				t.Error(err)
			}
		case "migrate":
			if err := tbl.Put(ctx, key, order("e1")...); err != nil {
				t.Error(err)
				return
			}
			reader.TrustView()
			row, err := reader.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			wantExt("Get", row.Cells)
			rows, err := reader.GetMany(ctx, [][]byte{key})
			if err != nil {
				t.Fatal(err)
			}
			wantExt("GetMany", rows[0].Cells)
			for row, err := range reader.Scan(ctx, client.Range{}) {
				if err != nil {
					t.Fatal(err)
				}
				wantExt("Scan", row.Cells)
			}
			ik, err := byExt.Prefix([]byte("e1"))
			if err != nil {
				t.Fatal(err)
			}
			row, err = byExt.Get(ctx, ik)
			if err != nil {
				t.Fatalf("query by_ext e1: %v", err)
			}
			wantExt("query by index", row.Cells)
		}
	}
	if err := tbl.Rebucket(ctx, testkit.Salter(t, "hash:8"), client.RebucketOptions{Fence: testFence, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	indextest.AssertIndexes(t, tbl)
}
