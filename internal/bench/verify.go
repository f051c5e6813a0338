package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/salting"
)

// The verify section's two tables hold the same rows under these specs.
const (
	verifyA = "hash:8"
	verifyB = "hash:4"
)

// VerifyResult is compare.Tables over two equal tables against scanning both at once, which is what
// a comparison cannot do better than (medians over the repeats).
type VerifyResult struct {
	Rows          int     `json:"rows_per_table"`
	A             string  `json:"a"`
	B             string  `json:"b"`
	VerifyMs      float64 `json:"verify_ms"`
	ScanBothMs    float64 `json:"scan_both_ms"`
	VerifyOverMin float64 `json:"verify_over_scan_both"`
}

// verify loads BulkRows rows into a verifyA and a verifyB table, stamped alike so that they are equal,
// and times, per repeat, compare.Tables over them and a full scan of both at once, alternating which
// goes first.
func (r *runner) verify(ctx context.Context) error {
	n := r.cfg.bulkRows()
	r.log.Info("bench: verify vs scanning both tables", "rows", n)
	stamp := time.Now().UnixMilli()
	tables := make([]*client.Table, 2)
	for i, spec := range []string{verifyA, verifyB} {
		s, err := salting.ParseSpec(spec)
		if err != nil {
			return err
		}
		if tables[i], err = r.createIn(ctx, r.client, "verify"+strconv.Itoa(i), s); err != nil {
			return err
		}
		if _, err := r.importN(ctx, tables[i], n, func(i int) client.Mutation {
			return client.Mutation{Key: Key(i), Cells: []client.Cell{{Family: family, Qualifier: qualifier, Value: r.value, Timestamp: stamp}}}
		}); err != nil {
			return err
		}
	}
	var verifies, scans []float64
	for rep := range r.cfg.Repeat {
		for j := range 2 {
			began := time.Now()
			if (j+rep)%2 == 0 {
				var st compare.Stats
				for d, err := range compare.Tables(ctx, tables[0], tables[1], client.Range{}, compare.Options{Stats: &st}) {
					if err != nil {
						return fmt.Errorf("bench: verify: %w", err)
					}
					return fmt.Errorf("bench: verify: equal tables differ at %q (%v)", d.Key, d.Kind)
				}
				if st.RowsA != int64(n) || st.RowsB != int64(n) {
					return fmt.Errorf("bench: verify read %d and %d rows, want %d each", st.RowsA, st.RowsB, n)
				}
				verifies = append(verifies, msSince(began))
				continue
			}
			var g errgroup.Group
			for _, t := range tables {
				g.Go(func() error {
					rows := 0
					for _, err := range t.Scan(ctx, client.Range{}) {
						if err != nil {
							return err
						}
						rows++
					}
					if rows != n {
						return fmt.Errorf("bench: scan of %s: %d rows, want %d", t.Name(), rows, n)
					}
					return nil
				})
			}
			if err := g.Wait(); err != nil {
				return err
			}
			scans = append(scans, msSince(began))
		}
	}
	v, s := Median(verifies), Median(scans)
	r.rep.Verify = &VerifyResult{Rows: n, A: verifyA, B: verifyB, VerifyMs: v, ScanBothMs: s, VerifyOverMin: Ratio(v, s)}
	return nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

func (v *VerifyResult) markdown(p func(format string, args ...any)) {
	p("## Verify: two equal tables of %d rows (%s and %s)\n\n", v.Rows, v.A, v.B)
	p("| what | ms | over scanning both |\n|---|---:|---:|\n")
	p("| scan both tables at once | %.1f | 1.00x |\n", v.ScanBothMs)
	p("| `compare.Tables` (`brine verify`) | %.1f | %.2fx |\n\n", v.VerifyMs, v.VerifyOverMin)
}

func (v *VerifyResult) goal() GoalResult {
	return GoalResult{
		Name: "verify of two equal tables",
		Want: "<= 1.3x the time of scanning both at once",
		Got:  fmt.Sprintf("%.2fx (%.1f ms vs %.1f ms)", v.VerifyOverMin, v.VerifyMs, v.ScanBothMs),
		Met:  v.VerifyOverMin > 0 && v.VerifyOverMin <= 1.3,
	}
}
