//go:build integration

package hbase_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/proccpu"
	"github.com/brine-kv/brine/salting"
)

// The driver's own wire paths against gohbase's, on the running server, in one run (read the
// figures as ratios; the README's benchmark section says how to run them):
//   - BenchmarkApplyMulti: a batch of puts as the driver's hand-built Multi calls (Apply: one call per
//     region, cells in one cell block) against gohbase's SendBatch of one hrpc.Mutate per row.
//   - BenchmarkScanPaths: a whole-table read as the driver drives HBase's scanner protocol (Scan)
//     against gohbase's Scanner and ScannerV2.
// Each reports rows/s and the client's CPU per row (client-µs/row); with BRINE_HBASE_PID set to the
// server's pid, also the server's (server-µs/row).

const benchValueSize = 64

func benchBackend(b *testing.B) (*hbase.Backend, []int) {
	b.Helper()
	be, err := hbase.Open(b.Context(), hbase.Config{ZKQuorum: hbasetest.ZK(b)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close() })
	return be, serverPIDs(b)
}

// serverPIDs is the server's pid from BRINE_HBASE_PID (make hbase-up's), none when unset.
func serverPIDs(b *testing.B) []int {
	b.Helper()
	s := os.Getenv("BRINE_HBASE_PID")
	if s == "" {
		return nil
	}
	pid, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("BRINE_HBASE_PID=%q: %v", s, err)
	}
	return []int{pid}
}

// measureRows runs op (rows per call) in a b.Loop and reports rows/s and the CPU per row of this
// process and of the server's pids.
func measureRows(b *testing.B, pids []int, rows int, op func() error) {
	b.Helper()
	c0, err := proccpu.Self()
	if err != nil {
		b.Fatal(err)
	}
	s0, err := proccpu.Used(pids...)
	if err != nil {
		b.Fatal(err)
	}
	start, calls := time.Now(), 0
	for b.Loop() {
		calls++
		if err := op(); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	c1, _ := proccpu.Self()
	s1, _ := proccpu.Used(pids...)
	b.ReportMetric(float64(rows*calls)/el.Seconds(), "rows/s")
	b.ReportMetric(proccpu.PerRow(c1-c0, rows*calls), "client-µs/row")
	if len(pids) > 0 {
		b.ReportMetric(proccpu.PerRow(s1-s0, rows*calls), "server-µs/row")
	}
}

func benchTable(b *testing.B, be *hbase.Backend, name string) string {
	b.Helper()
	table := hbasetest.Table(name)
	splits := [][]byte{[]byte("4"), []byte("8"), []byte("c")}
	if err := be.CreateTable(b.Context(), table, backends.TableOptions{Families: []string{"d"}, SplitKeys: splits}); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.DeleteTable(context.Background(), table) })
	return table
}

// benchKey spreads row i of gen over the table's four regions.
func benchKey(gen, i int) []byte { return fmt.Appendf(nil, "%x/%08d/%06d", i%16, gen, i) }

func BenchmarkApplyMulti(b *testing.B) {
	be, pids := benchBackend(b)
	table := benchTable(b, be, "brine_bench_multi")
	value := make([]byte, benchValueSize)
	for _, n := range []int{1000, 10000} {
		gen := 0
		b.Run(fmt.Sprintf("rows=%d/multi", n), func(b *testing.B) {
			measureRows(b, pids, n, func() error {
				gen++
				muts := make([]backends.Mutation, n)
				for i := range muts {
					muts[i] = backends.Mutation{Key: benchKey(gen, i), Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: value}}}
				}
				rowErrs, err := be.Apply(b.Context(), table, muts)
				if err != nil || rowErrs != nil {
					return fmt.Errorf("Apply: %v, %v", rowErrs, err)
				}
				return nil
			})
		})
		b.Run(fmt.Sprintf("rows=%d/sendbatch", n), func(b *testing.B) {
			measureRows(b, pids, n, func() error {
				gen++
				calls := make([]hrpc.Call, n)
				for i := range calls {
					p, err := hrpc.NewPut(b.Context(), []byte(table), benchKey(gen, i), map[string]map[string][]byte{"d": {"v": value}})
					if err != nil {
						return err
					}
					calls[i] = p
				}
				res, ok := be.Client().SendBatch(b.Context(), calls)
				if !ok {
					for i, r := range res {
						if r.Error != nil {
							return fmt.Errorf("SendBatch row %d: %w", i, r.Error)
						}
					}
				}
				return nil
			})
		})
	}
}

