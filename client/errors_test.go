package client_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// Every sentinel a caller branches on is reachable from client, as the same value as backends'.
func TestSentinelsReexported(t *testing.T) {
	tests := []struct {
		name          string
		client, store error
	}{
		{"ErrClosed", client.ErrClosed, backends.ErrClosed},
		{"ErrInvalidArgument", client.ErrInvalidArgument, backends.ErrInvalidArgument},
		{"ErrInvalidKey", client.ErrInvalidKey, backends.ErrInvalidKey},
		{"ErrTableNotFound", client.ErrTableNotFound, backends.ErrTableNotFound},
		{"ErrTableExists", client.ErrTableExists, backends.ErrTableExists},
		{"ErrUnsupported", client.ErrUnsupported, backends.ErrUnsupported},
		{"ErrRetryable", client.ErrRetryable, backends.ErrRetryable},
		{"ErrNotTunable", client.ErrNotTunable, backends.ErrNotTunable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.client != tc.store {
				t.Fatalf("client.%s is not backends.%[1]s", tc.name)
			}
		})
	}
	if !client.IsRetryable(driverkit.Retryable(errors.New("x"))) || client.IsRetryable(errors.New("x")) {
		t.Error("client.IsRetryable disagrees with driverkit.Retryable, which drivers mark transient errors with")
	}
}

func TestClosedClientErrClosed(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:2")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, []byte("a")); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("get after Close: %v, want client.ErrClosed", err)
	}
}

// A range whose start is after its end is refused by every Go scan, as the CLI refuses it; a range
// whose start equals its end is empty; Reverse takes the ascending range.
func TestScanRangeOrder(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	salter := testkit.Salter(t, "hash:4")
	tbl, err := c.CreateTable(ctx, "plain", client.TableConfig{Salter: salter})
	if err != nil {
		t.Fatal(err)
	}
	it, err := c.CreateTable(ctx, "indexed", client.TableConfig{Salter: salter,
		Indexes: []client.IndexConfig{{Name: "by_v", Salter: salter, Parts: []client.IndexPart{client.ColumnPart("d", "q")}}}})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := c.CreateTable(ctx, "empty", client.TableConfig{Salter: salter})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if err := tbl.Put(ctx, []byte(k), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
		if err := it.Put(ctx, []byte(k), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	scans := map[string]func(client.Range, ...client.ReadOption) iter.Seq2[client.Row, error]{
		"Table": func(r client.Range, o ...client.ReadOption) iter.Seq2[client.Row, error] {
			return tbl.Scan(ctx, r, o...)
		},
		"indexedTable": func(r client.Range, o ...client.ReadOption) iter.Seq2[client.Row, error] {
			return it.Scan(ctx, r, o...)
		},
		"ScanTables": func(r client.Range, o ...client.ReadOption) iter.Seq2[client.Row, error] {
			return c.ScanTables(ctx, []*client.Table{empty, tbl}, r, o...)
		},
	}
	tests := []struct {
		name       string
		r          client.Range
		opts       []client.ReadOption
		rows       int
		invalidArg bool
	}{
		{"ascending", client.RowRange([]byte("b"), []byte("d")), nil, 2, false},
		{"reverse option", client.RowRange([]byte("b"), []byte("d")), []client.ReadOption{client.Reverse()}, 2, false},
		{"start after end", client.RowRange([]byte("d"), []byte("b")), nil, 0, true},
		{"start after end, reverse", client.RowRange([]byte("d"), []byte("b")), []client.ReadOption{client.Reverse()}, 0, true},
		{"start equals end", client.RowRange([]byte("b"), []byte("b")), nil, 0, false},
		{"open end", client.InfiniteRange([]byte("c")), nil, 2, false},
	}
	for name, scan := range scans {
		for _, tc := range tests {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				n, err := testkit.CountErr(scan(tc.r, tc.opts...))
				if got := errors.Is(err, client.ErrInvalidArgument); got != tc.invalidArg {
					t.Fatalf("err = %v, want ErrInvalidArgument: %v", err, tc.invalidArg)
				}
				if !tc.invalidArg && err != nil {
					t.Fatal(err)
				}
				if n != tc.rows {
					t.Errorf("%d rows, want %d", n, tc.rows)
				}
			})
		}
	}
	// An index's scan reads its own range the same way.
	if _, err := testkit.CountErr(indextest.Index(t, it, "by_v").Scan(ctx, client.RowRange([]byte("z"), []byte("a")))); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("index scan of a reversed range: %v, want ErrInvalidArgument", err)
	}
}

// Bad input that every bucket refuses alike gives one error naming the table and the input once
// each, the same in every run: no bucket or merge-stream number, which would vary with whichever
// bucket answered first, and no second naming of the table (the store's error names it already).
func TestScanBadFamilyNamedOnce(t *testing.T) {
	for store, open := range rebucketStores() {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			c := client.New(open(t))
			defer c.Close()
			tbl, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:8"), Families: []string{"d"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
				if err := tbl.Put(ctx, []byte(k), client.Cell{Family: "d", Qualifier: "q", Value: []byte("v")}); err != nil {
					t.Fatal(err)
				}
			}
			var first string
			for i := range 20 {
				_, err := testkit.CountErr(tbl.Scan(ctx, client.InfiniteRange(nil), client.Families("x")))
				if !errors.Is(err, client.ErrInvalidArgument) {
					t.Fatalf("scan of family x: %v, want ErrInvalidArgument", err)
				}
				if se := (*fanout.StreamError)(nil); errors.As(err, &se) {
					t.Fatalf("scan of family x: %v names merge stream %d", err, se.Stream)
				}
				if i == 0 {
					first = err.Error()
					if n := strings.Count(first, `"x"`); n != 1 {
						t.Errorf("error %q names the family %d times, want once", first, n)
					}
					if n := strings.Count(first, "orders"); n != 1 {
						t.Errorf("error %q names the table %d times, want once", first, n)
					}
				} else if err.Error() != first {
					t.Fatalf("run %d: error %q, run 0: %q", i, err, first)
				}
			}
		})
	}
}
