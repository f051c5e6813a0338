package client_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
)

// putOrders writes n orders of three sellers.
func putOrders(t *testing.T, tbl *client.Table, n int) {
	t.Helper()
	for i := range n {
		err := tbl.Put(t.Context(), indextest.OrderKey(fmt.Sprint("o", i)), client.Cell{Family: "d", Qualifier: "seller", Value: fmt.Appendf(nil, "s%d", i%3)},
			client.Cell{Family: "d", Qualifier: "ts", Value: indextest.TS(uint64(i))})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Rebuild's result holds its totals, with or without a progress callback: the last call's, every
// bucket of the index table done.
func TestRebuildFinalProgress(t *testing.T) {
	tbl := indextest.NewOrders(t, memory.New(), "orders")
	putOrders(t, tbl, 10)
	ix := indextest.Index(t, tbl, "by_seller")
	tests := []struct {
		name     string
		progress bool
	}{{"with progress", true}, {"without", false}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var last client.RebuildProgress
			var progress func(client.RebuildProgress)
			if tc.progress {
				progress = func(p client.RebuildProgress) { last = p }
			}
			got, err := ix.Rebuild(t.Context(), progress)
			if err != nil {
				t.Fatal(err)
			}
			want := client.RebuildProgress{Index: "by_seller", Rows: 10, Entries: 10, Buckets: 4, Total: 4} // by_seller: hash:4
			if got != want {
				t.Errorf("Rebuild = %+v, want %+v", got, want)
			}
			if tc.progress && last != want {
				t.Errorf("last progress %+v, want %+v", last, want)
			}
		})
	}
}

// An entry of a write that stopped between its steps (its data write failed) is pending while the
// grace runs, not a problem; past the grace (WithGrace(0)) the entry it left is extra, and the one it
// marked on its way out stale.
func TestVerifyPendingIsNotAProblem(t *testing.T) {
	ctx := t.Context()
	fb := faulty.New(memory.New(), faulty.Config{Rules: []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpAtomic | faulty.OpApply, Table: "orders"}}})
	fb.SetActive(false)
	tbl := indextest.NewOrders(t, fb, "orders")
	putOrders(t, tbl, 3) // o0 of s0, o1 of s1, o2 of s2
	ix := indextest.Index(t, tbl, "by_seller")
	if rep, err := ix.Verify(ctx); err != nil || rep.Problems() != 0 || rep.Pending != 0 || rep.Entries != 3 {
		t.Fatalf("before: %v, %v", rep, err)
	}
	fb.SetActive(true) // the main table's writes fail: the index's go through
	err := tbl.Put(ctx, indextest.OrderKey("o1"), client.Cell{Family: "d", Qualifier: "seller", Value: []byte("s9")})
	fb.SetActive(false)
	if !errors.Is(err, faulty.ErrInjected) {
		t.Fatalf("Put with its data write failing: %v", err)
	}
	tests := []struct {
		name string
		ix   *client.Index
		want client.IndexReport
	}{
		{"within the grace", ix, client.IndexReport{Index: "by_seller", Rows: 3, Entries: 4, Pending: 2}},
		{"past the grace", ix.WithGrace(0), client.IndexReport{Index: "by_seller", Rows: 3, Entries: 4, Stale: 1, Extra: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := tc.ix.Verify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := rep
			got.Examples = nil
			if !reflect.DeepEqual(got, tc.want) || int64(len(rep.Examples)) != rep.Problems() {
				t.Errorf("Verify = %+v %q, want %+v with one example per problem", got, rep.Examples, tc.want)
			}
		})
	}
}
