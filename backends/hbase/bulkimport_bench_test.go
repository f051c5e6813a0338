//go:build integration

package hbase

import (
	"fmt"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// BenchmarkBulkImport writes the same 100,000 rows (one 100-byte cell each, keys spread over 16
// regions) with BulkImport and with Apply in batches of 1,000 rows, each into a fresh table, and
// reports rows/s of each: run with -benchtime=1x.
func BenchmarkBulkImport(b *testing.B) {
	be, err := Open(b.Context(), Config{ZKQuorum: hbasetest.ZK(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	const n = 100_000
	rows := make([]backends.Mutation, n)
	for i := range rows {
		rows[i] = backends.Mutation{
			Key:   fmt.Appendf(nil, "%x/%08d", i%16, i),
			Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: make([]byte, 100), Timestamp: 1_700_000_000_000}},
		}
	}
	fresh := func() string {
		table := hbasetest.Table("brine_bulkbench")
		var splits [][]byte
		for _, s := range "123456789abcdef" {
			splits = append(splits, []byte(string(s)))
		}
		if err := be.CreateTable(b.Context(), table, backends.TableOptions{Families: []string{"d"}, SplitKeys: splits}); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = be.DeleteTable(b.Context(), table) })
		return table
	}
	b.Run("bulk", func(b *testing.B) {
		for b.Loop() {
			table := fresh()
			start := time.Now()
			if _, err := be.BulkImport(b.Context(), table, seqOf(rows), backends.BulkOptions{Staging: hbasetest.Staging(b)}); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(n/time.Since(start).Seconds(), "rows/s")
		}
	})
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			table := fresh()
			start := time.Now()
			for i := 0; i < n; i += 1000 {
				rowErrs, err := be.Apply(b.Context(), table, rows[i:i+1000])
				if err != nil || rowErrs != nil {
					b.Fatal(err, rowErrs)
				}
			}
			b.ReportMetric(n/time.Since(start).Seconds(), "rows/s")
		}
	})
}
