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
	"github.com/brine-kv/brine/internal/proccpu"
)

// BenchmarkCheckAndMutateBatch compares n put-if-absent rows sent as one CheckAndMutateBatch with the
// same rows sent as n sequential CheckAndMutate calls, sent Deferred, sent as one plain Apply, and read
// back by one Read, on the running server; every row applies. Read the rows/s of the sub-benchmarks
// as ratios: batch over sequential is what batching gains, batch over apply what a condition costs
// the server (each conditional row is a row lock and a read of its own), the ceiling of every
// protocol that writes each row by compare-and-set. With BRINE_HBASE_PID set to the server's pid
// (make hbase-up writes it to .hbase/run/hbase.pid), each also reports the CPU the server spent per
// row (server-µs/row), which is what bounds those protocols when the server is busy.
func BenchmarkCheckAndMutateBatch(b *testing.B) {
	ctx := b.Context()
	be, err := hbase.Open(ctx, hbase.Config{ZKQuorum: hbasetest.ZK(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	pids := serverPIDs(b)
	table := hbasetest.Table("brine_bench_cam")
	if err := be.CreateTable(ctx, table, backends.TableOptions{Families: []string{"d"}}); err != nil {
		b.Fatal(err)
	}
	defer be.DeleteTable(context.Background(), table)
	for _, n := range []int{100, 1000} {
		batch := func(gen int, deferred bool) []backends.CondMutation {
			ms := make([]backends.CondMutation, n)
			for i := range ms {
				ms[i] = backends.CondMutation{Cond: cond("d", "q", ""), Mut: put(fmt.Appendf(nil, "%d/%06d/%05d", n, gen, i), cell("d", "q", "v")), Deferred: deferred}
			}
			return ms
		}
		gen := 0 // every batch writes fresh rows, across -count runs too
		// measure runs one call of n rows per iteration, on rows of its own.
		measure := func(name string, call func(gen int) error) {
			b.Run(fmt.Sprintf("rows=%d/%s", n, name), func(b *testing.B) {
				cpu0, err := proccpu.Used(pids...)
				if err != nil {
					b.Fatal(err)
				}
				start, batches := time.Now(), 0
				for b.Loop() {
					gen++
					batches++
					if err := call(gen); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*batches)/time.Since(start).Seconds(), "rows/s")
				if len(pids) > 0 {
					cpu1, err := proccpu.Used(pids...)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(proccpu.PerRow(cpu1-cpu0, n*batches), "server-µs/row")
				}
			})
		}
		condBatch := func(deferred bool) func(gen int) error {
			return func(gen int) error {
				applied, rowErrs, err := be.CheckAndMutateBatch(b.Context(), table, batch(gen, deferred))
				if err != nil || rowErrs != nil || slices.Contains(applied, false) {
					return fmt.Errorf("CheckAndMutateBatch: %v, %v", rowErrs, err)
				}
				return nil
			}
		}
		measure("batch", condBatch(false))
		measure("deferred", condBatch(true))
		measure("apply", func(gen int) error {
			cms := batch(gen, false)
			muts := make([]backends.Mutation, len(cms))
			for i, cm := range cms {
				muts[i] = cm.Mut
			}
			if rowErrs, err := be.Apply(b.Context(), table, muts); err != nil || rowErrs != nil {
				return fmt.Errorf("Apply: %v, %v", rowErrs, err)
			}
			return nil
		})
		measure("sequential", func(gen int) error {
			for _, cm := range batch(gen, false) {
				applied, err := be.CheckAndMutate(b.Context(), table, cm.Cond, cm.Mut)
				if err != nil || !applied {
					return fmt.Errorf("CheckAndMutate: %v, %v", applied, err)
				}
			}
			return nil
		})
		// The rows the batches above wrote, read back by one Read per batch: step 1 of a protocol
		// that plans from the row.
		written := gen
		measure("read", func(gen int) error {
			cms := batch(1+gen%written, false)
			keys := make([][]byte, len(cms))
			for i, cm := range cms {
				keys[i] = cm.Mut.Key
			}
			rows, err := be.Read(b.Context(), table, keys, backends.ReadOptions{})
			if err != nil {
				return fmt.Errorf("Read: %w", err)
			}
			for i, r := range rows {
				if len(r.Cells) == 0 {
					return fmt.Errorf("Read: row %q missing", keys[i])
				}
			}
			return nil
		})
	}
}
