package compare_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

// TestShardedPeriods: a sharded comparison of two period tables, salted otherwise per period and
// each with a period the other lacks, finds over its shards together what the whole comparison
// finds, and reads as many rows of each side.
func TestShardedPeriods(t *testing.T) {
	ctx := context.Background()
	month, err := periods.ParseInterval("month")
	if err != nil {
		t.Fatal(err)
	}
	schema := testkit.Schema(t, "host,ts:int64")
	c := client.New(memory.New())
	t.Cleanup(func() { _ = c.Close() })
	side := func(name, spec string, months ...int) *periods.Table {
		p, err := periods.Create(ctx, c, name, periods.Config{Interval: month, TimeField: 1,
			Table: client.TableConfig{Salter: testkit.Salter(t, spec), KeySchema: schema}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range months {
			if _, err := p.CreatePeriod(ctx, time.Date(2026, time.Month(m), 1, 0, 0, 0, 0, time.UTC), nil); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	a, b := side("a", "hash:4", 9, 10, 11), side("b", "hash:3", 10, 11, 12)
	write := func(p *periods.Table, from, to time.Time, value func(i int) string) {
		var muts []client.Mutation
		for i, at := 0, from; at.Before(to); i, at = i+1, at.Add(5*time.Hour) {
			k, err := schema.Encode(fmt.Sprint("h", i%3), at.UnixMilli())
			if err != nil {
				t.Fatal(err)
			}
			muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte(value(i)), Timestamp: 5}}})
		}
		if rowErrs, err := p.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
			t.Fatal(err, errors.Join(rowErrs...))
		}
	}
	sep, oct, dec, jan := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	write(a, sep, dec, func(i int) string { return fmt.Sprint(i) })
	write(b, oct, dec, func(i int) string {
		if i%50 == 0 {
			return "changed"
		}
		return fmt.Sprint(i + 144) // September's 144 rows of a come first: the same values
	})
	write(b, dec, jan, func(i int) string { return "december" })
	collect := func(s compare.Shard) ([]string, compare.Stats) {
		var st compare.Stats
		var out []string
		for d, err := range compare.Tables(ctx, a, b, client.Range{}, compare.Options{Chunk: 32, Shard: s, Stats: &st}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%v %x", d.Kind, d.Key))
		}
		return out, st
	}
	whole, wst := collect(compare.Shard{})
	if len(whole) < 144+100 {
		t.Fatalf("%d differences, want September's and December's rows and the changed ones", len(whole))
	}
	for _, n := range []int{1, 2, 5} {
		var got []string
		var rowsA, rowsB int64
		for i := range n {
			d, st := collect(compare.Shard{Index: i, Count: n})
			got = append(got, d...)
			rowsA, rowsB = rowsA+st.RowsA, rowsB+st.RowsB
		}
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(whole)); !slices.Equal(got, want) {
			t.Errorf("N=%d: the shards found %d differences, the whole comparison %d", n, len(got), len(want))
		}
		if rowsA != wst.RowsA || rowsB != wst.RowsB {
			t.Errorf("N=%d: the shards read %d and %d rows, the whole comparison %d and %d", n, rowsA, rowsB, wst.RowsA, wst.RowsB)
		}
	}
}
