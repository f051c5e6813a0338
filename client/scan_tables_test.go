package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// mergedTables creates two tables whose keys interleave (a the even numbers, b the odd ones), both
// holding "k050", and returns them with every key in order, "k050" twice (a's row first).
func mergedTables(t *testing.T, c *client.Client) (a, b *client.Table, want []string) {
	t.Helper()
	ctx := context.Background()
	var err error
	if a, err = c.CreateTable(ctx, "a", client.TableConfig{Salter: testkit.Salter(t, "hash:4")}); err != nil {
		t.Fatal(err)
	}
	if b, err = c.CreateTable(ctx, "b", client.TableConfig{Salter: testkit.Salter(t, "hash:3")}); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		tbl := a
		if i%2 == 1 {
			tbl = b
		}
		if err := tbl.Put(ctx, []byte(k), testkit.Cell("q", tbl.Name())); err != nil {
			t.Fatal(err)
		}
		want = append(want, k)
	}
	if err := b.Put(ctx, []byte("k050"), testkit.Cell("q", "b")); err != nil {
		t.Fatal(err)
	}
	want = slices.Insert(want, 51, "k050")
	return a, b, want
}

func rowText(t *testing.T, c *client.Client, tables []*client.Table, r client.Range, opts ...client.ReadOption) []string {
	t.Helper()
	return testkit.KeyStrings(testkit.Collect(t, c.ScanTables(context.Background(), tables, r, opts...)))
}

func TestScanTables(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	a, b, all := mergedTables(t, c)
	both := []*client.Table{a, b}
	rev := slices.Clone(all)
	slices.Reverse(rev)

	if got := rowText(t, c, both, client.Range{}); !slices.Equal(got, all) {
		t.Errorf("merged: %q\nwant %q", got, all)
	}
	if got := rowText(t, c, both, client.Range{}, client.Reverse()); !slices.Equal(got, rev) {
		t.Errorf("reverse: %q\nwant %q", got, rev)
	}
	// Equal keys come in the order of the tables.
	var from []string
	for row, err := range c.ScanTables(ctx, both, client.SingleRow([]byte("k050"))) {
		if err != nil {
			t.Fatal(err)
		}
		from = append(from, string(row.Cells[0].Value))
	}
	if !slices.Equal(from, []string{"a", "b"}) {
		t.Errorf("k050 from %q, want [a b]", from)
	}
	// Limit and ResumeAfter apply to the merged stream, so pages of it add up to the whole.
	var paged []string
	var cursor []byte
	for {
		opts := []client.ReadOption{client.Limit(7)}
		if cursor != nil {
			opts = append(opts, client.ResumeAfter(cursor))
		}
		page := rowText(t, c, both, client.RowRange([]byte("k010"), []byte("k090")), opts...)
		if len(page) > 7 {
			t.Fatalf("page of %d rows, limit 7", len(page))
		}
		if len(page) == 0 {
			break
		}
		paged = append(paged, page...)
		cursor = []byte(page[len(page)-1])
	}
	// The cursor is a key: a key held by both tables ends a page once, and the next page starts after it.
	want := slices.DeleteFunc(slices.Clone(all[10:91]), func(k string) bool { return k == "k090" })
	want = slices.Compact(want)
	if paged = slices.Compact(paged); !slices.Equal(paged, want) {
		t.Errorf("pages: %q\nwant %q", paged, want)
	}
	if got := rowText(t, c, []*client.Table{b}, client.PrefixRange([]byte("k00"))); !slices.Equal(got, []string{"k001", "k003", "k005", "k007", "k009"}) {
		t.Errorf("one table: %q", got)
	}
	if got := rowText(t, c, nil, client.Range{}); len(got) != 0 {
		t.Errorf("no tables: %q", got)
	}
	for _, tables := range [][]*client.Table{nil, both} {
		_, err := testkit.CountErr(c.ScanTables(ctx, tables, client.RowRange([]byte("z"), []byte("a"))))
		if !errors.Is(err, client.ErrInvalidArgument) {
			t.Errorf("%d tables, reversed range: %v, want ErrInvalidArgument", len(tables), err)
		}
	}
	// A failing table is named in the error.
	if err := c.DeleteTable(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	_, err := testkit.CountErr(c.ScanTables(ctx, both, client.Range{}))
	if !errors.Is(err, client.ErrTableNotFound) || !strings.HasPrefix(err.Error(), "scan: ") || !strings.Contains(err.Error(), "table b: ") {
		t.Errorf("scan with table b dropped: %v, want ErrTableNotFound naming b", err)
	}
}

// TestScanTablesRebucket: a table being rebucketed is read through its router (old and new table
// merged), and after the rebucket from the table that serves it now.
func TestScanTablesRebucket(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New(), client.WithRouteRefresh(testRefresh))
	defer c.Close()
	a, b, all := mergedTables(t, c)
	both := []*client.Table{a, b}
	var during []string
	progress := func(p client.RebucketProgress) {
		if p.State == "migrate" && during == nil {
			during = rowText(t, c, both, client.Range{})
		}
	}
	if err := a.Rebucket(ctx, testkit.Salter(t, "hash:7"), client.RebucketOptions{Fence: 3 * testRefresh, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(during, all) {
		t.Errorf("during the rebucket: %q\nwant %q", during, all)
	}
	if got := rowText(t, c, both, client.Range{}, client.Reverse()); len(got) != len(all) || got[0] != "k099" {
		t.Errorf("after the rebucket: %d rows from %q, want %d from k099", len(got), got, len(all))
	}
}

// TestScanTablesTelemetry: a scan of several tables is one call whose span names no table (the
// conventions leave db.collection.name out for an operation on several), with every bucket's span
// naming its own table, and the rows counted once.
func TestScanTablesTelemetry(t *testing.T) {
	ctx := context.Background()
	o := newObserved(t, memory.New())
	a, b, all := mergedTables(t, o.c)
	if n, err := testkit.CountErr(o.c.ScanTables(ctx, []*client.Table{a, b}, client.Range{})); err != nil || n != len(all) {
		t.Fatalf("%d rows, %v; want %d", n, err, len(all))
	}
	spans := o.spansNamed("scan")
	if len(spans) != 1 {
		t.Fatalf("%d spans named scan, want 1", len(spans))
	}
	kv := attrs(spans[0].Attributes())
	if _, ok := kv["db.collection.name"]; ok {
		t.Errorf("span of a scan of two tables has db.collection.name %v", kv["db.collection.name"])
	}
	if got := kv[client.AttrRows].AsInt64(); got != int64(len(all)) {
		t.Errorf("span counts %d rows, want %d", got, len(all))
	}
	if got := kv[client.AttrBuckets].AsInt64(); got != 7 {
		t.Errorf("span reads %d buckets, want 4+3", got)
	}
	if n := len(o.spansNamed("scan a bucket 0")) + len(o.spansNamed("scan b bucket 0")); n != 2 {
		t.Errorf("%d bucket-0 spans naming a and b, want 2", n)
	}
}
