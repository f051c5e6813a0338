package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestIndexedAfterRebucket: once a rebucket of an indexed table has dropped the old physical table,
// the handles' index definitions are read from the table serving it: writes, queries by index and
// DropIndex go on, on every embedded store.
func TestIndexedAfterRebucket(t *testing.T) {
	ctx := context.Background()
	for name, open := range rebucketStores() {
		t.Run(name, func(t *testing.T) {
			c := client.New(open(t), client.WithRouteRefresh(testRefresh))
			defer c.Close()
			it, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: []client.IndexConfig{
				{Name: "by_seller", Parts: []client.IndexPart{client.ColumnPart("d", "seller")}},
				{Name: "by_ext", Unique: true, Parts: []client.IndexPart{client.ColumnPart("d", "ext")}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			put := func(key, seller, ext string) {
				t.Helper()
				if err := it.Put(ctx, []byte(key), client.Cell{Family: "d", Qualifier: "seller", Value: []byte(seller)},
					client.Cell{Family: "d", Qualifier: "ext", Value: []byte(ext)}); err != nil {
					t.Fatalf("put %s: %v", key, err)
				}
			}
			put("o1", "s1", "x1")
			if err := it.Rebucket(ctx, testkit.Salter(t, "hash:8"), client.RebucketOptions{Fence: testFence, Grace: 0}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * testRefresh) // every view older than the refresh interval: definitions read again
			put("o2", "s1", "x2")
			put("o1", "s2", "x1")
			for _, ix := range it.Indexes() {
				rep, err := ix.Verify(ctx)
				if err != nil {
					t.Fatalf("verify %s: %v", ix.Name(), err)
				}
				if rep.Missing+rep.Stale+rep.Extra != 0 || rep.Rows != 2 {
					t.Errorf("verify %s after the rebucket: %+v, want 2 rows and no problem", ix.Name(), rep)
				}
			}
			p, err := indextest.Index(t, it, "by_seller").Prefix([]byte("s1"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for r, err := range indextest.Index(t, it, "by_seller").Scan(ctx, client.PrefixRange(p)) {
				if err != nil {
					t.Fatalf("scan by_seller: %v", err)
				}
				got = append(got, string(r.Key))
			}
			if len(got) != 1 || got[0] != "o2" {
				t.Errorf("seller s1's orders = %q, want [o2]", got)
			}
			if err := c.DropIndex(ctx, "orders", "by_ext", client.DropIndexOptions{Fence: testFence}); err != nil {
				t.Fatalf("drop index after the rebucket: %v", err)
			}
			it, err = c.OpenTable(ctx, "orders", nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(it.Indexes()); n != 1 {
				t.Errorf("after DropIndex: %d indexes, want 1", n)
			}
		})
	}
}
