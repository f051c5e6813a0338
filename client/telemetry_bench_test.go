package client_test

import (
	"context"
	"encoding/binary"
	"runtime"
	"slices"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
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
	off, err := plain.CreateTable(ctx, "t", client.TableConfig{Salter: mustSalter(b, "hash:16")})
	if err != nil {
		b.Fatal(err)
	}
	muts := make([]client.Mutation, benchScanRows)
	for i := range muts {
		muts[i] = client.Mutation{Key: binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+i*10)), Cells: []client.Cell{cell("value-0123456789")}}
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
	n := 0
	for _, err := range t.Scan(b.Context(), client.Range{}) {
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	if n != benchScanRows {
		b.Fatalf("scanned %d rows, want %d", n, benchScanRows)
	}
}

// BenchmarkScanTelemetry prices telemetry on a full salted scan (16 buckets, 50,000 rows) of the
// memory store, where a scan costs least and the overhead weighs most. "off" and "noop" report
// -benchmem figures per scan (divide by 50,000 for per row); "ratio" runs both scans in each
// iteration, alternating which goes first, and reports the median of noop's time over off's: the
// machine's noise (other processes, GC) falls on both, and the median drops the pairs it hit unevenly.
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
		var ratios []float64
		for i := 0; b.Loop(); i++ {
			first, second := off, on
			if i%2 == 1 {
				first, second = on, off
			}
			// A collection before each timed scan keeps one scan's garbage from being paid for by the next.
			runtime.GC()
			start := time.Now()
			drain(b, first)
			d1 := time.Since(start)
			runtime.GC()
			start = time.Now()
			drain(b, second)
			r := float64(time.Since(start)) / float64(d1)
			if first == on {
				r = 1 / r
			}
			ratios = append(ratios, r)
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "noop/off")
	})
}
