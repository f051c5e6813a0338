//go:build integration

package integration

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/client/indextest"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/keys"
)

// TestHBaseIndexBench measures, on HBase, what indexes cost: Put throughput with 0, 1 and 2
// indexes (16 writers), and the latency of a query of 20 orders by seller answered from covered
// columns, with the main rows, and by a hand-written two-table application over the raw driver.
// It logs the figures the README quotes; it runs only with BRINE_INDEX_BENCH=1.
func TestHBaseIndexBench(t *testing.T) {
	if os.Getenv("BRINE_INDEX_BENCH") == "" {
		t.Skip("set BRINE_INDEX_BENCH=1 to measure")
	}
	e := openHBase(t)
	ctx := testCtx(t, 10*time.Minute)
	const rows, writers = 4000, 16
	cells := func(i int) []client.Cell {
		return []client.Cell{
			{Family: fam, Qualifier: "seller", Value: fmt.Appendf(nil, "s%03d", i%100)},
			{Family: fam, Qualifier: "buyer", Value: fmt.Appendf(nil, "b%04d", i%1000)},
			{Family: fam, Qualifier: "ts", Value: indextest.TS(uint64(i))},
			{Family: fam, Qualifier: "amount", Value: fmt.Appendf(nil, "%d", i)},
		}
	}
	var tables [3]*client.Table
	for n := range 3 {
		name := hbasetest.Table("brine_ixb")
		tbl, err := e.client.CreateTable(ctx, name, client.TableConfig{Salter: mustSpec(t, "hash:8"), Indexes: indextest.OrderIndexes(t)[:n]})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.client.DeleteTable(context.Background(), name) })
		tables[n] = tbl
		start := time.Now()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := w; i < rows; i += writers {
					if err := tbl.Put(ctx, indextest.OrderKey(fmt.Sprintf("o%08d", i)), cells(i)...); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		took := time.Since(start)
		t.Logf("put, %d index(es): %d rows in %s, %.0f rows/s", n, rows, took.Round(time.Millisecond), rows/took.Seconds())
	}

	// The hand-written application: a main table and an unsalted index table of
	// [seller][ts desc][order] -> order key, written by the same loop without any protocol.
	hmain, hidx := hbasetest.Table("brine_ixb_main"), hbasetest.Table("brine_ixb_idx")
	for _, name := range []string{hmain, hidx} {
		if err := e.backend.CreateTable(ctx, name, backends.TableOptions{Families: []string{fam}}); err != nil {
			t.Fatal(err)
		}
		e.dropTable(t, name)
	}
	var mm, im []backends.Mutation
	for i := range rows {
		k := indextest.OrderKey(fmt.Sprintf("o%08d", i))
		mm = append(mm, backends.Mutation{Key: k, Cells: cells(i)})
		ik := keys.AppendText(nil, keys.KindBytes, fmt.Appendf(nil, "s%03d", i%100))
		ik = append(append(ik, indextest.TS(^uint64(i))...), k...)
		im = append(im, backends.Mutation{Key: ik, Cells: []backends.Cell{{Family: fam, Qualifier: "k", Value: k}}})
	}
	if _, err := e.backend.Apply(ctx, hmain, mm); err != nil {
		t.Fatal(err)
	}
	if _, err := e.backend.Apply(ctx, hidx, im); err != nil {
		t.Fatal(err)
	}

	ix := tables[1].Index("by_seller")
	median := func(q func(seller string) int) time.Duration {
		var d []time.Duration
		for i := range 60 {
			seller := fmt.Sprintf("s%03d", i%100)
			start := time.Now()
			if n := q(seller); n != 20 {
				t.Fatalf("%d rows for %s", n, seller)
			}
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	byIndex := func(opts ...client.ReadOption) func(string) int {
		return func(seller string) int {
			p, _ := ix.Prefix([]byte(seller))
			n := 0
			for _, err := range ix.Scan(ctx, client.PrefixRange(p), append(opts, client.Limit(20))...) {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			return n
		}
	}
	hand := func(seller string) int {
		p := keys.AppendText(nil, keys.KindBytes, []byte(seller))
		var mk [][]byte
		for row, err := range e.backend.Scan(ctx, hidx, backends.Range{Start: p, End: keys.PrefixEnd(p)}, backends.ScanOptions{Limit: 20}) {
			if err != nil {
				t.Fatal(err)
			}
			mk = append(mk, row.Cells[0].Value)
		}
		got, err := e.backend.Read(ctx, hmain, mk, backends.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(got)
	}
	covered := median(byIndex(client.Columns(client.Column{Family: fam, Qualifier: "amount"})))
	full := median(byIndex())
	raw := median(hand)
	t.Logf("query 20 by seller, median of 60: covered %s, rows %s, hand-written two tables %s; covered/hand %.2f×, rows/hand %.2f×",
		covered.Round(time.Microsecond), full.Round(time.Microsecond), raw.Round(time.Microsecond), float64(covered)/float64(raw), float64(full)/float64(raw))
}
