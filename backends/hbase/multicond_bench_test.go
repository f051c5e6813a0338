//go:build integration

package hbase_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// BenchmarkCheckAndMutateBatch compares n put-if-absent rows sent as one CheckAndMutateBatch with the
// same rows sent as n sequential CheckAndMutate calls, and with the same rows as one plain Apply, on
// the running server; every row applies. Read the rows/s of the sub-benchmarks as ratios: batch over
// sequential is what batching gains, batch over apply what a condition costs the server (each
// conditional row is a row lock, a read and a WAL sync of its own), the ceiling of every protocol
// that writes each row by compare-and-set.
func BenchmarkCheckAndMutateBatch(b *testing.B) {
	ctx := b.Context()
	be, err := hbase.Open(ctx, hbase.Config{ZKQuorum: hbasetest.ZK(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	table := hbasetest.Table("brine_bench_cam")
	if err := be.CreateTable(ctx, table, backends.TableOptions{Families: []string{"d"}}); err != nil {
		b.Fatal(err)
	}
	defer be.DeleteTable(context.Background(), table)
	for _, n := range []int{100, 1000} {
		batch := func(gen int) []backends.CondMutation {
			ms := make([]backends.CondMutation, n)
			for i := range ms {
				ms[i] = backends.CondMutation{Cond: cond("d", "q", ""), Mut: put(fmt.Appendf(nil, "%d/%06d/%05d", n, gen, i), cell("d", "q", "v"))}
			}
			return ms
		}
		gen := 0 // every batch writes fresh rows, across -count runs too
		b.Run(fmt.Sprintf("rows=%d/batch", n), func(b *testing.B) {
			start, batches := time.Now(), 0
			for b.Loop() {
				gen++
				batches++
				applied, rowErrs, err := be.CheckAndMutateBatch(b.Context(), table, batch(gen))
				if err != nil || rowErrs != nil || slices.Contains(applied, false) {
					b.Fatalf("CheckAndMutateBatch: %v, %v", rowErrs, err)
				}
			}
			b.ReportMetric(float64(n*batches)/time.Since(start).Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("rows=%d/apply", n), func(b *testing.B) {
			start, batches := time.Now(), 0
			for b.Loop() {
				gen++
				batches++
				cms := batch(gen)
				muts := make([]backends.Mutation, len(cms))
				for i, cm := range cms {
					muts[i] = cm.Mut
				}
				if rowErrs, err := be.Apply(b.Context(), table, muts); err != nil || rowErrs != nil {
					b.Fatalf("Apply: %v, %v", rowErrs, err)
				}
			}
			b.ReportMetric(float64(n*batches)/time.Since(start).Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("rows=%d/sequential", n), func(b *testing.B) {
			start, batches := time.Now(), 0
			for b.Loop() {
				gen++
				batches++
				for _, cm := range batch(gen) {
					applied, err := be.CheckAndMutate(b.Context(), table, cm.Cond, cm.Mut)
					if err != nil || !applied {
						b.Fatalf("CheckAndMutate: %v, %v", applied, err)
					}
				}
			}
			b.ReportMetric(float64(n*batches)/time.Since(start).Seconds(), "rows/s")
		})
	}
}
