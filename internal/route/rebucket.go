package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/wait"
	"github.com/brine-kv/brine/salting"
)

// RebucketOptions is client.RebucketOptions, its defaults filled in.
type RebucketOptions struct {
	Families      []string
	MaxVersions   int
	FamilyOptions map[string]backends.FamilyOptions
	Regions       int
	Fence, Grace  time.Duration
	Workers       int
	Progress      func(Progress)
}

// Progress is client.RebucketProgress.
type Progress struct {
	State       string
	Table       string
	Spec        string
	Target      string
	TargetSpec  string
	Buckets     int
	BucketsDone int
	RowsCopied  int64
}

// Rebucket moves r's table to the salter to, step by step (client.Table.Rebucket says how), and
// returns once the new table serves it.
func Rebucket(ctx context.Context, r *Router, to salting.Salter, opts RebucketOptions) error {
	rb := &rebucketer{r: r, b: r.core.Backend, to: to, opts: opts, log: r.core.Logger}
	return rb.run(ctx)
}

// Status is the rebucket state of a logical table (client.Client.RebucketStatus).
func Status(ctx context.Context, b backends.Backend, name string) (Progress, error) {
	row, _, err := ReadDir(ctx, b, name)
	if err != nil {
		return Progress{}, err
	}
	return row.progress(), nil
}

type rebucketer struct {
	r    *Router
	b    backends.Backend
	to   salting.Salter
	opts RebucketOptions
	log  *slog.Logger
	rows atomic.Int64
}

func (rb *rebucketer) run(ctx context.Context) error {
	name := rb.r.logical
	for {
		row, found, err := ReadDir(ctx, rb.b, name)
		if err != nil {
			return fmt.Errorf("rebucket %s: %w", name, err)
		}
		if !found {
			v := rb.r.view // never rebucketed: the table serves under its own name
			row = Dir{phys: v.old.Name, spec: v.old.Salter.Spec()}
		}
		if row.state != stateServing && salting.CanonicalSpec(row.targetSpec) != rb.to.Spec() {
			return fmt.Errorf("rebucket %s to %s: %w (to %s)", name, rb.to.Spec(), ErrRebucketInProgress, row.targetSpec)
		}
		done, err := rb.step(ctx, row)
		if err != nil || done {
			return err
		}
	}
}

// step moves the rebucket one state on; done reports that the new table serves and the old one is
// gone (or kept, with a negative Grace).
func (rb *rebucketer) step(ctx context.Context, row Dir) (done bool, err error) {
	name := rb.r.logical
	next := row
	if row.state == statePause || row.state == stateCopied || row.state == stateSwitched {
		// Wait until no handle acts on the state before row's: this step relies on it.
		if err := wait.Sleep(ctx, rb.opts.Fence); err != nil {
			return false, err
		}
	}
	switch row.state {
	case stateServing:
		if row.drop != "" {
			if rb.opts.Grace < 0 {
				return rb.isTarget(row.spec), rb.startIfNeeded(ctx, row)
			}
			if err := wait.Sleep(ctx, rb.opts.Grace); err != nil {
				return false, err
			}
			if err := rb.b.DeleteTable(ctx, row.drop); err != nil && !errors.Is(err, backends.ErrTableNotFound) {
				return false, fmt.Errorf("rebucket %s: drop old table %s: %w", name, row.drop, err)
			}
			next.drop = ""
			rb.log.InfoContext(ctx, "brine: rebucket dropped old table", "table", name, "old", row.drop)
			return false, casDir(ctx, rb.b, name, row, &next)
		}
		if rb.isTarget(row.spec) {
			return true, nil
		}
		return false, rb.startIfNeeded(ctx, row)
	case statePause:
		// The new table keeps what tools stored with the old one (a key schema), under the new spec.
		meta, err := rb.b.TableMeta(ctx, row.phys)
		if err != nil {
			return false, fmt.Errorf("rebucket %s: %w", name, err)
		}
		meta = maps.Clone(meta)
		meta[salting.MetaKey] = row.targetSpec
		err = rb.b.CreateTable(ctx, row.target, backends.TableOptions{
			Families:      append(append([]string(nil), row.families...), markFamily),
			SplitKeys:     rb.to.SplitKeys(rb.opts.Regions),
			Meta:          meta,
			MaxVersions:   row.maxVersions,
			FamilyOptions: rb.opts.FamilyOptions,
		})
		if err != nil && !errors.Is(err, backends.ErrTableExists) {
			return false, fmt.Errorf("rebucket %s: create %s: %w", name, row.target, err)
		}
		next.state = stateMigrate
	case stateMigrate:
		if err := rb.copyAll(ctx, row); err != nil {
			return false, err
		}
		next.state = stateCopied
	case stateCopied:
		next.state = stateSwitched
	case stateSwitched:
		if err := rb.unmarkAll(ctx, row); err != nil {
			return false, err
		}
		next = Dir{phys: row.target, spec: row.targetSpec, families: row.families, maxVersions: row.maxVersions,
			gen: row.gen, drop: row.phys, version: row.version}
	default:
		return false, fmt.Errorf("rebucket %s: directory holds unknown state %q", name, row.state)
	}
	if err := casDir(ctx, rb.b, name, row, &next); err != nil {
		return false, err
	}
	rb.report(next, len(next.done))
	rb.log.InfoContext(ctx, "brine: rebucket step", "table", name, "state", next.state, "target", next.target)
	return false, nil
}

