package client_test

import (
	"context"
	"errors"
	"fmt"
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

// TestIndexApplyPerRow: Table.Apply on a table with indexes keeps Table.Apply's per-row contract. A row with an empty
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
	ix := indextest.Index(t, tbl, "by_ext")
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
// the index is declared (CreateTable, AddIndex), before anything is written; k1 of a
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
	if _, err := c.CreateTable(ctx, "bad", cfg); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("create with k2 of a 2-field key: %v, want ErrInvalidArgument", err)
	}
	if names, _ := c.Tables(ctx); len(names) != 0 {
		t.Fatalf("a refused create left tables: %q", names)
	}
	cfg.Indexes = byPart(1)
	if _, err := c.CreateTable(ctx, "good", cfg); err != nil {
		t.Fatalf("create with k1 of a 2-field key: %v", err)
	}
	add := byPart(5)[0]
	add.Name = "by_k5"
	if _, err := c.AddIndex(ctx, "good", add, client.AddIndexOptions{Fence: time.Millisecond}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("add index k5 of a 2-field key: %v, want ErrInvalidArgument", err)
	}
	it, err := c.OpenTable(ctx, "good", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(it.Indexes()); n != 1 {
		t.Fatalf("the refused index was declared: %d indexes", n)
	}
}

// TestIndexTableDropRefusedAndRebuilt: DeleteTable refuses an index's table (DropIndex drops it with
// its index), and Rebuild creates the table again when a tool deleted it around the API, after which
// writes work and the index is exact.
func TestIndexTableDropRefusedAndRebuilt(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c := client.New(b)
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: indextest.OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	put := func(no, seller string) error {
		return tbl.Put(ctx, indextest.OrderKey(no), client.Cell{Family: "d", Qualifier: "seller", Value: []byte(seller)},
			client.Cell{Family: "d", Qualifier: "ts", Value: indextest.TS(1)})
	}
	for i := range 10 {
		if err := put(fmt.Sprint("o", i), fmt.Sprint("s", i%3)); err != nil {
			t.Fatal(err)
		}
	}
	ixTable := client.IndexTableName("orders", "by_seller")
	if err := c.DeleteTable(ctx, ixTable); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("DeleteTable of an index's table: %v, want ErrInvalidArgument", err)
	}
	if _, err := b.TableMeta(ctx, ixTable); err != nil {
		t.Fatalf("the refused delete dropped the table: %v", err)
	}
	if err := b.DeleteTable(ctx, ixTable); err != nil { // around the API
		t.Fatal(err)
	}
	if _, err := indextest.Index(t, tbl, "by_seller").Rebuild(ctx, nil); err != nil {
		t.Fatalf("Rebuild with its table gone: %v", err)
	}
	if err := put("o10", "s1"); err != nil {
		t.Fatalf("put after the rebuild: %v", err)
	}
	indextest.AssertIndexes(t, tbl)
}

