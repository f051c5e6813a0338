package route

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/salting"
)

// ServedAs is the router of a table served under its own name: one just created, or one the
// directory has no row for.
func ServedAs(core *Core, name string, s salting.Salter) (*Router, error) {
	return NewRouter(core, name, Dir{phys: name, spec: s.Spec()}, s)
}

// Lazy is ServedAs without its checks, for a table opened without a read (an index table, opened
// with its main table): its first call reads the directory.
func Lazy(core *Core, name string, s salting.Salter) *Router {
	return &Router{core: core, logical: name, view: &routeView{row: Dir{phys: name, spec: s.Spec()}, old: &Phys{core: core, Name: name, Salter: s}}}
}

// ViewTable is the physical table serving the table in the router's current view (the old one
// during a rebucket).
func (r *Router) ViewTable() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.view.old.Name
}

// CheckAndMutate is Table.CheckAndMutate through the route: the row is copied and marked first
// while a rebucket is under way, as for Apply.
func (r *Router) CheckAndMutate(ctx context.Context, cond backends.Condition, m backends.Mutation) (bool, error) {
	pt, families, err := r.prepareAtomic(ctx, m.Key)
	if err != nil {
		return false, fmt.Errorf("check and mutate %s: %w", r.PrintKey(m.Key), err)
	}
	return pt.CheckAndMutate(ctx, cond, keepMark(m, families))
}

// Increment is Table.Increment through the route.
func (r *Router) Increment(ctx context.Context, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	pt, _, err := r.prepareAtomic(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("increment %s: %w", r.PrintKey(key), err)
	}
	return pt.Increment(ctx, key, incs)
}

// CheckAndMutateMany does CheckAndMutate for each of ms (logical keys), in batches
// (Phys.CheckAndMutateBatch) on the physical table a CheckAndMutate goes to, the rows first copied
// or marked while a rebucket is under way, as CheckAndMutate does for one row.
func (r *Router) CheckAndMutateMany(ctx context.Context, ms []backends.CondMutation) (applied []bool, errs []error) {
	keys := make([][]byte, len(ms))
	for i, m := range ms {
		keys[i] = m.Mut.Key
	}
	pt, families, prep, err := r.prepareAtomicMany(ctx, keys)
	applied, errs = make([]bool, len(ms)), make([]error, len(ms))
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("check and mutate %s: %w", r.PrintKey(keys[i]), err)
		}
		return applied, errs
	}
	var send []backends.CondMutation
	var at []int
	for i, m := range ms {
		if prep[i] != nil {
			errs[i] = fmt.Errorf("check and mutate %s: %w", r.PrintKey(keys[i]), prep[i])
			continue
		}
		m.Mut = keepMark(m.Mut, families)
		send, at = append(send, m), append(at, i)
	}
	if len(send) == 0 {
		return applied, errs
	}
	a, e := pt.CheckAndMutateBatch(ctx, send)
	for j, i := range at {
		applied[i], errs[i] = a[j], e[j]
	}
	return applied, errs
}

// CountByBucket is Table.CountByBucket: refused while a rebucket moves the rows.
func (r *Router) CountByBucket(ctx context.Context) ([]int64, error) {
	pt, err := r.Plain(ctx, "count", true)
	if err != nil {
		return nil, err
	}
	return pt.CountByBucket(ctx)
}

// servingTable is the physical table serving the table now: its own, or, once it has been
// rebucketed, the one its directory row names (during a rebucket, the old one, which serves until
// the switch; from the switch on, the new one).
func (r *Router) servingTable(ctx context.Context) (string, error) {
	v, err := r.get(ctx)
	if err != nil {
		return "", err
	}
	return v.serving(), nil
}

// ServingMeta is the meta of the physical table serving the table now. A rebucket drops the old
// table a fence and a grace after its switch; a read of the old table's meta by a handle whose view
// of the directory is from before the switch, and which comes later than that (a goroutine held up
// that long), finds the table gone: the directory is then read again, and the meta of the table
// serving now read instead.
func (r *Router) ServingMeta(ctx context.Context) (map[string]string, error) {
	phys, err := r.servingTable(ctx)
	if err != nil {
		return nil, err
	}
	meta, err := r.core.Backend.TableMeta(ctx, phys)
	if !errors.Is(err, backends.ErrTableNotFound) {
		return meta, err
	}
	v, rerr := r.reread(ctx)
	if rerr != nil || v.serving() == phys {
		return nil, err
	}
	return r.core.Backend.TableMeta(ctx, v.serving())
}

// PausedNow reports whether a rebucket's pause step holds the table's writes, as of the router's
// view of the directory: a best-effort write (a reader's index repair) skips instead of waiting for
// the rebucket to go on.
func (r *Router) PausedNow(ctx context.Context) bool {
	v, err := r.get(ctx)
	return err == nil && v.row.state == statePause
}

// TrustView makes the router trust the view of the directory it holds as if it had just read it:
// what client's tests use to stand for a handle whose last read came just before a rebucket's step.
func (r *Router) TrustView() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = time.Now()
}

// EachBucketBatch reads every row of the physical table serving the table, one goroutine per bucket
// (bounded by the client's concurrency), handing fn the rows, logical keys, in batches of the
// client's batch size; after each bucket it calls done with the bucket count. It fails with
// ErrRebucketing while a rebucket moves the rows.
func (r *Router) EachBucketBatch(ctx context.Context, fn func(context.Context, []backends.Row) error, done func(total int)) error {
	pt, err := r.Plain(ctx, "scan", false)
	if err != nil {
		return err
	}
	ranges, err := pt.Salter.BucketRanges(nil, nil)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.core.Concurrency)
	for _, br := range ranges {
		g.Go(func() error {
			var batch []backends.Row
			for row, err := range pt.BucketScan(gctx, br, backends.ScanOptions{}, nil) {
				if err != nil {
					return err
				}
				if batch = append(batch, row); len(batch) == r.core.BatchRows {
					if err := fn(gctx, batch); err != nil {
						return err
					}
					batch = nil
				}
			}
			if len(batch) > 0 {
				if err := fn(gctx, batch); err != nil {
					return err
				}
			}
			done(len(ranges))
			return nil
		})
	}
	return g.Wait()
}

// EachBucket is EachBucketBatch with fn called row by row; an error of fn names its row.
func (r *Router) EachBucket(ctx context.Context, fn func(context.Context, backends.Row) error, done func(total int)) error {
	return r.EachBucketBatch(ctx, func(ctx context.Context, rows []backends.Row) error {
		for _, row := range rows {
			if err := fn(ctx, row); err != nil {
				return fmt.Errorf("row %s: %w", r.PrintKey(row.Key), err)
			}
		}
		return nil
	}, done)
}