// startIfNeeded records the pause step of a new rebucket, when the spec is not the target already.
func (rb *rebucketer) startIfNeeded(ctx context.Context, row Dir) error {
	if rb.isTarget(row.spec) {
		return nil
	}
	if err := ensureDir(ctx, rb.b); err != nil {
		return err
	}
	next := row
	next.state, next.gen = statePause, row.gen+1
	next.target = fmt.Sprintf("%s_r%d", rb.r.logical, next.gen)
	next.targetSpec = rb.to.Spec()
	next.families, next.maxVersions = rb.opts.Families, rb.opts.MaxVersions
	if err := casDir(ctx, rb.b, rb.r.logical, row, &next); err != nil {
		return err
	}
	rb.report(next, 0)
	return nil
}

// isTarget reports whether a spec the directory stores is the rebucket's target, in whichever
// spelling a brine stored it.
func (rb *rebucketer) isTarget(stored string) bool {
	return salting.CanonicalSpec(stored) == rb.to.Spec()
}

func (rb *rebucketer) report(row Dir, doneBuckets int) {
	if rb.opts.Progress == nil {
		return
	}
	p := row.progress()
	p.BucketsDone, p.RowsCopied = doneBuckets, rb.rows.Load()
	rb.opts.Progress(p)
}

func (r Dir) progress() Progress {
	p := Progress{State: r.state, Table: r.phys, Spec: salting.CanonicalSpec(r.spec), Target: r.target,
		TargetSpec: salting.CanonicalSpec(r.targetSpec), BucketsDone: len(r.done)}
	if s, err := salting.ParseStoredSpec(r.spec); err == nil && r.state != stateServing {
		p.Buckets = s.Buckets()
	}
	return p
}

// copyAll copies every old bucket not yet recorded as copied, Workers buckets at once.
func (rb *rebucketer) copyAll(ctx context.Context, row Dir) error {
	v, err := rb.r.build(row, nil)
	if err != nil {
		return err
	}
	ranges, err := v.old.Salter.BucketRanges(nil, nil)
	if err != nil {
		return fmt.Errorf("rebucket %s: %w", rb.r.logical, err)
	}
	done := len(row.done)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rb.opts.Workers)
	progress := make(chan struct{}, len(ranges)) // the loop below starts draining it only once every bucket is started
	for _, br := range ranges {
		if row.done[br.Bucket] {
			continue
		}
		g.Go(func() error {
			if err := rb.copyBucket(gctx, v, br); err != nil {
				return err
			}
			if err := markDone(gctx, rb.b, rb.r.logical, row.gen, br.Bucket); err != nil {
				return err
			}
			progress <- struct{}{}
			return nil
		})
	}
	wait := make(chan error, 1)
	go func() { wait <- g.Wait() }()
	for {
		select {
		case <-progress:
			done++
			rb.report(row, done)
		case err := <-wait:
			return err
		}
	}
}

// copyBucket writes each row of one old bucket to the new table where the new row has no marker:
// a chunk of the client's batch rows at a time, as compare-and-set batches (one per new bucket).
func (rb *rebucketer) copyBucket(ctx context.Context, v *routeView, br salting.BucketRange) error {
	opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{MaxVersions: max(1, v.row.maxVersions)}}
	batch := make([]backends.CondMutation, 0, rb.r.core.BatchRows)
	flush := func() error {
		_, errs := v.new.CheckAndMutateBatch(ctx, batch)
		n := len(batch)
		batch = batch[:0]
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		rb.rows.Add(int64(n))
		return nil
	}
	for row, err := range v.old.BucketScan(ctx, br, opts, nil) {
		if err != nil {
			return fmt.Errorf("rebucket %s: copy: %w", rb.r.logical, err)
		}
		// A copy never overwrites a row a writer put (or deleted) in the new table: only where the
		// marker is absent.
		if batch = append(batch, backends.CondMutation{Cond: markCond, Mut: backends.Mutation{Key: row.Key, Cells: row.Cells}}); len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return fmt.Errorf("rebucket %s: copy bucket %d: %w", rb.r.logical, br.Bucket, err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("rebucket %s: copy bucket %d: %w", rb.r.logical, br.Bucket, err)
	}
	return nil
}

// unmarkAll deletes the marker of every row of the new table; a row holding nothing else (deleted
// during the rebucket) goes with it.
func (rb *rebucketer) unmarkAll(ctx context.Context, row Dir) error {
	v, err := rb.r.build(row, nil)
	if err != nil {
		return err
	}
	ranges, err := v.new.Salter.BucketRanges(nil, nil)
	if err != nil {
		return fmt.Errorf("rebucket %s: %w", rb.r.logical, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rb.opts.Workers)
	for _, br := range ranges {
		g.Go(func() error {
			opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{Columns: []backends.Column{{Family: markFamily}}}}
			var muts []backends.Mutation
			for r, err := range rb.b.Scan(gctx, v.new.Name, backends.Range{Start: br.Start, End: br.End}, opts) {
				if err != nil {
					return fmt.Errorf("rebucket %s: unmark bucket %d: %w", rb.r.logical, br.Bucket, err)
				}
				muts = append(muts, backends.Mutation{Key: slices.Clone(r.Key), Delete: true, Cells: []backends.Cell{{Family: markFamily}}})
			}
			for chunk := range slices.Chunk(muts, rb.r.core.BatchRows) {
				rowErrs, err := rb.b.Apply(gctx, v.new.Name, chunk)
				if err == nil {
					for _, e := range rowErrs {
						if e != nil {
							err = e
							break
						}
					}
				}
				if err != nil {
					return fmt.Errorf("rebucket %s: unmark bucket %d: %w", rb.r.logical, br.Bucket, err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}
