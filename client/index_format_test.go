package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/indextest"
)

// An index's entries come in two formats. A non-unique index created now keeps no key cell (its
// entry key ends with the main key), and its meta spec says "entries=2", which an older brine
// refuses. One stored before (its meta spec without it) keeps a key cell in every entry, and is
// written, queried, repaired and matched against its declaration as before. A unique index's
// entries hold the key cell in both. Each format runs the table-driven steps and the concurrent
// writers, and its entries are read raw from the index tables.
func TestIndexEntryFormats(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		format1  bool
		keyCells map[string]bool // by index
	}{
		{"entries=2", false, map[string]bool{"by_seller": false, "by_buyer": false, "by_ext": true}},
		{"stored before entries=2", true, map[string]bool{"by_seller": true, "by_buyer": true, "by_ext": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := memory.New()
			indextest.NewOrders(t, b, "orders")
			meta, err := b.TableMeta(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			for _, ix := range indextest.OrderIndexes(t) { // as created now: the unique one without the format
				if spec := meta["brine.index."+ix.Name]; strings.HasSuffix(spec, "|entries=2") == ix.Unique {
					t.Fatalf("index %s: meta spec %q", ix.Name, spec)
				}
			}
			if tc.format1 {
				old := maps.Clone(meta)
				for k, v := range meta {
					meta[k] = strings.TrimSuffix(v, "|entries=2")
				}
				if err := b.RewriteTableMeta(ctx, "orders", old, meta); err != nil {
					t.Fatal(err)
				}
			}
			c := client.New(b, client.WithConcurrency(4), client.WithRouteRefresh(exclusiveRefresh), client.WithLogger(slog.New(slog.DiscardHandler)))
			tbl, err := c.OpenTable(ctx, "orders", nil)
			if err != nil {
				t.Fatal(err)
			}
			// The declarations match the stored indexes, whatever their format.
			if _, err := c.CreateOrOpenTable(ctx, "orders", client.TableConfig{Salter: tbl.Salter(), Indexes: indextest.OrderIndexes(t)}); err != nil {
				t.Fatalf("CreateOrOpenTable with the declarations: %v", err)
			}
			for _, ix := range tbl.Indexes() {
				if strings.Contains(ix.Spec(), "entries") {
					t.Errorf("index %s: Spec %q shows the format", ix.Name(), ix.Spec())
				}
			}

			indextest.Steps(t, tbl)
			indextest.Concurrent(t, tbl, 1, 4, 40)
			// An exclusive import over the rows, moving them between sellers, and a rebuild under its fence.
			x := exclusive(t, tbl, client.ExclusiveOptions{})
			var rows []client.ImportRow
			for i := range 40 {
				rows = append(rows, orderRow(fmt.Sprint("o", i%8), fmt.Sprint("s", i%3), fmt.Sprint("x", i), uint64(i)))
			}
			if _, err := x.Import(ctx, rowsOf(rows), client.ImportOptions{BatchRows: 8}); err != nil {
				t.Fatal(err)
			}
			if _, err := x.Rebuild(ctx, "by_seller", nil); err != nil {
				t.Fatal(err)
			}
			if err := x.Release(ctx); err != nil {
				t.Fatal(err)
			}
			waitRefresh()
			verifyExact(t, tbl)
			for name, cell := range tc.keyCells {
				entries := 0
				for e, err := range b.Scan(ctx, client.IndexTableName("orders", name), backends.Range{}, backends.ScanOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					entries++
					if has := slices.ContainsFunc(e.Cells, func(c backends.Cell) bool { return c.Qualifier == "k" }); has != cell {
						t.Errorf("index %s entry %q: key cell %v, want %v", name, e.Key, has, cell)
					}
				}
				if entries == 0 {
					t.Errorf("index %s: no entries to check", name)
				}
			}

			// A table created from Describe's declarations gets the newest format.
			cfg, err := c.Describe(ctx, "orders")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateTable(ctx, "orders_copy", cfg); err != nil {
				t.Fatal(err)
			}
			copyMeta, err := b.TableMeta(ctx, "orders_copy")
			if err != nil {
				t.Fatal(err)
			}
			if spec := copyMeta["brine.index.by_buyer"]; !strings.HasSuffix(spec, "|entries=2") {
				t.Errorf("a table created from Describe: by_buyer's meta spec %q", spec)
			}
		})
	}
}

// A mark that comes after another writer's step 4 deleted the entry (the writer read the row before
// that writer moved it) leaves a lone pending status at the entry's key: a format 2 entry is marked
// by a put. No query answers it, covered columns only or not, while its writer may still be
// running; once it is older than the grace, the first reader deletes it.
func TestIndexLoneStatus(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	tbl := indextest.NewOrders(t, b, "orders")
	o1 := indextest.OrderKey("o1")
	row := func(seller string) []client.Cell {
		return []client.Cell{{Family: "d", Qualifier: "seller", Value: []byte(seller)}, {Family: "d", Qualifier: "ts", Value: indextest.TS(1)},
			{Family: "d", Qualifier: "amount", Value: []byte("5")}}
	}
	if err := tbl.Put(ctx, o1, row("host1")...); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Put(ctx, o1, row("host9")...); err != nil { // the other writer: host1's entry goes
		t.Fatal(err)
	}
	bySeller := indextest.Index(t, tbl, "by_seller")
	old, _, err := bySeller.EntryKey(o1, row("host1"))
	if err != nil {
		t.Fatal(err)
	}
	ixTable, phys := client.IndexTableName("orders", "by_seller"), physicalIndexKey(t, bySeller, old)
	late := []backends.Cell{{Family: "ix", Qualifier: "s", Value: indexproto.Status(indexproto.StatusPending, indexproto.NewToken())}}
	if _, err := b.Apply(ctx, ixTable, []backends.Mutation{{Key: phys, Cells: late}}); err != nil {
		t.Fatal(err)
	}
	lone := func() bool {
		got, err := b.Read(ctx, ixTable, [][]byte{phys}, backends.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(got[0].Cells) > 0
	}
	prefix, err := bySeller.Prefix([]byte("host1"))
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range [][]client.ReadOption{nil, {client.Columns(client.Column{Family: "d", Qualifier: "amount"})}} {
		if got := indextest.Query(t, bySeller, client.PrefixRange(prefix), opts...); len(got) != 0 {
			t.Errorf("the lone status answered %+v", got)
		}
	}
	if !lone() {
		t.Fatal("a young lone status was deleted: its writer may still be running")
	}
	// Young, it is pending (its writer may still be running); past the grace, extra.
	if rep, err := bySeller.Verify(ctx); err != nil || rep.Pending != 1 || rep.Problems() != 0 {
		t.Fatalf("Verify: %+v, %v; want 1 pending, no problem", rep, err)
	}
	if rep, err := bySeller.WithGrace(0).Verify(ctx); err != nil || rep.Pending != 0 || rep.Extra != 1 || rep.Problems() != 1 {
		t.Fatalf("Verify past the grace: %+v, %v; want 1 extra", rep, err)
	}
	if got := indextest.Query(t, bySeller.WithGrace(0), client.PrefixRange(prefix)); len(got) != 0 {
		t.Errorf("past the grace, the lone status answered %+v", got)
	}
	if lone() {
		t.Error("past the grace, a reader left the lone status")
	}
	indextest.AssertIndexes(t, tbl)
}
