package client_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
)

// TestExclusiveEntryWritesFail: when the writes of an exclusive Import's buffered entries fail, the
// rows stay written and reported written (their writes succeeded), and Release repairs the entries
// from them: every index is exact afterwards. Runs of one batch (EntryBuffer 1) and one run per
// Import (the default) alike.
func TestExclusiveEntryWritesFail(t *testing.T) {
	for _, buffer := range []int{0, 1} {
		t.Run(fmt.Sprint("buffer=", buffer), func(t *testing.T) {
			ctx := context.Background()
			st := faulty.New(memory.New(), faulty.Config{Seed: 7, Rules: []faulty.Rule{
				{Fault: faulty.Error, Ops: faulty.OpApply, Table: "orders__ix_by_seller", Max: 2},
				{Fault: faulty.RowError, Ops: faulty.OpApply, Table: "orders__ix_by_buyer", Prob: 0.2, Max: 10},
			}})
			st.SetActive(false)
			_, tbl := exclusiveOrders(t, st)
			var rows []client.ImportRow
			for i := range 200 {
				rows = append(rows, orderRow(fmt.Sprint("o", i), fmt.Sprint("s", i%7), fmt.Sprint("e", i), uint64(i)))
			}
			x := exclusive(t, tbl, client.ExclusiveOptions{EntryBuffer: buffer})
			st.SetActive(true)
			stats, err := x.Import(ctx, rowsOf(rows), client.ImportOptions{BatchRows: 16})
			st.SetActive(false)
			if err != nil || stats.Written != 200 || stats.Failed != 0 {
				t.Fatalf("import: %v, %+v", err, stats)
			}
			if got := st.Stats(); got.Errors == 0 || got.RowErrors == 0 {
				t.Fatalf("faults injected: %v; the test needs both kinds", got)
			}
			if err := x.Release(ctx); err != nil {
				t.Fatal(err)
			}
			waitRefresh()
			verifyExact(t, tbl)
		})
	}
}
