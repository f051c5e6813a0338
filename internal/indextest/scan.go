package indextest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

// ScanOptions checks Limit, Reverse, ResumeAfter and Columns on a query by index, and that Get is
// refused on a non-unique index.
func ScanOptions(t *testing.T, tbl *client.Table) {
	ctx := context.Background()
	rows := make([]client.Mutation, 40)
	for i := range rows {
		o := order{no: fmt.Sprintf("o%02d", i), seller: fmt.Sprint("s", i%3), buyer: "b", ext: fmt.Sprint("e", i), amount: fmt.Sprint(i)}
		rows[i] = client.Mutation{Key: OrderKey(o.no), Cells: o.cells(uint64(i))}
	}
	if rowErrs, err := tbl.Apply(ctx, rows); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
	ix := Index(t, tbl, "by_seller")
	all := Query(t, ix, client.Range{})
	if len(all) != len(rows) {
		t.Fatalf("got %d rows, want %d", len(all), len(rows))
	}
	rev := Query(t, ix, client.Range{}, client.Reverse())
	slices.Reverse(rev)
	if !slices.Equal(rev, all) {
		t.Fatal("reverse is not the reverse order")
	}
	// Paging with a cursor, forward and backward, gives the whole answer once.
	for _, reverse := range []bool{false, true} {
		var got []Answer
		var cursor []byte
		for {
			opts := []client.ReadOption{client.Limit(7)}
			if reverse {
				opts = append(opts, client.Reverse())
			}
			if cursor != nil {
				opts = append(opts, client.ResumeAfter(cursor))
			}
			page := Query(t, ix, client.Range{}, opts...)
			if len(page) > 7 {
				t.Fatalf("page of %d", len(page))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			cursor = []byte(page[len(page)-1].Entry)
		}
		if reverse {
			slices.Reverse(got)
		}
		if !slices.Equal(got, all) {
			t.Fatalf("reverse=%v: paged answer differs", reverse)
		}
	}
	cols := Query(t, ix, client.Range{}, client.Columns(client.Column{Family: "d", Qualifier: "buyer"}), client.Limit(1))
	if len(cols) != 1 || cols[0].Cells != `d:buyer="b";` {
		t.Fatalf("columns: %q", cols)
	}
	// A row filter applies to the main rows, also when the columns asked for are covered.
	amount := client.Column{Family: "d", Qualifier: "amount"}
	for _, tc := range []struct {
		name string
		opts []client.ReadOption
		want string
	}{
		{"main rows", []client.ReadOption{client.RowFilter(client.ValueFilter(client.Column{Family: "d", Qualifier: "ext"}, client.Equal, []byte("e5")))}, "o05"},
		{"covered columns", []client.ReadOption{client.Columns(amount), client.RowFilter(client.ValueFilter(amount, client.Equal, []byte("7")))}, "o07"},
	} {
		got := Query(t, ix, client.Range{}, tc.opts...)
		if len(got) != 1 || got[0].Main != string(OrderKey(tc.want)) {
			t.Fatalf("filter, %s: got %q, want only %s", tc.name, got, tc.want)
		}
	}
	bad := client.RowFilter(client.ValueRegexFilter(amount, "("))
	for _, err := range ix.Scan(ctx, client.Range{}, bad) {
		if !errors.Is(err, backends.ErrInvalidArgument) {
			t.Fatalf("a bad filter on an index scan: %v", err)
		}
	}
	if _, err := Index(t, tbl, "by_ext").Get(ctx, []byte("e1"), bad); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("a bad filter on an index get: %v", err)
	}
	if _, err := Index(t, tbl, "by_buyer").Get(ctx, []byte("x")); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("Get on a non-unique index: %v", err)
	}
	AssertIndexes(t, tbl)
}
