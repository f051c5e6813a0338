package client_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/brine-kv/brine/client"
)

// TestExclusiveImportTwice: two Imports under one fence of a table empty when it was taken, the
// second moving every row of the first to another seller and ext. The second must read the rows the
// first wrote: the entries they leave are deleted, and the indexes are exact once released.
func TestExclusiveImportTwice(t *testing.T) {
	for name, open := range indexStores {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			_, tbl := exclusiveOrders(t, open(t))
			x := exclusive(t, tbl, client.ExclusiveOptions{})
			for gen := range 2 {
				var rows []client.ImportRow
				for i := range 50 {
					rows = append(rows, orderRow(fmt.Sprint("o", i), fmt.Sprint("s", gen, "-", i%5), fmt.Sprint("e", gen, "-", i), uint64(gen*100+i)))
				}
				if stats, err := x.Import(ctx, rowsOf(rows), client.ImportOptions{BatchRows: 8}); err != nil || stats.Written != 50 {
					t.Fatalf("import %d: %+v %v", gen, stats, err)
				}
			}
			if err := x.Release(ctx); err != nil {
				t.Fatal(err)
			}
			waitRefresh()
			verifyExact(t, tbl)
		})
	}
}
