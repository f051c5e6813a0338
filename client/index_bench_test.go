package client_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
)

// callCounter counts the store calls and rows written below a client: the write amplification.
type callCounter struct {
	*memory.Backend
	calls, rows atomic.Int64
}

func (c *callCounter) Read(ctx context.Context, table string, ks [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	c.calls.Add(1)
	return c.Backend.Read(ctx, table, ks, opts)
}

func (c *callCounter) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	c.calls.Add(1)
	c.rows.Add(int64(len(muts)))
	return c.Backend.Apply(ctx, table, muts)
}

func (c *callCounter) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	c.calls.Add(1)
	c.rows.Add(1)
	return c.Backend.CheckAndMutate(ctx, table, cond, m)
}

func orderCells(i int) []client.Cell {
	return []client.Cell{
		{Family: "d", Qualifier: "seller", Value: fmt.Appendf(nil, "s%03d", i%100)},
		{Family: "d", Qualifier: "buyer", Value: fmt.Appendf(nil, "b%04d", i%1000)},
		{Family: "d", Qualifier: "ext", Value: fmt.Appendf(nil, "e%d", i)},
		{Family: "d", Qualifier: "ts", Value: indextest.TS(uint64(i))},
		{Family: "d", Qualifier: "amount", Value: fmt.Appendf(nil, "%d", i%997)},
	}
}

// BenchmarkIndexPut: a Put of a new order with 0, 1 and 2 indexes (by_seller, by_buyer), with the
// store calls and rows written per Put: the write amplification.
func BenchmarkIndexPut(b *testing.B) {
	for _, n := range []int{0, 1, 2} {
		b.Run(fmt.Sprint("indexes=", n), func(b *testing.B) {
			ctx := context.Background()
			cc := &callCounter{Backend: memory.New()}
			c := client.New(cc)
			defer c.Close()
			idx := indextest.OrderIndexes(b)
			idx = []client.IndexConfig{idx[0], idx[1]}[:n]
			tbl, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(b, "hash:8"), Indexes: idx})
			if err != nil {
				b.Fatal(err)
			}
			cc.calls.Store(0)
			cc.rows.Store(0)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := tbl.Put(ctx, indextest.OrderKey(fmt.Sprintf("o%08d", i)), orderCells(i)...); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(cc.calls.Load())/float64(i), "calls/op")
			b.ReportMetric(float64(cc.rows.Load())/float64(i), "rowwrites/op")
		})
	}
}

// BenchmarkIndexQuery: 20 orders of one seller, newest first, by the index answering from covered
// columns, by the index reading main rows, and by a hand-written two-table application over the
// raw driver (an unsalted index table of [seller][ts desc][order] -> order key, then one batched
// read of the main rows, with no consistency check).
func BenchmarkIndexQuery(b *testing.B) {
	ctx := context.Background()
	mem := memory.New()
	c := client.New(mem)
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(b, "hash:8"), Indexes: indextest.OrderIndexes(b)[:1]})
	if err != nil {
		b.Fatal(err)
	}
	const orders = 10_000
	if err := mem.CreateTable(ctx, "hand_main", backends.TableOptions{Families: []string{"d"}}); err != nil {
		b.Fatal(err)
	}
	if err := mem.CreateTable(ctx, "hand_by_seller", backends.TableOptions{Families: []string{"d"}}); err != nil {
		b.Fatal(err)
	}
	muts := make([]client.Mutation, orders)
	var hmain, hidx []backends.Mutation
	for i := range muts {
		k := indextest.OrderKey(fmt.Sprintf("o%08d", i))
		muts[i] = client.Mutation{Key: k, Cells: orderCells(i)}
		hmain = append(hmain, backends.Mutation{Key: k, Cells: orderCells(i)})
		ik := keys.AppendText(nil, keys.KindBytes, fmt.Appendf(nil, "s%03d", i%100))
		ik = append(ik, indextest.TS(^uint64(i))...)
		hidx = append(hidx, backends.Mutation{Key: append(ik, k...), Cells: []backends.Cell{{Family: "d", Qualifier: "k", Value: k}}})
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
		b.Fatal(err, rowErrs)
	}
	if _, err := mem.Apply(ctx, "hand_main", hmain); err != nil {
		b.Fatal(err)
	}
	if _, err := mem.Apply(ctx, "hand_by_seller", hidx); err != nil {
		b.Fatal(err)
	}
	ix := indextest.Index(b, tbl, "by_seller")
	prefix, _ := ix.Prefix([]byte("s042"))
	run := func(b *testing.B, q func() int) {
		b.ReportAllocs()
		for b.Loop() {
			if n := q(); n != 20 {
				b.Fatalf("%d rows", n)
			}
		}
	}
	scan := func(opts ...client.ReadOption) func() int {
		return func() int {
			n := testkit.Count(b, ix.Scan(ctx, client.PrefixRange(prefix), append(opts, client.Limit(20))...))
			return n
		}
	}
	b.Run("covered", func(b *testing.B) { run(b, scan(client.Columns(client.Column{Family: "d", Qualifier: "amount"}))) })
	b.Run("rows", func(b *testing.B) { run(b, scan()) })
	b.Run("hand", func(b *testing.B) {
		hp := keys.AppendText(nil, keys.KindBytes, []byte("s042"))
		run(b, func() int {
			var mk [][]byte
			for row, err := range mem.Scan(ctx, "hand_by_seller", backends.Range{Start: hp, End: keys.PrefixEnd(hp)}, backends.ScanOptions{Limit: 20}) {
				if err != nil {
					b.Fatal(err)
				}
				mk = append(mk, row.Cells[0].Value)
			}
			rows, err := mem.Read(ctx, "hand_main", mk, backends.ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return len(rows)
		})
	})
}
