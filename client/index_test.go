package client_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// indexStores are the embedded stores the index cases run on (integration/ runs them on HBase and
// the Tablestore server).
var indexStores = map[string]func(t *testing.T) backends.Backend{
	"memory": func(*testing.T) backends.Backend { return memory.New() },
	"local": func(t *testing.T) backends.Backend {
		s, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "db"), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	},
	"faulty": func(*testing.T) backends.Backend { return faulty.New(memory.New(), faulty.Config{Seed: 1}) },
}

func TestIndexSteps(t *testing.T) {
	for name, open := range indexStores {
		t.Run(name, func(t *testing.T) { indextest.Steps(t, indextest.NewOrders(t, open(t), "orders")) })
	}
}

func TestIndexScanOptions(t *testing.T) {
	for name, open := range indexStores {
		t.Run(name, func(t *testing.T) { indextest.ScanOptions(t, indextest.NewOrders(t, open(t), "orders")) })
	}
}

// TestIndexConcurrentWriters: see indextest.Concurrent; the guarantee it checks is the package
// documentation's for concurrent writers of one row.
func TestIndexConcurrentWriters(t *testing.T) {
	for name, open := range indexStores {
		seeds, writers := []uint64{1, 2, 3}, 8
		if name == "local" {
			seeds, writers = seeds[:1], 4 // one bbolt writer at a time: the same interleavings, slower
		}
		for _, seed := range seeds {
			t.Run(name, func(t *testing.T) {
				indextest.Concurrent(t, indextest.NewOrders(t, open(t), "orders"), seed, writers, 60)
			})
		}
	}
}

// TestIndexConditionalRace: see indextest.ConditionalRace.
func TestIndexConditionalRace(t *testing.T) {
	for name, open := range indexStores {
		if name == "faulty" {
			continue // an injected failure of a release is a failed release, not a broken lock
		}
		t.Run(name+"/lock", func(t *testing.T) { indextest.ConditionalRace(t, indextest.NewOrders(t, open(t), "orders"), 6, 30) })
		t.Run(name+"/revoke", func(t *testing.T) { indextest.RevokeRace(t, indextest.NewOrders(t, open(t), "orders"), 3, 20) })
	}
}

func TestIndexDefinitions(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	s := testkit.Salter(t, "hash:4")
	if _, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: s, Indexes: indextest.OrderIndexes(t)}); err != nil {
		t.Fatal(err)
	}
	got, err := c.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Indexes()) != 3 || indextest.Index(t, got, "by_seller").Spec() != "salt=hash:4:fields=1|key=c:d:seller,c:d:ts:desc,k0|cover=d:amount" {
		t.Fatalf("opened with %d indexes, by_seller %q", len(got.Indexes()), indextest.Index(t, got, "by_seller").Spec())
	}
	// One handle type: a program that does not declare the indexes gets the table's.
	if got, err := c.CreateOrOpenTable(ctx, "orders", client.TableConfig{Salter: s}); err != nil || len(got.Indexes()) != 3 {
		t.Fatalf("CreateOrOpenTable of an indexed table, no indexes declared: %v, want its 3 indexes", err)
	}
	plain, err := c.CreateTable(ctx, "plain", client.TableConfig{Salter: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Indexes()) != 0 {
		t.Fatalf("a table without indexes has %d", len(plain.Indexes()))
	}
	if _, err := plain.Index("by_seller"); !errors.Is(err, client.ErrIndexNotFound) {
		t.Fatalf("Index of a table without indexes: %v, want ErrIndexNotFound", err)
	}
	if _, err := plain.Exclusive(ctx, client.ExclusiveOptions{}); !errors.Is(err, client.ErrIndexNotFound) {
		t.Fatalf("Exclusive of a table without indexes: %v, want ErrIndexNotFound", err)
	}
	if err := c.DeleteTable(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "orders", client.TableConfig{Salter: s, Indexes: indextest.OrderIndexes(t)[:2]}); !errors.Is(err, client.ErrIndexMismatch) {
		t.Fatalf("reopen with other indexes: %v", err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "orders", client.TableConfig{Salter: s, Indexes: indextest.OrderIndexes(t)}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []client.IndexConfig{
		{Name: "", Parts: []client.IndexPart{client.KeyPart(0)}},
		{Name: "x y", Parts: []client.IndexPart{client.KeyPart(0)}},
		{Name: "x"},
		{Name: "x", Parts: []client.IndexPart{client.ColumnPart("nofamily", "q")}},
		{Name: "x", Parts: []client.IndexPart{client.ColumnPart("d", "a:b")}},
		{Name: "x", Parts: []client.IndexPart{client.KeyPart(0).Descending()}},
		{Name: "x", Parts: []client.IndexPart{client.KeyPart(0)}, Covered: []client.Column{{Family: "d", Qualifier: client.IndexVersionQualifier}}},
	} {
		if _, err := c.CreateTable(ctx, "bad", client.TableConfig{Salter: s, Indexes: []client.IndexConfig{bad}}); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Fatalf("%+v: got %v, want ErrInvalidArgument", bad, err)
		}
	}
	if err := c.DeleteTable(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if names, _ := c.Tables(ctx); len(names) != 0 {
		t.Fatalf("tables left: %q", names)
	}
}

// TestIndexImport: Import keeps the indexes in step, and a key repeated in the input ends under the
// index key of its last occurrence, whatever order the parallel batches land in.
func TestIndexImport(t *testing.T) {
	for name, open := range indexStores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tbl := indextest.NewOrders(t, open(t), "orders")
			var rows []client.ImportRow
			for i := range 60 {
				no := fmt.Sprint("o", i%20) // each key three times, sellers s0, s1, s2 in input order
				rows = append(rows, client.ImportRow{Mutation: client.Mutation{Key: indextest.OrderKey(no), Cells: []client.Cell{
					{Family: "d", Qualifier: "seller", Value: fmt.Appendf(nil, "s%d", i/20)},
					{Family: "d", Qualifier: "ts", Value: indextest.TS(uint64(i))},
					{Family: "d", Qualifier: "amount", Value: fmt.Appendf(nil, "%d", i)},
				}}})
			}
			input := func(yield func(client.ImportRow, error) bool) {
				for _, r := range rows {
					if !yield(r, nil) {
						return
					}
				}
			}
			stats, err := tbl.Import(ctx, input, client.ImportOptions{Workers: 8, BatchRows: 1})
			if err != nil || stats.Written != 60 {
				t.Fatal(err, stats)
			}
			indextest.AssertIndexes(t, tbl)
			p, _ := indextest.Index(t, tbl, "by_seller").Prefix([]byte("s2"))
			if got := indextest.Query(t, indextest.Index(t, tbl, "by_seller"), client.PrefixRange(p)); len(got) != 20 {
				t.Fatalf("seller s2 (every key's last occurrence) has %d orders, want 20", len(got))
			}
		})
	}
}

