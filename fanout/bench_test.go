package fanout

import (
	"bytes"
	"context"
	"fmt"
	"iter"
	"runtime"
	"strconv"
	"testing"
)

// benchRow is a small row like the client's: a []byte key and a payload.
type benchRow struct {
	key []byte
	val uint64
}

func benchCmp(a, b benchRow) int { return bytes.Compare(a.key, b.key) }

const benchRows = 1 << 20

// benchData returns benchRows rows with sorted keys "row-000000000042", spread over b streams by a
// hash of the row number (as salting does), and the same rows as one sorted slice.
func benchData(b int) (streams [][]benchRow, all []benchRow) {
	keys := make([]byte, 0, benchRows*16)
	all = make([]benchRow, benchRows)
	streams = make([][]benchRow, b)
	for i := range all {
		start := len(keys)
		keys = append(keys, "row-000000000000"...)
		digits := strconv.AppendUint(nil, uint64(i), 10)
		copy(keys[len(keys)-len(digits):], digits)
		all[i] = benchRow{key: keys[start:len(keys):len(keys)], val: uint64(i)}
		s := int(uint32(i)*2654435761>>16) % b
		streams[s] = append(streams[s], all[i])
	}
	return streams, all
}

func sliceSeq(rows []benchRow) iter.Seq2[benchRow, error] {
	return func(yield func(benchRow, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// benchMerge drains merged(ctx) per op and reports per-row cost.
func benchMerge(b *testing.B, merged func() iter.Seq2[benchRow, error]) {
	b.ReportAllocs()
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	mallocs := ms.Mallocs
	ops := 0
	var sink uint64
	for b.Loop() {
		n := 0
		for r, err := range merged() {
			if err != nil {
				b.Fatal(err)
			}
			sink += r.val
			n++
		}
		if n != benchRows {
			b.Fatalf("%d rows, want %d", n, benchRows)
		}
		ops++
	}
	elapsed := b.Elapsed()
	runtime.ReadMemStats(&ms)
	rows := float64(ops) * benchRows
	b.ReportMetric(float64(elapsed.Nanoseconds())/rows, "ns/row")
	b.ReportMetric(rows/elapsed.Seconds()/1e6, "Mrows/s")
	b.ReportMetric(float64(ms.Mallocs-mallocs)/rows, "allocs/row")
	_ = sink
}

var benchWidths = []int{1, 4, 16, 64, 256}

// BenchmarkBaseline iterates the same rows from one sorted slice: the floor every merge is held to.
func BenchmarkBaseline(b *testing.B) {
	_, all := benchData(1)
	benchMerge(b, func() iter.Seq2[benchRow, error] { return sliceSeq(all) })
}

func BenchmarkMergeSequential(b *testing.B) {
	for _, w := range benchWidths {
		b.Run(fmt.Sprintf("B=%d", w), func(b *testing.B) {
			streams, _ := benchData(w)
			seqs := make([]iter.Seq2[benchRow, error], w)
			for i := range streams {
				seqs[i] = sliceSeq(streams[i])
			}
			benchMerge(b, func() iter.Seq2[benchRow, error] {
				return MergeSequential(context.Background(), seqs, benchCmp, Options{})
			})
		})
	}
}

// BenchmarkMerge uses the client's defaults: 16 streams pulled at once, 256 rows of prefetch.
func BenchmarkMerge(b *testing.B) {
	for _, w := range benchWidths {
		b.Run(fmt.Sprintf("B=%d", w), func(b *testing.B) {
			streams, _ := benchData(w)
			seqs := make([]iter.Seq2[benchRow, error], w)
			for i := range streams {
				seqs[i] = sliceSeq(streams[i])
			}
			benchMerge(b, func() iter.Seq2[benchRow, error] {
				return Merge(context.Background(), seqs, benchCmp, Options{Concurrency: 16, Prefetch: 256})
			})
		})
	}
}
