package migrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/periods"
	"github.com/brine-kv/brine/salting"
)

// syncPeriods syncs a period table period by period, as copyPeriods copies one: the target, a
// period table of the same interval and time field (declared like the source when absent), gets
// each source period's table (created with the source period's spec when it lacks it) made equal to
// the source's by Sync, with that period's own checkpoint; a period the target has and the source
// does not (expired there) holds rows only the target has, and is dropped. Keys map to periods alike
// on both sides, so the periods' syncs together make the logical tables equal. A resume (Resume)
// resumes each period whose checkpoint the target's store holds and syncs the others again, which
// finds equal what was done. With Shard, each shard syncs its shard of every period; shard 0 drops
// the target's extra periods.
func syncPeriods(ctx context.Context, from, to *client.Client, table string, opts SyncOptions) (SyncStats, error) {
	began := time.Now()
	as := cmp.Or(opts.As, table)
	fail := func(err error) (SyncStats, error) { return SyncStats{}, fmt.Errorf("sync %s: %w", table, err) }
	src, err := periods.Open(ctx, from, table, nil)
	if err != nil {
		return fail(err)
	}
	cfg := src.Config()
	dst, err := periods.Open(ctx, to, as, nil)
	switch {
	case errors.Is(err, client.ErrTableNotFound) && !opts.DryRun:
		if dst, err = periods.Create(ctx, to, as, cfg); errors.Is(err, client.ErrTableExists) {
			dst, err = openMadePeriods(ctx, to, as) // another shard's, just made
		}
	case err != nil && opts.Shard.Sharded():
		dst, err = openMadePeriods(ctx, to, as) // another shard's, not whole yet
	}
	if err != nil {
		return fail(fmt.Errorf("target %s: %w", as, err))
	}
	dcfg := dst.Config()
	if got, want := schemaText(dcfg.Table), schemaText(cfg.Table); got != want {
		return fail(fmt.Errorf("%w: target %s has key schema %s, the source's is %s", client.ErrInvalidArgument, as, got, want))
	}
	if dcfg.Interval != cfg.Interval || dcfg.TimeField != cfg.TimeField {
		return fail(fmt.Errorf("%w: target %s has periods of %s by key field %d, the source's are of %s by field %d: their keys fall in other periods",
			client.ErrInvalidArgument, as, dcfg.Interval, dcfg.TimeField, cfg.Interval, cfg.TimeField))
	}
	var st SyncStats
	add := func(p SyncStats) {
		st.Compared, st.Changes, st.Puts, st.Deletes = st.Compared+p.Compared, st.Changes+p.Changes, st.Puts+p.Puts, st.Deletes+p.Deletes
	}
	progress := opts.Progress
	for _, p := range sortedPeriods(src.Periods()) {
		target, err := syncTargetPeriod(ctx, dst, p, opts.DryRun)
		if err != nil {
			return st, fmt.Errorf("sync %s: period %s: %w", table, p.Table, err)
		}
		popts := opts
		popts.As = target
		if popts.Resume, err = Interrupted(ctx, to, SyncCheckpointTable(target), opts.Shard); err != nil {
			return st, fmt.Errorf("sync %s: period %s: %w", table, p.Table, err)
		}
		popts.Resume = popts.Resume && opts.Resume // without Resume, Sync refuses the interrupted one
		if progress != nil {
			base := SyncProgress{RowsFrom: st.Compared, Changes: st.Changes}
			popts.Progress = func(sp SyncProgress) {
				progress(SyncProgress{RowsFrom: base.RowsFrom + sp.RowsFrom, RowsTo: sp.RowsTo, Changes: base.Changes + sp.Changes})
			}
		}
		var pst SyncStats
		if target == "" { // a dry run's period the target lacks: every source row is a change
			pst, err = dryRunMissing(ctx, from, p.Table, opts)
		} else {
			pst, err = Sync(ctx, from, to, p.Table, popts)
		}
		add(pst)
		if err != nil {
			return st, fmt.Errorf("sync %s: period %s: %w", table, p.Table, err)
		}
	}
	if opts.Shard.Index == 0 {
		have := map[time.Time]bool{}
		for _, p := range src.Periods() {
			have[p.Start] = true
		}
		for _, p := range sortedPeriods(dst.Periods()) {
			if have[p.Start] {
				continue
			}
			n, err := dropExtraPeriod(ctx, dst, p, opts)
			st.Changes += n
			if err != nil {
				return st, fmt.Errorf("sync %s: the target's period %s, which the source lacks: %w", table, p.Table, err)
			}
		}
	}
	st.Elapsed = time.Since(began)
	return st, nil
}