// TestIndexApplySameRow: mutations of one row in one Apply race each other's data writes; the
// losers start again alone, and the index ends as the row does.
func TestIndexApplySameRow(t *testing.T) {
	ctx := context.Background()
	tbl := indextest.NewOrders(t, memory.New(), "orders")
	for round := range 20 {
		var muts []client.Mutation
		for s := range 4 {
			muts = append(muts, client.Mutation{Key: indextest.OrderKey("o1"), Cells: []client.Cell{
				{Family: "d", Qualifier: "seller", Value: fmt.Appendf(nil, "s%d", (round+s)%3)},
				{Family: "d", Qualifier: "ts", Value: indextest.TS(uint64(round))},
				{Family: "d", Qualifier: "ext", Value: fmt.Appendf(nil, "e%d", s)},
			}})
		}
		if round%5 == 4 {
			muts = append(muts, client.Mutation{Key: indextest.OrderKey("o1"), Delete: true})
		}
		// Unique claims of one row's own entries never conflict; other outcomes are per row.
		if rowErrs, err := tbl.Apply(ctx, muts); err != nil {
			t.Fatal(err, rowErrs)
		}
		indextest.AssertIndexes(t, tbl)
	}
}

// TestIndexAddLive, TestIndexAddResume, TestIndexDropLive: see indextest.AddLive, AddResume and
// DropLive.
func TestIndexAddLive(t *testing.T) {
	for name, open := range indexStores {
		t.Run(name, func(t *testing.T) { indextest.AddLive(t, open(t), "orders") })
	}
}

func TestIndexAddResume(t *testing.T) {
	for name, open := range indexStores {
		t.Run(name, func(t *testing.T) { indextest.AddResume(t, open(t), "orders") })
	}
}

func TestIndexDropLive(t *testing.T) {
	for name, open := range indexStores {
		t.Run(name, func(t *testing.T) { indextest.DropLive(t, open(t), "orders") })
	}
}

// TestIndexRebucketLive: see indextest.RebucketLive.
func TestIndexRebucketLive(t *testing.T) {
	stores := rebucketStores()
	for _, name := range []string{"memory", "local", "faulty", "tablestore"} {
		t.Run(name, func(t *testing.T) {
			indextest.RebucketLive(t, stores[name](t), "orders", indextest.RebucketTimes{Refresh: testRefresh, Fence: testFence}, 3)
		})
	}
}
