package client_test

import (
	"fmt"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
)

// putOrders writes n orders of three sellers.
func putOrders(t *testing.T, tbl *client.IndexedTable, n int) {
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
