package compare

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/periods"
)

// A sharded comparison of period tables goes period by period: a shard's plan is made from a
// table's buckets, and each period's table has its own salting. Keys fall in the same period on
// both sides when both have the same interval and time field, so the periods' comparisons together
// are the tables'. A period one side lacks holds rows only the other has, compared against an
// empty side, by the plan of the side that has it.

// shardedPeriods is Tables of a and b, period tables, for opts.Shard.
func shardedPeriods(ctx context.Context, a, b *periods.Table, r client.Range, opts Options) iter.Seq2[Difference, error] {
	return func(yield func(Difference, error) bool) {
		var total Stats
		defer func() {
			if opts.Stats != nil {
				*opts.Stats = total
			}
		}()
		ca, cb := a.Config(), b.Config()
		if ca.Interval != cb.Interval || ca.TimeField != cb.TimeField {
			yield(Difference{}, fmt.Errorf("compare: %w: Shard: the period tables have periods of %s by key field %d and of %s by field %d: their keys fall in other periods",
				client.ErrInvalidArgument, ca.Interval, ca.TimeField, cb.Interval, cb.TimeField))
			return
		}
		pb := map[time.Time]periods.Info{}
		for _, p := range b.Periods() {
			pb[p.Start.UTC()] = p
		}
		type pair struct {
			a, b   *client.Table
			onlyIn int // 0: both; 1: a only; 2: b only
		}
		var pairs []pair
		for _, p := range sortedInfos(a.Periods()) {
			ta, err := a.PeriodTable(p.Table)
			if err != nil {
				yield(Difference{}, fmt.Errorf("compare: %w", err))
				return
			}
			q, ok := pb[p.Start.UTC()]
			if !ok {
				pairs = append(pairs, pair{a: ta, onlyIn: 1})
				continue
			}
			delete(pb, p.Start.UTC())
			tb, err := b.PeriodTable(q.Table)
			if err != nil {
				yield(Difference{}, fmt.Errorf("compare: %w", err))
				return
			}
			pairs = append(pairs, pair{a: ta, b: tb})
		}
		for _, q := range sortedInfos(slices.Collect(maps.Values(pb))) {
			tb, err := b.PeriodTable(q.Table)
			if err != nil {
				yield(Difference{}, fmt.Errorf("compare: %w", err))
				return
			}
			pairs = append(pairs, pair{b: tb, onlyIn: 2})
		}
		progress := opts.Progress
		for _, p := range pairs {
			var st Stats
			popts := opts
			popts.Stats = &st
			if progress != nil {
				baseA, baseB := total.RowsA, total.RowsB
				popts.Progress = func(na, nb int64) { progress(baseA+na, baseB+nb) }
			}
			var diffs iter.Seq2[Difference, error]
			switch p.onlyIn {
			case 0:
				diffs = Tables(ctx, p.a, p.b, r, popts)
			case 1:
				diffs = Tables(ctx, p.a, emptySource{}, r, popts)
			case 2:
				if progress != nil {
					baseA, baseB := total.RowsA, total.RowsB
					popts.Progress = func(nb, na int64) { progress(baseA+na, baseB+nb) }
				}
				diffs = swapped(Tables(ctx, p.b, emptySource{}, r, popts))
			}
			for d, err := range diffs {
				if !yield(d, err) || err != nil {
					total.add(st, p.onlyIn == 2)
					return
				}
			}
			total.add(st, p.onlyIn == 2)
		}
	}
}

// add adds the stats of one period's comparison; swap: its sides were b and a.
func (s *Stats) add(p Stats, swap bool) {
	if swap {
		p.RowsA, p.RowsB, p.RereadA, p.RereadB = p.RowsB, p.RowsA, p.RereadB, p.RereadA
	}
	s.RowsA, s.RowsB, s.RereadA, s.RereadB = s.RowsA+p.RowsA, s.RowsB+p.RowsB, s.RereadA+p.RereadA, s.RereadB+p.RereadB
	s.Chunks, s.Differing, s.Differences, s.Unconfirmed = s.Chunks+p.Chunks, s.Differing+p.Differing, s.Differences+p.Differences, s.Unconfirmed+p.Unconfirmed
}

// swapped turns the differences of (b, a) into those of (a, b).
func swapped(diffs iter.Seq2[Difference, error]) iter.Seq2[Difference, error] {
	return func(yield func(Difference, error) bool) {
		for d, err := range diffs {
			switch d.Kind {
			case OnlyInA:
				d.Kind = OnlyInB
			case OnlyInB:
				d.Kind = OnlyInA
			}
			d.A, d.B = d.B, d.A
			if !yield(d, err) {
				return
			}
		}
	}
}

// emptySource is the side of a period the other side lacks: it has no rows.
type emptySource struct{}

func (emptySource) Scan(context.Context, client.Range, ...client.ReadOption) iter.Seq2[client.Row, error] {
	return func(func(client.Row, error) bool) {}
}

// sortedInfos is infos by start.
func sortedInfos(infos []periods.Info) []periods.Info {
	return slices.SortedFunc(slices.Values(infos), func(x, y periods.Info) int { return x.Start.Compare(y.Start) })
}
