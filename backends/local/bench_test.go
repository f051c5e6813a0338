package local_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/internal/testkit"
)

// The load benchmarks mimic the README quickstart: monotonic 8-byte timestamps salted into 16
// buckets by a 1-byte prefix, one small cell per row, written by parallel workers in batches of
// 1000 rows of one bucket each (as the client's importer groups them).
//
//	go test -run '^$' -bench 'Load|Scan' -benchtime 1x ./backends/local/

const (
	benchRows    = 1_000_000
	benchBatch   = 1000
	benchBuckets = 16
)

func benchKey(i int) []byte {
	// A mixing function standing in for the salter's hash: spreads consecutive i over the buckets.
	h := uint32(i) * 0x9E3779B1
	h ^= h >> 15
	k := make([]byte, 9)
	k[0] = byte(h % benchBuckets)
	binary.BigEndian.PutUint64(k[1:], uint64(1_767_225_600_000+int64(i)*10))
	return k
}

// load writes rows 0..n-1 with the given number of writers; each takes a chunk of 16 batches' worth
// of rows, groups it by bucket and applies one batch per bucket.
func load(tb testing.TB, s backends.Backend, table string, n, writers int) {
	ctx := context.Background()
	var next atomic.Int64
	chunk := benchBatch * benchBuckets
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			groups := make([][]backends.Mutation, benchBuckets)
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					k := benchKey(i)
					groups[k[0]] = append(groups[k[0]], backends.Mutation{Key: k, Cells: []backends.Cell{{
						Family: "d", Qualifier: "v", Value: strconv.AppendFloat(nil, 20+float64(i%1000)/100, 'f', 2, 64),
						Timestamp: 1_767_225_600_000 + int64(i)*10,
					}}})
				}
				for g, muts := range groups {
					for len(muts) > 0 {
						batch := muts[:min(benchBatch, len(muts))]
						muts = muts[len(batch):]
						rowErrs, err := s.Apply(ctx, table, batch)
						if err != nil || rowErrs != nil {
							tb.Errorf("Apply: %v %v", rowErrs, err)
							return
						}
					}
					groups[g] = groups[g][:0]
				}
			}
		})
	}
	wg.Wait()
}

func openBench(tb testing.TB, cfg local.Config) *local.Backend {
	cfg.Path = filepath.Join(tb.TempDir(), "bench.db")
	s, err := local.Open(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if err := s.CreateTable(context.Background(), "t", backends.TableOptions{Families: []string{"d"}}); err != nil {
		tb.Fatal(err)
	}
	return s
}

func BenchmarkLoad(b *testing.B) {
	for _, writers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("nosync/writers=%d", writers), func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				s := openBench(b, local.Config{NoSync: true})
				b.StartTimer()
				start := time.Now()
				load(b, s, "t", benchRows, writers)
				total += time.Since(start)
				if fi, err := os.Stat(s.Path()); err == nil {
					b.ReportMetric(float64(fi.Size())/benchRows, "file-bytes/row")
				}
			}
			b.ReportMetric(float64(benchRows*b.N)/total.Seconds(), "rows/s")
		})
	}
	// Durable: one fsync per commit (group commit shares it among concurrent writers). Fewer rows, as
	// the disk sets the pace.
	for _, writers := range []int{1, 4} {
		b.Run(fmt.Sprintf("durable/writers=%d", writers), func(b *testing.B) {
			const n = 200_000
			var total time.Duration
			for b.Loop() {
				b.StopTimer()
				s := openBench(b, local.Config{})
				b.StartTimer()
				start := time.Now()
				load(b, s, "t", n, writers)
				total += time.Since(start)
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "rows/s")
		})
	}
}

func BenchmarkScan(b *testing.B) {
	s := openBench(b, local.Config{NoSync: true})
	load(b, s, "t", benchRows, 2)
	ctx := context.Background()
	scan := func(b *testing.B, r backends.Range, reverse bool) int {
		n := testkit.Count(b, s.Scan(ctx, "t", r, backends.ScanOptions{Reverse: reverse}))
		return n
	}
	for _, reverse := range []bool{false, true} {
		b.Run(fmt.Sprintf("full/reverse=%v", reverse), func(b *testing.B) {
			rows := 0
			for b.Loop() {
				if rows = scan(b, backends.Range{}, reverse); rows != benchRows {
					b.Fatalf("%d rows", rows)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
	// The client's fan-out: one scan per bucket, in parallel.
	b.Run("buckets-parallel", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			var total atomic.Int64
			for bk := range benchBuckets {
				wg.Go(func() {
					r := backends.Range{Start: []byte{byte(bk)}}
					if bk+1 < benchBuckets {
						r.End = []byte{byte(bk + 1)}
					}
					total.Add(int64(scan(b, r, false)))
				})
			}
			wg.Wait()
			if total.Load() != benchRows {
				b.Fatalf("%d rows", total.Load())
			}
		}
		b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("limit-10", func(b *testing.B) {
		for b.Loop() {
			n := testkit.Count(b, s.Scan(ctx, "t", backends.Range{Start: []byte{7}}, backends.ScanOptions{Limit: 10}))
			if n != 10 {
				b.Fatal(n)
			}
		}
	})
	b.Run("read-100-keys", func(b *testing.B) {
		keys := make([][]byte, 100)
		for i := range keys {
			keys[i] = benchKey(i * 9973)
		}
		slices.SortFunc(keys, bytes.Compare)
		for b.Loop() {
			if _, err := s.Read(ctx, "t", keys, backends.ReadOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkApply measures one 1000-row Apply into a table that grows as the benchmark runs.
func BenchmarkApply(b *testing.B) {
	s := openBench(b, local.Config{NoSync: true})
	ctx := context.Background()
	i := 0
	for b.Loop() {
		muts := make([]backends.Mutation, benchBatch)
		for j := range muts {
			k := benchKey(i)
			k[0] = 0 // one bucket, as the importer sends
			muts[j] = backends.Mutation{Key: k, Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: []byte("21.50"), Timestamp: 1}}}
			i++
		}
		testkit.Apply(b, ctx, s, "t", muts...)
	}
	b.ReportMetric(float64(benchBatch*b.N)/b.Elapsed().Seconds(), "rows/s")
}