func BenchmarkScanPaths(b *testing.B) {
	const rows = 20000
	be, pids := benchBackend(b)
	table := benchTable(b, be, "brine_bench_scan")
	value := make([]byte, benchValueSize)
	muts := make([]backends.Mutation, rows)
	for i := range muts {
		muts[i] = backends.Mutation{Key: benchKey(0, i), Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: value}}}
	}
	if rowErrs, err := be.Apply(b.Context(), table, muts); err != nil || rowErrs != nil {
		b.Fatalf("Apply: %v, %v", rowErrs, err)
	}
	check := func(n int) error {
		if n != rows {
			return fmt.Errorf("read %d rows, want %d", n, rows)
		}
		return nil
	}
	newScan := func() (*hrpc.Scan, error) {
		return hrpc.NewScanStr(b.Context(), table, hrpc.NumberOfRows(256))
	}
	b.Run("driver", func(b *testing.B) {
		measureRows(b, pids, rows, func() error {
			n := 0
			for _, err := range be.Scan(b.Context(), table, backends.Range{}, backends.ScanOptions{BatchSize: 256}) {
				if err != nil {
					return err
				}
				n++
			}
			return check(n)
		})
	})
	b.Run("gohbase-scan", func(b *testing.B) {
		measureRows(b, pids, rows, func() error {
			sc, err := newScan()
			if err != nil {
				return err
			}
			s := be.Client().Scan(sc)
			defer s.Close()
			n := 0
			for {
				_, err := s.Next()
				if errors.Is(err, io.EOF) {
					return check(n)
				}
				if err != nil {
					return err
				}
				n++
			}
		})
	})
	b.Run("gohbase-scanv2", func(b *testing.B) {
		measureRows(b, pids, rows, func() error {
			sc, err := newScan()
			if err != nil {
				return err
			}
			s := be.Client().ScanV2(sc)
			defer s.Close()
			n := 0
			for {
				res, err := s.Next()
				if errors.Is(err, io.EOF) {
					return check(n)
				}
				if err != nil {
					return err
				}
				for _, r := range res.Results {
					if !r.Partial {
						n++
					}
				}
			}
		})
	})
}

// BenchmarkGetPaths prices a point read three ways on one table: gohbase's own Get, the driver's
// Read of one key, and a salted client Table.Get (a second table, hash:4, the same rows), one call
// at a time: the µs/op differences are what the driver and the client add to a get's latency.
func BenchmarkGetPaths(b *testing.B) {
	const rows = 4096
	be, pids := benchBackend(b)
	ctx := b.Context()
	table := benchTable(b, be, "brine_bench_get")
	value := make([]byte, benchValueSize)
	keys := make([][]byte, rows)
	muts := make([]backends.Mutation, rows)
	for i := range muts {
		keys[i] = benchKey(0, i)
		muts[i] = backends.Mutation{Key: keys[i], Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: value}}}
	}
	if rowErrs, err := be.Apply(ctx, table, muts); err != nil || rowErrs != nil {
		b.Fatalf("Apply: %v, %v", rowErrs, err)
	}
	s, err := salting.ParseSpec("hash:4")
	if err != nil {
		b.Fatal(err)
	}
	c := client.New(be)
	salted, err := c.CreateTable(ctx, hbasetest.Table("brine_bench_get_salted"), client.TableConfig{Salter: s, Families: []string{"d"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.DeleteTable(context.Background(), salted.Name()) })
	cmuts := make([]client.Mutation, rows)
	for i := range cmuts {
		cmuts[i] = client.Mutation{Key: keys[i], Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: value}}}
	}
	if rowErrs, err := salted.Apply(ctx, cmuts); err != nil || rowErrs != nil {
		b.Fatalf("Apply: %v, %v", rowErrs, err)
	}
	var i int
	next := func() []byte { i++; return keys[i%rows] }
	b.Run("gohbase", func(b *testing.B) {
		measureRows(b, pids, 1, func() error {
			g, err := hrpc.NewGet(ctx, []byte(table), next())
			if err != nil {
				return err
			}
			res, err := be.Client().Get(g)
			if err == nil && len(res.Cells) == 0 {
				err = errors.New("no row")
			}
			return err
		})
	})
	b.Run("driver", func(b *testing.B) {
		measureRows(b, pids, 1, func() error {
			rs, err := be.Read(ctx, table, [][]byte{next()}, backends.ReadOptions{})
			if err == nil && len(rs[0].Cells) == 0 {
				err = errors.New("no row")
			}
			return err
		})
	})
	b.Run("client-salted", func(b *testing.B) {
		measureRows(b, pids, 1, func() error {
			_, err := salted.Get(ctx, next())
			return err
		})
	})
}
