package periodtest

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
)

// months creates the monthly periods of 2026 up to last (December with another bucket count), at
// once as a program creating a year ahead may, and writes perMonth rows per host into each,
// returning every key in logical order.
func months(t *testing.T, p *periods.Table, sch *keys.Schema, lt layout, last time.Month, perMonth int) []string {
	t.Helper()
	ctx := ctxFor(t)
	var g errgroup.Group
	for m := time.January; m <= last; m++ {
		var cfg *client.TableConfig
		if m == time.December {
			cfg = &client.TableConfig{Salter: testkit.Salter(t, "hash:8")}
		}
		g.Go(func() error {
			_, err := p.CreatePeriod(ctx, date(2026, m, 1), cfg)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	var muts []client.Mutation
	var ref []string
	for m := time.January; m <= last; m++ {
		start := date(2026, m, 1)
		span := date(2026, m+1, 1).Sub(start)
		for i := range perMonth {
			// Spread over the month, the last row on its last millisecond.
			ts := start.Add(span - time.Millisecond - time.Duration(i)*(span/time.Duration(perMonth)))
			for _, h := range []string{"a", "b"} {
				k := lt.key(sch, h, ts)
				muts = append(muts, client.Mutation{Key: k, Cells: cells(h)})
				ref = append(ref, string(k))
			}
		}
	}
	for chunk := range slices.Chunk(muts, 500) {
		rowErrs, err := p.Apply(ctx, chunk)
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		for i, err := range rowErrs {
			if err != nil {
				t.Fatalf("Apply row %d: %v", i, err)
			}
		}
	}
	slices.Sort(ref)
	return ref
}

// span is a range between two times for host h, ordered for the layout (a descending time field
// puts the later time first).
func span(sch *keys.Schema, lt layout, h string, from, to time.Time) client.Range {
	a, b := lt.key(sch, h, from), lt.key(sch, h, to)
	if bytes.Compare(a, b) > 0 {
		a, b = b, a
	}
	return client.RowRange(a, b)
}

func within(ref []string, r client.Range) []string {
	var out []string
	for _, k := range ref {
		if r.Contains([]byte(k)) {
			out = append(out, k)
		}
	}
	return out
}

// testScans scans a year of monthly periods over ranges of 1, 2 and 12 periods in both directions,
// with limits and cursors, and checks that only the overlapping periods were read.
func testScans(t *testing.T, s Store) {
	for _, lt := range s.layouts() {
		t.Run(lt.name, func(t *testing.T) {
			ctx := ctxFor(t)
			counting := NewCounting(s.Open(t))
			c := client.New(counting, client.WithPrefetch(4))
			t.Cleanup(func() { c.Close() })
			sch := testkit.Schema(t, lt.schema)
			p := newTable(t, c, tableName(s, "scan", lt), lt.field)
			ref := months(t, p, sch, lt, time.December, 3)
			ranges := []struct {
				name    string
				r       client.Range
				periods int
			}{
				{"1 period", span(sch, lt, "a", date(2026, 3, 1), date(2026, 3, 31)), 1},
				{"2 periods", span(sch, lt, "b", date(2026, 3, 20), date(2026, 4, 20)), 2},
				{"12 periods", span(sch, lt, "a", date(2026, 1, 1), date(2026, 12, 31)), 12},
				{"everything", client.Range{}, 12},
			}
			for _, rc := range ranges {
				want := within(ref, rc.r)
				if len(want) == 0 {
					t.Fatalf("%s: no rows in range: the test is wrong", rc.name)
				}
				rev := slices.Clone(want)
				slices.Reverse(rev)
				counting.Reset()
				got, err := collect(p.Scan(ctx, rc.r))
				if err != nil || !slices.Equal(got, want) {
					t.Fatalf("%s: forward scan = %d rows, %v; want %d rows", rc.name, len(got), err, len(want))
				}
				if n := counting.Reset(); n != rc.periods {
					t.Errorf("%s: scan read %d tables, want %d", rc.name, n, rc.periods)
				}
				got, err = collect(p.Scan(ctx, rc.r, client.Reverse()))
				if err != nil || !slices.Equal(got, rev) {
					t.Fatalf("%s: reverse scan = %d rows, %v; want %d rows", rc.name, len(got), err, len(rev))
				}
				for _, dir := range []struct {
					name string
					want []string
					opts []client.ReadOption
				}{{"forward", want, nil}, {"reverse", rev, []client.ReadOption{client.Reverse()}}} {
					got, err := collect(p.Scan(ctx, rc.r, append(dir.opts, client.Limit(5))...))
					if err != nil || !slices.Equal(got, dir.want[:min(5, len(dir.want))]) {
						t.Errorf("%s %s limit 5: %q, %v", rc.name, dir.name, got, err)
					}
					// Three or four pages, each resuming after the last key of the one before (a
					// page a scan over a server pays for with one round trip per bucket and period).
					page := max(7, len(dir.want)/3)
					var all []string
					var cursor []byte
					for range len(dir.want) + 1 {
						opts := append(slices.Clone(dir.opts), client.Limit(page))
						if cursor != nil {
							opts = append(opts, client.ResumeAfter(cursor))
						}
						rows, err := collect(p.Scan(ctx, rc.r, opts...))
						if err != nil {
							t.Fatalf("%s %s page: %v", rc.name, dir.name, err)
						}
						all = append(all, rows...)
						if len(rows) < page {
							break
						}
						cursor = []byte(rows[len(rows)-1])
					}
					if !slices.Equal(all, dir.want) {
						t.Errorf("%s %s pages: %d rows, want %d", rc.name, dir.name, len(all), len(dir.want))
					}
				}
			}
		})
	}
}
