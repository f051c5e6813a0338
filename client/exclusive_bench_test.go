package client_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// BenchmarkExclusiveImport: rows/s of an exclusive Import into a fresh table with two indexes
// (by_seller, by_buyer), its Release included (the tables' creation and the fence's fixed wait
// left out), against a plain Import of the same orders into a fresh table, side by side on the
// embedded store: issue 29's goal is the ratio of the two (brine bench --sections index gives it on
// any store).
func BenchmarkExclusiveImport(b *testing.B) {
	const n = 50_000
	ctx := context.Background()
	rows := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			m := client.Mutation{Key: indextest.OrderKey(fmt.Sprintf("o%08d", i)), Cells: orderCells(i)}
			if !yield(client.ImportRow{Mutation: m}, nil) {
				return
			}
		}
	}
	for _, indexed := range []bool{false, true} {
		b.Run(fmt.Sprint("indexed=", indexed), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				st, err := local.Open(context.Background(), local.Config{Path: filepath.Join(b.TempDir(), "db")})
				if err != nil {
					b.Fatal(err)
				}
				c := client.New(st, client.WithRouteRefresh(exclusiveRefresh), client.WithLogger(slog.New(slog.DiscardHandler)))
				cfg := client.TableConfig{Salter: testkit.Salter(b, "hash:8")}
				if !indexed {
					t, err := c.CreateTable(ctx, "orders", cfg)
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if _, err := t.Import(ctx, rows, client.ImportOptions{}); err != nil {
						b.Fatal(err)
					}
				} else {
					cfg.Indexes = indextest.OrderIndexes(b)[:2]
					it, err := c.CreateTable(ctx, "orders", cfg)
					if err != nil {
						b.Fatal(err)
					}
					x, err := it.Exclusive(ctx, client.ExclusiveOptions{})
					if err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if _, err := x.Import(ctx, rows, client.ImportOptions{}); err != nil {
						b.Fatal(err)
					}
					if err := x.Release(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				c.Close()
				st.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