// newSchemaOrders is an order table whose key schema is "no" (one string field, what
// indextest.OrderKey encodes), with by_time (seller, then ts descending) and the unique by_ext.
func newSchemaOrders(t *testing.T) *client.Table {
	t.Helper()
	ctx := context.Background()
	c := client.New(memory.New())
	t.Cleanup(func() { _ = c.Close() })
	ks, err := keys.ParseSchema("no")
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), KeySchema: ks, Indexes: []client.IndexConfig{
		{Name: "by_time", Salter: testkit.Salter(t, "hash:2"), Parts: []client.IndexPart{client.ColumnPart("d", "seller"), client.ColumnPart("d", "month").Descending()}},
		{Name: "by_ext", Salter: testkit.Salter(t, "hash:2"), Unique: true, Parts: []client.IndexPart{client.ColumnPart("d", "ext")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, month := range []string{"JAN", "JUL", "JUN"} {
		if err := tbl.Put(ctx, indextest.OrderKey(fmt.Sprint("o", i)), client.Cell{Family: "d", Qualifier: "seller", Value: []byte("s9")},
			client.Cell{Family: "d", Qualifier: "month", Value: []byte(month)}, client.Cell{Family: "d", Qualifier: "ext", Value: []byte(fmt.Sprint("e", i))}); err != nil {
			t.Fatal(err)
		}
	}
	return tbl
}

// TestIndexScanReversedRange: a range whose start is after its end in the index's order is refused,
// its bounds printed as index values; where the first differing part sorts descending, the error
// says so. The same bounds the other way round are a range that holds rows.
func TestIndexScanReversedRange(t *testing.T) {
	ctx := context.Background()
	tbl := newSchemaOrders(t)
	ix := indextest.Index(t, tbl, "by_time")
	prefix := func(vals ...string) []byte {
		var b [][]byte
		for _, v := range vals {
			b = append(b, []byte(v))
		}
		p, err := ix.Prefix(b...)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name       string
		start, end []byte
		desc       bool // the first differing part sorts descending
	}{
		{"seller", prefix("s9"), prefix("s1"), false},
		{"descending month", prefix("s9", "JUL"), prefix("s9", "JUN"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			for _, e := range ix.Scan(ctx, client.RowRange(tc.start, tc.end)) {
				err = e
			}
			if !errors.Is(err, backends.ErrInvalidArgument) {
				t.Fatalf("reversed range: %v, want ErrInvalidArgument", err)
			}
			msg := err.Error()
			if strings.Contains(msg, `\x`) || !strings.Contains(msg, `"s9`) {
				t.Errorf("bounds not printed as index values: %s", msg)
			}
			if got := strings.Contains(msg, "part 2, d:month, sorts descending"); got != tc.desc {
				t.Errorf("names the descending part: %v, want %v: %s", got, tc.desc, msg)
			}
		})
	}
	n := 0
	for _, err := range ix.Scan(ctx, client.RowRange(prefix("s9", "JUN"), keys.PrefixEnd(prefix("s9", "JAN")))) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("JUN to JAN (descending) holds %d rows, want 3", n)
	}
}

// TestIndexErrorsPrintKeys: errors of the index path print main keys by the table's key schema and
// index keys as the index's values, not their encodings.
func TestIndexErrorsPrintKeys(t *testing.T) {
	ctx := context.Background()
	tbl := newSchemaOrders(t)
	ix := indextest.Index(t, tbl, "by_ext")
	missing, err := ix.Prefix([]byte("e9"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = ix.Get(ctx, missing)
	if !errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), `"e9"`) || strings.Contains(err.Error(), `\x`) {
		t.Errorf("Get of a missing unique value: %v", err)
	}
	err = tbl.Put(ctx, indextest.OrderKey("o7"), client.Cell{Family: "d", Qualifier: "ext", Value: []byte("e1")})
	if !errors.Is(err, client.ErrUniqueViolation) || !strings.Contains(err.Error(), `"e1"`) || !strings.Contains(err.Error(), `"o1"`) ||
		!strings.Contains(err.Error(), `"o7"`) || strings.Contains(err.Error(), `\x`) {
		t.Errorf("Put of a taken unique value: %v", err)
	}
}

// TestIndexUnknownName: Index of a name the table has no index of is an error naming the name and
// the indexes there are, not a nil handle whose first call panics.
func TestIndexUnknownName(t *testing.T) {
	tbl := newSchemaOrders(t)
	ix, err := tbl.Index("nope")
	if !errors.Is(err, client.ErrIndexNotFound) || ix != nil {
		t.Fatalf("Index(nope): %v, %v; want ErrIndexNotFound", ix, err)
	}
	for _, want := range []string{`"nope"`, "by_ext", "by_time"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
}

// TestIndexPages: Page says whether rows follow (a nil next cursor on the last page, also when the
// rows end exactly at a page's end), the pages together are the query's rows once each, and a
// cursor is refused by a query whose range does not hold it (another prefix).
func TestIndexPages(t *testing.T) {
	ctx := context.Background()
	tbl := newSchemaOrders(t)
	ix := indextest.Index(t, tbl, "by_time")
	s9, err := ix.Prefix([]byte("s9"))
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 2, 3, 4} {
		var got []string
		var cursor []byte
		pages := 0
		for {
			rows, next, err := ix.Page(ctx, client.PrefixRange(s9), cursor, size)
			if err != nil {
				t.Fatalf("page size %d: %v", size, err)
			}
			pages++
			for _, r := range rows {
				got = append(got, string(r.Key))
			}
			if next == nil {
				break
			}
			if len(rows) != size {
				t.Fatalf("page size %d: a page of %d rows has a next cursor", size, len(rows))
			}
			cursor = next
		}
		if want := (3 + size - 1) / size; len(got) != 3 || pages != want {
			t.Errorf("page size %d: %d rows in %d pages, want 3 in %d", size, len(got), pages, want)
		}
	}
	_, next, err := ix.Page(ctx, client.PrefixRange(s9), nil, 1)
	if err != nil || next == nil {
		t.Fatal(err, next)
	}
	s1, err := ix.Prefix([]byte("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.Page(ctx, client.PrefixRange(s1), next, 1); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("a cursor of prefix s9 on prefix s1: %v, want ErrInvalidArgument", err)
	}
	if _, err := testkit.CountErr(ix.Scan(ctx, client.PrefixRange(s1), client.ResumeAfter(next))); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("Scan with a cursor of prefix s9 on prefix s1: %v, want ErrInvalidArgument", err)
	}
}

// TestIndexOfKeyOnly: an index of key fields alone (no column part, nothing covered) has an entry for
// every row with a cell. A put of any column creates it, a row delete removes it, and a column
// delete that leaves the row without cells leaves an entry the query does not answer (and repairs).
func TestIndexOfKeyOnly(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	ks := testkit.Schema(t, "u,n:int64")
	tbl, err := c.CreateTable(ctx, "events", client.TableConfig{Salter: testkit.Salter(t, "hash:4"), KeySchema: ks,
		Indexes: []client.IndexConfig{{Name: "by_n", Salter: testkit.Salter(t, "hash:2"), Parts: []client.IndexPart{client.KeyPart(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	key := func(u string, n int64) []byte {
		k, err := ks.Encode(u, n)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	x := client.Column{Family: "d", Qualifier: "x"}
	answers := func() []string {
		t.Helper()
		var got []string
		for r, err := range tbl.Indexes()[0].WithGrace(0).Scan(ctx, client.Range{}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%x", r.Key))
		}
		return got
	}
	hex := func(keys ...[]byte) []string {
		out := []string{}
		for _, k := range keys {
			out = append(out, fmt.Sprintf("%x", k))
		}
		return out
	}
	steps := []struct {
		name string
		do   func() error
		want []string // main keys, by n
	}{
		{"put a", func() error {
			return tbl.Put(ctx, key("a", 2), client.Cell{Family: x.Family, Qualifier: x.Qualifier, Value: []byte("1")})
		}, hex(key("a", 2))},
		{"put b", func() error {
			return tbl.Put(ctx, key("b", 1), client.Cell{Family: "d", Qualifier: "y", Value: []byte("1")})
		}, hex(key("b", 1), key("a", 2))},
		{"delete a's only column", func() error { return tbl.Delete(ctx, key("a", 2), x) }, hex(key("b", 1))},
		{"delete row b", func() error { return tbl.Delete(ctx, key("b", 1)) }, hex()},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := answers(); strings.Join(got, ",") != strings.Join(s.want, ",") {
			t.Fatalf("after %s: the index answers %q, want %q", s.name, got, s.want)
		}
		indextest.AssertIndexes(t, tbl)
	}
}
