package migrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/periods"
	"github.com/brine-kv/brine/salting"
)

// copyPeriods copies a period table period by period: the target is declared like the source (its
// default spec Salter when given), each period's table is created on it with the source period's
// spec (or Salter) and copied by Copy, with a checkpoint of its own. The period table's checkpoint
// records the periods done, so a resume skips them and resumes the one that was under way.
func copyPeriods(ctx context.Context, from, to *client.Client, table string, opts Options) (Stats, error) {
	began := time.Now()
	as := cmp.Or(opts.As, table)
	fail := func(err error) (Stats, error) { return Stats{}, fmt.Errorf("copy %s: %w", table, err) }
	src, err := periods.Open(ctx, from, table, nil)
	if err != nil {
		return fail(err)
	}
	cfg := src.Config()
	if opts.Salter != nil {
		cfg.Table.Salter = opts.Salter
	}
	j := &job{from: from, to: to, table: table, as: as, opts: opts, cfg: client.TableConfig{Salter: cfg.Table.Salter}, firstRun: began}
	cp, err := j.openCheckpoint(ctx)
	if err != nil {
		return fail(err)
	}
	dst, err := periods.Open(ctx, to, as, nil)
	created := false
	if errors.Is(err, client.ErrTableNotFound) {
		dst, err = periods.Create(ctx, to, as, cfg)
		created = true
	}
	if err != nil {
		return fail(fmt.Errorf("target %s: %w", as, err))
	}
	if got, want := schemaText(dst.Config().Table), schemaText(cfg.Table); got != want {
		return fail(fmt.Errorf("%w: target %s exists with key schema %s, the source's is %s", client.ErrInvalidArgument, as, got, want))
	}
	if cp == nil {
		if cp, err = j.newCheckpoint(ctx, CheckpointTable(as)); err != nil {
			return fail(err)
		}
	}
	st := Stats{Created: created, Since: j.nextSince()}
	infos := slices.SortedFunc(slices.Values(src.Periods()), func(a, b periods.Info) int { return a.Start.Compare(b.Start) })
	for _, p := range infos {
		st.Buckets++
		key := []byte("period/" + p.Table)
		if row, err := cp.Get(ctx, key); err == nil && cellValue(row.Cells, qualDone) != nil {
			continue // copied before the interruption
		} else if err != nil && !errors.Is(err, client.ErrNotFound) {
			return fail(err)
		}
		pcfg := cfg.Table
		if opts.Salter == nil {
			if pcfg.Salter, err = salting.ParseStoredSpec(p.Spec); err != nil {
				return fail(fmt.Errorf("period %s: %w", p.Table, err))
			}
		}
		tp, err := dst.CreatePeriod(ctx, p.Start, &pcfg)
		if err != nil {
			return fail(fmt.Errorf("period %s: %w", p.Table, err))
		}
		popts := opts
		popts.As, popts.Salter = tp.Table, nil
		_, cerr := to.OpenTable(ctx, CheckpointTable(tp.Table), nil)
		popts.Resume = cerr == nil // the period under way when the copy was interrupted
		pst, err := Copy(ctx, from, to, p.Table, popts)
		st.Rows, st.Cells = st.Rows+pst.Rows, st.Cells+pst.Cells
		if err != nil {
			return st, fmt.Errorf("copy %s: period %s: %w", table, p.Table, err)
		}
		if err := cp.Put(ctx, key, client.Cell{Family: client.DefaultFamily, Qualifier: qualDone, Value: []byte{1}}); err != nil {
			return st, fmt.Errorf("copy %s: period %s: save the checkpoint: %w", table, p.Table, err)
		}
	}
	if err := to.DeleteTable(ctx, cp.Name()); err != nil && !errors.Is(err, client.ErrTableNotFound) {
		return st, fmt.Errorf("copy %s: drop its checkpoint: %w", table, err)
	}
	st.Elapsed = time.Since(began)
	return st, nil
}
