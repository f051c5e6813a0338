package periods_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

// BenchmarkScanDayOfYear scans one day of a year of rows (one every 15 minutes from each of 4 hosts,
// keys [ts][host], 140,160 rows) from a year of monthly tables and from one table with the same
// salting: the period table reads the buckets of one month's table, the single table the same
// buckets of a table twelve times larger. `go test -run '^$' -bench ScanDayOfYear ./periods/`.
func BenchmarkScanDayOfYear(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) backends.Backend
	}{
		{"memory", func(*testing.B) backends.Backend { return memory.New() }},
		{"local", func(b *testing.B) backends.Backend {
			s, err := local.Open(context.Background(), local.Config{Path: filepath.Join(b.TempDir(), "db"), NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	schema := testkit.Schema(b, "ts:int64,host")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var muts []client.Mutation
	for ts := start; ts.Year() == 2026; ts = ts.Add(15 * time.Minute) {
		for _, h := range []string{"h1", "h2", "h3", "h4"} {
			k, err := schema.Encode(ts.UnixMilli(), h)
			if err != nil {
				b.Fatal(err)
			}
			muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{testkit.Cell("q", "v")}})
		}
	}
	day := time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)
	from, _ := schema.Encode(day.UnixMilli(), "")
	to, _ := schema.Encode(day.AddDate(0, 0, 1).UnixMilli(), "")
	r := client.RowRange(from, to)
	const wantRows = 96 * 4

	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			ctx := b.Context()
			c := client.New(st.open(b))
			defer c.Close()
			salter := testkit.Salter(b, "hash:8")
			month, _ := periods.ParseInterval("month")
			p, err := periods.Create(ctx, c, "periods", periods.Config{Interval: month, Table: client.TableConfig{Salter: salter}})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.CreateAhead(ctx, start, 11, nil); err != nil {
				b.Fatal(err)
			}
			one, err := c.CreateTable(ctx, "one", client.TableConfig{Salter: salter})
			if err != nil {
				b.Fatal(err)
			}
			for _, apply := range []func() ([]error, error){
				func() ([]error, error) { return p.Apply(ctx, muts) },
				func() ([]error, error) { return one.Apply(ctx, muts) },
			} {
				if rowErrs, err := apply(); err != nil || rowErrs != nil {
					b.Fatal(err, rowErrs)
				}
			}
			for _, tc := range []struct {
				name string
				scan func() int
			}{
				{"monthly-tables", func() int { return testkit.Count(b, p.Scan(ctx, r)) }},
				{"one-table", func() int { return testkit.Count(b, one.Scan(ctx, r)) }},
			} {
				b.Run(tc.name, func(b *testing.B) {
					for b.Loop() {
						if n := tc.scan(); n != wantRows {
							b.Fatalf("%d rows, want %d", n, wantRows)
						}
					}
				})
			}
		})
	}
}
