package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
)

// TestIndexApplyPerRow: IndexedTable.Apply keeps Table.Apply's per-row contract. A row with an empty
// key and a row whose unique value another row holds fail alone, each under its own position; the
// good row beside them is written and indexed.
func TestIndexApplyPerRow(t *testing.T) {
	ctx := context.Background()
	tbl := indextest.NewOrders(t, memory.New(), "orders")
	order := func(no, ext string) client.Mutation {
		return client.Mutation{Key: indextest.OrderKey(no), Cells: []client.Cell{
			{Family: "d", Qualifier: "seller", Value: []byte("s1")},
			{Family: "d", Qualifier: "ts", Value: indextest.TS(1)},
			{Family: "d", Qualifier: "ext", Value: []byte(ext)},
		}}
	}
	first := order("o1", "e1")
	if err := tbl.Put(ctx, first.Key, first.Cells...); err != nil {
		t.Fatal(err)
	}
	empty := order("", "e3")
	empty.Key = nil
	rowErrs, err := tbl.Apply(ctx, []client.Mutation{order("o2", "e2"), empty, order("o3", "e1")})
	if err != nil {
		t.Fatalf("Apply: %v, want per-row errors only", err)
	}
	if len(rowErrs) != 3 {
		t.Fatalf("Apply: %d row errors, want 3", len(rowErrs))
	}
	if rowErrs[0] != nil {
		t.Errorf("good row: %v", rowErrs[0])
	}
	if !errors.Is(rowErrs[1], backends.ErrInvalidKey) || !strings.HasPrefix(rowErrs[1].Error(), "row 1 ") {
		t.Errorf("empty key: %v, want row 1's ErrInvalidKey", rowErrs[1])
	}
	if !errors.Is(rowErrs[2], client.ErrUniqueViolation) || !strings.HasPrefix(rowErrs[2].Error(), "row 2 ") {
		t.Errorf("duplicate unique value: %v, want row 2's ErrUniqueViolation", rowErrs[2])
	}
	if _, err := tbl.Get(ctx, indextest.OrderKey("o2")); err != nil {
		t.Errorf("good row not written: %v", err)
	}
	ix := tbl.Index("by_ext")
	key, err := ix.Prefix([]byte("e2"))
	if err != nil {
		t.Fatal(err)
	}
	if row, err := ix.Get(ctx, key); err != nil || string(row.Key) != string(indextest.OrderKey("o2")) {
		t.Errorf("good row's unique entry: %v, %q", err, row.Key)
	}
	indextest.AssertIndexes(t, tbl)
}

// TestIndexKeyPartPastSchema: a key part kN the table's key schema has no field for is refused where
// the index is declared (CreateIndexedTable, AddIndex), before anything is written; k1 of a
// two-field schema is fine.
func TestIndexKeyPartPastSchema(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	ks, err := keys.ParseSchema("u,n:int64")
	if err != nil {
		t.Fatal(err)
	}
	byPart := func(n int) []client.IndexConfig {
		return []client.IndexConfig{{Name: "by_k", Salter: testkit.Salter(t, "hash:2"), Parts: []client.IndexPart{client.KeyPart(n)}}}
	}
	cfg := client.TableConfig{Salter: testkit.Salter(t, "hash:4"), KeySchema: ks, Indexes: byPart(2)}
	if _, err := c.CreateIndexedTable(ctx, "bad", cfg); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("create with k2 of a 2-field key: %v, want ErrInvalidArgument", err)
	}
	if names, _ := c.Tables(ctx); len(names) != 0 {
		t.Fatalf("a refused create left tables: %q", names)
	}
	cfg.Indexes = byPart(1)
	if _, err := c.CreateIndexedTable(ctx, "good", cfg); err != nil {
		t.Fatalf("create with k1 of a 2-field key: %v", err)
	}
	add := byPart(5)[0]
	add.Name = "by_k5"
	if _, err := c.AddIndex(ctx, "good", add, client.AddIndexOptions{Fence: time.Millisecond}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("add index k5 of a 2-field key: %v, want ErrInvalidArgument", err)
	}
	it, err := c.OpenIndexedTable(ctx, "good", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(it.Indexes()); n != 1 {
		t.Fatalf("the refused index was declared: %d indexes", n)
	}
}
