package client_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// filterTable writes n rows with 8-byte big-endian keys 0..n-1 to a hash:16 table over a scan
// recorder; d:status is "paid" on every every-th row and "new" on the others.
func filterTable(t *testing.T, n, every int) (*scanRecorder, *client.Table) {
	t.Helper()
	ctx := context.Background()
	rec := &scanRecorder{Backend: memory.New()}
	c := client.New(rec)
	t.Cleanup(func() { c.Close() })
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:16")})
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

// TestKeyRegexFilter: row-key leaves test logical keys, in the client; the other conjuncts of an
// AND still go to the store. The buckets read without the limit, in growing batches, and not the
// whole table.
func TestKeyRegexFilter(t *testing.T) {
	ctx := context.Background()
	rec := &scanRecorder{Backend: memory.New()}
	c := client.New(rec)
	t.Cleanup(func() { c.Close() })
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:16")})
	if err != nil {
		t.Fatal(err)
	}
	var muts []client.Mutation
	key := func(b, o int) string { return fmt.Sprintf("buyer%d/order%03d", b, o) }
	for b := range 10 {
		for o := range 100 {
			status := "new"
			if o%2 == 0 {
				status = "paid"
			}
			muts = append(muts, client.Mutation{Key: []byte(key(b, o)), Cells: []client.Cell{{Family: "d", Qualifier: "status", Value: []byte(status), Timestamp: 1}}})
		}
	}
	if errs, err := tbl.Apply(ctx, muts); err != nil || errs != nil {
		t.Fatal(err, errs)
	}
	newOnly := client.ValueFilter(client.Column{Family: "d", Qualifier: "status"}, client.Equal, []byte("new"))
	var wantAnd, wantOr []string
	for b := range 10 {
		for o := range 100 {
			if b == 3 && o%2 == 1 {
				wantAnd = append(wantAnd, key(b, o))
			}
			if o < 5 || (b == 9 && o%2 == 1) {
				wantOr = append(wantOr, key(b, o))
			}
		}
	}
	tests := []struct {
		name      string
		f         client.Filter
		limit     int
		want      []string
		storeGets bool // the store is sent a filter (never the limit: rows may fail on their keys)
	}{
		{"and: key in the client, value in the store", client.AllFilters(client.KeyRegexFilter("^buyer3/"), newOnly), 0, wantAnd, true},
		{"and, limit 5", client.AllFilters(newOnly, client.KeyRegexFilter("^buyer3/")), 5, wantAnd[:5], true},
		{"or: all in the client", client.AnyFilter(client.KeyRegexFilter("order00[0-4]$"), client.AllFilters(newOnly, client.KeyRegexFilter("^buyer9"))), 0, wantOr, false},
		{"not, limit 3", client.NotFilter(client.KeyRegexFilter("^buyer[1-9]")), 3, []string{key(0, 0), key(0, 1), key(0, 2)}, false},
	}
	for _, tt := range tests {
		rec.mu.Lock()
		rec.opts = nil
		rec.mu.Unlock()
		rec.pulled.Store(0)
		opts := []client.ReadOption{client.RowFilter(tt.f)}
		if tt.limit > 0 {
			opts = append(opts, client.Limit(tt.limit))
		}
		got := testkit.KeyStrings(testkit.Collect(t, tbl.Scan(ctx, client.Range{}, opts...)))
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %d rows %v, want %d %v", tt.name, len(got), got[:min(len(got), 6)], len(tt.want), tt.want[:min(len(tt.want), 6)])
		}
		for _, o := range rec.opts {
			if (o.Filter != nil) != tt.storeGets || o.Limit != 0 {
				t.Fatalf("%s: a bucket scan got filter %v, limit %d", tt.name, o.Filter, o.Limit)
			}
			if driverkit.Has(o.Filter, backends.FilterKeyRegex) {
				t.Fatalf("%s: a row-key leaf reached the store", tt.name)
			}
		}
		if tt.limit > 0 && rec.pulled.Load() > 500 {
			t.Errorf("%s: %d rows read from the buckets of 1000 for a limit of %d", tt.name, rec.pulled.Load(), tt.limit)
		}
	}
	if _, err := tbl.Get(ctx, []byte(key(3, 1)), client.RowFilter(client.AllFilters(newOnly, client.KeyRegexFilter("^buyer3/")))); err != nil {
		t.Fatalf("Get of a passing row: %v", err)
	}
	if _, err := tbl.Get(ctx, []byte(key(4, 1)), client.RowFilter(client.KeyRegexFilter("^buyer3/"))); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("Get of a row failing on its key: %v", err)
	}
	rows, err := tbl.GetMany(ctx, [][]byte{[]byte(key(3, 1)), []byte(key(3, 2)), []byte(key(5, 1))},
		client.RowFilter(client.AllFilters(newOnly, client.KeyRegexFilter("^buyer3/"))))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows[0].Cells) != 1 || len(rows[1].Cells) != 0 || len(rows[2].Cells) != 0 {
		t.Fatalf("GetMany: %v", rows)
	}
}
