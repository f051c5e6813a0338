package client_test

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

const benchRows = 20_000

func benchInput() iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for i := range benchRows {
			m := client.Mutation{Key: fmt.Appendf(nil, "row%07d", i),
				Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte("value of the row")}}}
			if !yield(client.ImportRow{Mutation: m}, nil) {
				return
			}
		}
	}
}

// BenchmarkRebucketVsImport: rows/s of a rebucket (8 -> 32 buckets, fences of 1 ms) against a bulk
// import of the same rows, on the memory store, where the store costs least and brine's own work
// shows: each copied row is one CheckAndMutate, each imported one a share of a batch.
func BenchmarkRebucketVsImport(b *testing.B) {
	ctx := context.Background()
	b.Run("import", func(b *testing.B) {
		for b.Loop() {
			c := client.New(memory.New())
			tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(b, "hash:32")})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tbl.Import(ctx, benchInput(), client.ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			c.Close()
		}
		b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("rebucket", func(b *testing.B) {
		var spent time.Duration
		for b.Loop() {
			b.StopTimer()
			c := client.New(memory.New())
			tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(b, "hash:8")})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tbl.Import(ctx, benchInput(), client.ImportOptions{}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			began := time.Now()
			if err := tbl.Rebucket(ctx, testkit.Salter(b, "hash:32"), client.RebucketOptions{Fence: time.Millisecond, Grace: -1}); err != nil {
				b.Fatal(err)
			}
			spent += time.Since(began)
			c.Close()
		}
		b.ReportMetric(float64(benchRows*b.N)/spent.Seconds(), "rows/s")
	})
}
