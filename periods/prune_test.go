package periods_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
)

// TestPruneRandomRanges checks period pruning against a filter of every key: random
// ranges whose bounds are whole keys, keys a millisecond off, cut keys, successors and prefixes of
// leading fields (fixed seeds, so a failure reproduces) must return exactly the keys they hold,
// in both directions.
func TestPruneRandomRanges(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		schema string
		field  int
		key    func(s *keys.Schema, h string, ms int64) []byte
	}{
		{"host,ts:int64", 1, func(s *keys.Schema, h string, ms int64) []byte { k, _ := s.Encode(h, ms); return k }},
		{"ts:int64:desc,host", 0, func(s *keys.Schema, h string, ms int64) []byte { k, _ := s.Encode(ms, h); return k }},
		{"ts:int64,host", 0, func(s *keys.Schema, h string, ms int64) []byte { k, _ := s.Encode(ms, h); return k }},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			sch := testkit.Schema(t, tc.schema)
			c := client.New(memory.New())
			defer c.Close()
			month, _ := periods.ParseInterval("month")
			p, err := periods.Create(ctx, c, "p", periods.Config{Interval: month, TimeField: tc.field,
				Table: client.TableConfig{Salter: testkit.Salter(t, "hash:3")}})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			if _, err := p.CreateAhead(ctx, start, 11, nil); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(13, 42))
			var ref [][]byte
			var muts []client.Mutation
			for range 300 {
				ms := start.UnixMilli() + rng.Int64N(365*24*3600*1000)
				k := tc.key(sch, []string{"a", "b", "c"}[rng.IntN(3)], ms)
				ref = append(ref, k)
				muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{testkit.Cell("q", "v")}})
			}
			// And on both sides of every boundary between two months, where pruning can be off by one.
			for m := time.February; m <= time.December; m++ {
				b := time.Date(2026, m, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
				for _, ms := range []int64{b - 1, b} {
					for _, h := range []string{"a", "b", "c"} {
						k := tc.key(sch, h, ms)
						ref = append(ref, k)
						muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{testkit.Cell("q", "v")}})
					}
				}
			}
			if rowErrs, err := p.Apply(ctx, muts); err != nil || rowErrs != nil {
				t.Fatal(err, rowErrs)
			}
			slices.SortFunc(ref, bytes.Compare)
			ref = slices.CompactFunc(ref, bytes.Equal)
			bound := func() []byte {
				k := ref[rng.IntN(len(ref))]
				switch rng.IntN(6) {
				case 0:
					return nil
				case 1: // a millisecond off, either way
					v, _ := sch.Decode(k)
					ms := v[tc.field].(int64) + int64(rng.IntN(3)-1)
					v[tc.field] = ms
					out, _ := sch.Encode(v...)
					return out
				case 2:
					return k[:1+rng.IntN(len(k))]
				case 3:
					return keys.Successor(k)
				case 4:
					v, _ := sch.Decode(k)
					out, _ := sch.Encode(v[:1]...)
					return out
				}
				return k
			}
			for i := range 400 {
				r := client.Range{Start: bound(), End: bound()}
				if len(r.End) > 0 && bytes.Compare(r.Start, r.End) >= 0 {
					continue
				}
				var want []string
				for _, k := range ref {
					if r.Contains(k) {
						want = append(want, string(k))
					}
				}
				for _, rev := range []bool{false, true} {
					var opts []client.ReadOption
					if rev {
						opts = append(opts, client.Reverse())
					}
					got := testkit.KeyStrings(testkit.Collect(t, p.Scan(ctx, r, opts...)))
					w := slices.Clone(want)
					if rev {
						slices.Reverse(w)
					}
					if !slices.Equal(got, w) {
						t.Fatalf("range %d [%q, %q) reverse=%v: %d rows, want %d", i, r.Start, r.End, rev, len(got), len(w))
					}
				}
			}
		})
	}
}