// SyncInterrupted reports whether an interrupted sync of table into as (its shard) waits on the
// target's store to be resumed: its checkpoint, SyncCheckpointTable(as), is there; for a period
// table, the checkpoint of one of the target's periods.
func SyncInterrupted(ctx context.Context, from, to *client.Client, table, as string, shard compare.Shard) (bool, error) {
	as = cmp.Or(as, table)
	meta, err := from.Backend().TableMeta(ctx, table)
	if err != nil || !periods.IsTable(meta) {
		return Interrupted(ctx, to, SyncCheckpointTable(as), shard)
	}
	dst, err := periods.Open(ctx, to, as, nil)
	if errors.Is(err, client.ErrTableNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, p := range dst.Periods() {
		if ok, err := Interrupted(ctx, to, SyncCheckpointTable(p.Table), shard); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// sortedPeriods is infos by start.
func sortedPeriods(infos []periods.Info) []periods.Info {
	return slices.SortedFunc(slices.Values(infos), func(a, b periods.Info) int { return a.Start.Compare(b.Start) })
}

// syncTargetPeriod is the target's table for source period p, created with p's spec when the
// target lacks the period; "" for a dry run's period the target lacks (nothing is created).
func syncTargetPeriod(ctx context.Context, dst *periods.Table, p periods.Info, dryRun bool) (string, error) {
	for _, d := range dst.Periods() {
		if d.Start.Equal(p.Start) {
			return d.Table, nil
		}
	}
	if dryRun {
		return "", nil
	}
	pcfg := dst.Config().Table
	s, err := salting.ParseStoredSpec(p.Spec)
	if err != nil {
		return "", err
	}
	pcfg.Salter = s
	info, err := dst.CreatePeriod(ctx, p.Start, &pcfg)
	return info.Table, err
}

// dryRunMissing counts, for a dry run, the rows of a source period the target lacks: each is a
// change, told to OnChange as a put of its cells.
func dryRunMissing(ctx context.Context, from *client.Client, table string, opts SyncOptions) (SyncStats, error) {
	t, err := from.OpenTable(ctx, table, nil)
	if err != nil {
		return SyncStats{}, err
	}
	var st SyncStats
	for row, err := range t.Scan(ctx, opts.Range, syncReadOptions(opts)...) {
		if err != nil {
			return st, err
		}
		st.Compared++
		st.Changes++
		st.Puts += int64(len(row.Cells))
		if opts.OnChange != nil {
			opts.OnChange(Change{Key: row.Key, Put: row.Cells})
		}
	}
	return st, nil
}

// dropExtraPeriod empties the target of a period the source lacks: it counts the period's rows in
// opts.Range (each a change: a row deleted), and drops the period when the sync covers all of it;
// otherwise, or for a dry run, it deletes (or tells) the rows alone.
func dropExtraPeriod(ctx context.Context, dst *periods.Table, p periods.Info, opts SyncOptions) (int64, error) {
	t, err := dst.PeriodTable(p.Table)
	if err != nil {
		return 0, err
	}
	whole := len(opts.Range.Start) == 0 && len(opts.Range.End) == 0
	var n int64
	var dels []client.Mutation
	for row, err := range t.Scan(ctx, opts.Range) {
		if err != nil {
			return n, err
		}
		n++
		if opts.OnChange != nil {
			opts.OnChange(Change{Key: row.Key, DeleteRow: true})
		}
		if !whole && !opts.DryRun {
			dels = append(dels, client.Mutation{Key: row.Key, Delete: true})
		}
	}
	switch {
	case opts.DryRun:
		return n, nil
	case whole:
		return n, dst.DropPeriod(ctx, p.Table)
	}
	rowErrs, err := t.Apply(ctx, dels)
	if err == nil {
		err = errors.Join(rowErrs...)
	}
	return n, err
}
