//go:build integration

package bench

import (
	"context"
	"testing"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// BenchmarkHBase is the Go-benchmark view of the same comparisons, on small tables:
//
//	BRINE_HBASE_ZK=127.0.0.1:2181 go test -tags integration -run '^$' -bench HBase ./internal/bench/
func BenchmarkHBase(b *testing.B) {
	st := openHBase(b)
	cfg := DefaultConfig()
	cfg.Rows = 5000
	r := newRunner(st, cfg)
	ctx := context.Background()
	b.Cleanup(func() { r.cleanup(ctx) })
	must := func(err error) {
		b.Helper()
		if err != nil {
			b.Fatal(err)
		}
	}
	s, err := salting.ParseSpec("hash:8")
	must(err)
	none, err := salting.ParseSpec("none")
	must(err)
	plain, err := r.createTable(ctx, "raw", none, s.SplitKeys(0))
	must(err)
	salted, err := r.createTable(ctx, "brine", s, nil)
	must(err)
	_, err = r.rawWrite(ctx, plain.Name(), cfg.Rows, 256)
	must(err)
	_, err = r.importRows(ctx, salted, cfg.Rows)
	must(err)

	b.Run("get/raw", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := st.Raw.Get(ctx, plain.Name(), Key(i%cfg.Rows)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get/brine", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := salted.Get(ctx, Key(i%cfg.Rows)); err != nil {
				b.Fatal(err)
			}
		}
	})
	scan := func(b *testing.B, keys func() int64) {
		var rows int64
		for b.Loop() {
			rows += keys()
		}
		b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("scan/raw", func(b *testing.B) {
		scan(b, func() int64 {
			run, err := timeScan(st.Raw.Scan(ctx, plain.Name(), nil, nil, cfg.ScanBatch))
			if err != nil {
				b.Fatal(err)
			}
			return run.rows
		})
	})
	b.Run("scan/brine-8-buckets", func(b *testing.B) {
		scan(b, func() int64 {
			run, err := timeScan(brineKeys(ctx, salted, client.Range{}, client.BatchSize(cfg.ScanBatch)))
			if err != nil {
				b.Fatal(err)
			}
			return run.rows
		})
	})
	b.Run("import/brine-1000-rows", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.importRows(ctx, salted, 1000); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(1000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
