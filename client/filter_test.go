package client_test

import (
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
)

// filterTable writes n rows with 8-byte big-endian keys 0..n-1 to a hash:16 table over a scan
// recorder; d:status is "paid" on every every-th row and "new" on the others.
func filterTable(t *testing.T, n, every int) (*scanRecorder, *client.Table) {
	t.Helper()
	ctx := context.Background()
	rec := &scanRecorder{Backend: memory.New()}
	c := client.New(rec)
	t.Cleanup(func() { c.Close() })
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: mustSalter(t, "hash:16")})
	if err != nil {
		t.Fatal(err)
	}
	var muts []client.Mutation
	for i := range n {
		status := "new"
		if i%every == 0 {
			status = "paid"
		}
		muts = append(muts, client.Mutation{Key: u64(i), Cells: []client.Cell{
			{Family: "d", Qualifier: "status", Value: []byte(status), Timestamp: 1},
		}})
	}
	if errs, err := tbl.Apply(ctx, muts); err != nil || errs != nil {
		t.Fatal(err, errs)
	}
	return rec, tbl
}

func u64(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

var paid = client.ValueFilter(client.Column{Family: "d", Qualifier: "status"}, client.Equal, []byte("paid"))

func TestFilterScanGetGetMany(t *testing.T) {
	ctx := context.Background()
	_, tbl := filterTable(t, 200, 3)
	var got []int
	for row, err := range tbl.Scan(ctx, client.Range{}, client.RowFilter(paid)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, int(binary.BigEndian.Uint64(row.Key)))
	}
	var want []int
	for i := 0; i < 200; i += 3 {
		want = append(want, i)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("filtered scan: %v, want %v", got, want)
	}
	if _, err := tbl.Get(ctx, u64(3), client.RowFilter(paid)); err != nil {
		t.Fatalf("Get of a passing row: %v", err)
	}
	if _, err := tbl.Get(ctx, u64(4), client.RowFilter(paid)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Get of a failing row: %v, want ErrNotFound", err)
	}
	rows, err := tbl.GetMany(ctx, [][]byte{u64(0), u64(1), u64(6)}, client.RowFilter(client.NotFilter(paid)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows[0].Cells) != 0 || len(rows[1].Cells) != 1 || len(rows[2].Cells) != 0 {
		t.Fatalf("GetMany with NOT paid: %v", rows)
	}
}

// TestFilterRefusedBeforeSending: a bad filter fails Get, GetMany and Scan with ErrInvalidArgument
// and reaches no store.
func TestFilterRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	rec, tbl := filterTable(t, 10, 2)
	bad := []client.ReadOption{
		client.RowFilter(client.ValueRegexFilter(client.Column{Family: "d", Qualifier: "status"}, "(")),
		client.RowFilter(client.AllFilters()),
		client.RowFilter(paid), client.Columns(client.Column{Family: "d", Qualifier: "other"}),
	}
	for _, opts := range [][]client.ReadOption{bad[0:1], bad[1:2], bad[2:4]} {
		if _, err := tbl.Get(ctx, u64(1), opts...); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("Get: %v, want ErrInvalidArgument", err)
		}
		if _, err := tbl.GetMany(ctx, [][]byte{u64(1)}, opts...); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("GetMany: %v, want ErrInvalidArgument", err)
		}
		for _, err := range tbl.Scan(ctx, client.Range{}, opts...) {
			if !errors.Is(err, backends.ErrInvalidArgument) {
				t.Errorf("Scan: %v, want ErrInvalidArgument", err)
			}
		}
	}
	if len(rec.opts) != 0 {
		t.Fatalf("%d bucket scans sent for bad filters", len(rec.opts))
	}
}

// TestFilterLimitPushdown: with dense matches a filtered scan with Limit(n) asks every bucket for n
// matching rows at most, so the stores read about n/density rows per bucket, not the table.
func TestFilterLimitPushdown(t *testing.T) {
	ctx := context.Background()
	rec, tbl := filterTable(t, 4000, 2)
	var got []int
	for row, err := range tbl.Scan(ctx, client.Range{}, client.RowFilter(paid), client.Limit(10)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, int(binary.BigEndian.Uint64(row.Key)))
	}
	if want := []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if len(rec.opts) != 16 {
		t.Fatalf("%d bucket scans, want 16", len(rec.opts))
	}
	for _, o := range rec.opts {
		if o.Limit != 10 || o.Filter == nil {
			t.Fatalf("bucket scan options: limit %d, filter %v; want limit 10 and the filter", o.Limit, o.Filter)
		}
	}
	if n := rec.pulled.Load(); n > 16*10 {
		t.Fatalf("buckets returned %d rows for a limit of 10 over 16 buckets", n)
	}
}
