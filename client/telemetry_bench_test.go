//go:build unix

package client_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

const benchScanRows = 50_000

// scanTables returns the same salted table (hash:16, benchScanRows rows) through a client without
// telemetry and through one exporting spans to a no-op exporter (batched, as in production) and
// metrics to a reader that is never collected; the stop function shuts the providers down.
func scanTables(b *testing.B) (off, on *client.Table, stop func()) {
	ctx := b.Context()
	store := memory.New()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	plain := client.New(store)
	traced := client.New(store, client.WithTracerProvider(tp), client.WithMeterProvider(mp))
	off, err := plain.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(b, "hash:16")})
	if err != nil {
		b.Fatal(err)
	}
	muts := make([]client.Mutation, benchScanRows)
	for i := range muts {
		muts[i] = client.Mutation{Key: binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+i*10)), Cells: []client.Cell{testkit.Cell("q", "value-0123456789")}}
	}
	if rowErrs, err := off.Apply(ctx, muts); err != nil || rowErrs != nil {
		b.Fatal(err, rowErrs)
	}
	if on, err = traced.OpenTable(ctx, "t", nil); err != nil {
		b.Fatal(err)
	}
	return off, on, func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
		plain.Close()
	}
}

func drain(b *testing.B, t *client.Table) {
	if n := testkit.Count(b, t.Scan(b.Context(), client.Range{})); n != benchScanRows {
		b.Fatalf("scanned %d rows, want %d", n, benchScanRows)
	}
}

// BenchmarkScanTelemetry prices telemetry on a full salted scan (16 buckets, 50,000 rows) of the
// memory store, where a scan costs least and the overhead weighs most. "off" and "noop" report
// -benchmem figures per scan (divide by 50,000 for per row); "ratio" runs both scans in each
// iteration, alternating which goes first, and reports the medians of noop's CPU and wall time over
// off's: the machine's noise (other processes, GC) falls on both, and the median drops the pairs it
// hit unevenly.
func BenchmarkScanTelemetry(b *testing.B) {
	off, on, stop := scanTables(b)
	defer stop()
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drain(b, off)
		}
	})
	b.Run("noop", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			drain(b, on)
		}
	})
	b.Run("ratio", func(b *testing.B) {
		var cpu, wall []float64
		for i := 0; b.Loop(); i++ {
			first, second := off, on
			if i%2 == 1 {
				first, second = on, off
			}
			// A collection before each timed scan keeps one scan's garbage from being paid for by the next.
			runtime.GC()
			c1, w1 := measure(b, first)
			runtime.GC()
			c2, w2 := measure(b, second)
			rc, rw := float64(c2)/float64(c1), float64(w2)/float64(w1)
			if first == on {
				rc, rw = 1/rc, 1/rw
			}
			cpu, wall = append(cpu, rc), append(wall, rw)
		}
		b.ReportMetric(median(cpu), "cpu-noop/off")
		b.ReportMetric(median(wall), "wall-noop/off")
	})
}

// measure drains a scan of t and returns the process's CPU time and the wall time it took. CPU time is
// what other processes on a shared machine disturb least.
func measure(b *testing.B, t *client.Table) (cpu, wall time.Duration) {
	var r0, r1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	start := time.Now()
	drain(b, t)
	wall = time.Since(start)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	used := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return used(r1) - used(r0), wall
}

func median(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}
