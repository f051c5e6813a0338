package migrate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/wait"
	"github.com/brine-kv/brine/periods"
	"github.com/brine-kv/brine/salting"
)

// copyPeriods copies a period table period by period: the target is declared like the source (its
// default spec Salter when given), each period's table is created on it with the source period's
// spec (or Salter) and copied by Copy, with a checkpoint of its own. The period table's checkpoint
// records the periods done, so a resume skips them and resumes the one that was under way. With
// Shard, each shard copies its shard of every period (a plan each period's table fixes), with a
// checkpoint of its own for the period table and one for each period's; the first shard to get
// there creates the target and each period's table, the others find them.
func copyPeriods(ctx context.Context, from, to *client.Client, table string, opts Options) (Stats, error) {
	began := time.Now()
	as := cmp.Or(opts.As, table)
	fail := func(err error) (Stats, error) { return Stats{}, fmt.Errorf("copy %s: %w", table, err) }
	if err := opts.Shard.Check(); err != nil {
		return fail(fmt.Errorf("shard %s: %w", opts.Shard, err))
	}
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
		if errors.Is(err, client.ErrTableExists) && opts.Shard.Sharded() {
			dst, err = openMadePeriods(ctx, to, as) // another shard's, just made
			created = false
		}
	} else if err != nil && opts.Shard.Sharded() {
		dst, err = openMadePeriods(ctx, to, as) // another shard's, not whole yet
	}
	if err != nil {
		return fail(fmt.Errorf("target %s: %w", as, err))
	}
	if got, want := schemaText(dst.Config().Table), schemaText(cfg.Table); got != want {
		return fail(fmt.Errorf("%w: target %s exists with key schema %s, the source's is %s", client.ErrInvalidArgument, as, got, want))
	}
	if cp == nil {
		if cp, err = j.newCheckpoint(ctx, ShardCheckpoint(CheckpointTable(as), opts.Shard)); err != nil {
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
		// The period under way when the copy was interrupted.
		if popts.Resume, err = Interrupted(ctx, to, CheckpointTable(tp.Table), opts.Shard); err != nil {
			return fail(fmt.Errorf("period %s: %w", p.Table, err))
		}
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

// openMadePeriods opens the period table another shard of the copy has just created, waiting up to
// targetWait for it to be whole: on Tablestore a table's meta row, its declaration, follows it.
func openMadePeriods(ctx context.Context, to *client.Client, as string) (*periods.Table, error) {
	deadline := time.Now().Add(targetWait)
	for {
		t, err := periods.Open(ctx, to, as, nil)
		if err == nil || time.Now().After(deadline) {
			return t, err
		}
		if err := wait.Sleep(ctx, 50*time.Millisecond); err != nil {
			return nil, err
		}
	}
}
