package route

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/telemetry"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Phys is one physical table under one salter: what a router's view of the directory names
// (the table serving a logical one, and during a rebucket its target). Its methods salt keys and call
// the store; they know nothing of routes. client's handles reach it only through their Router.
type Phys struct {
	core      *Core
	Name      string
	Salter    salting.Salter
	keySchema *keys.Schema // the logical table's: errors print keys as the user writes them
}

// PhysicalKey returns the physical key and bucket of a logical key under s, or an error wrapping
// ErrInvalidKey.
func PhysicalKey(s salting.Salter, key []byte) ([]byte, int, error) {
	if len(key) == 0 {
		return nil, 0, fmt.Errorf("%w: empty row key", backends.ErrInvalidKey)
	}
	pk, b, err := salting.AppendPhysicalBucket(s, make([]byte, 0, len(key)+salting.MaxPrefixLen), key)
	if err != nil {
		return nil, 0, KeyError(key, err)
	}
	return pk, b, nil
}

func (pt *Phys) physical(key []byte) ([]byte, int, error) { return PhysicalKey(pt.Salter, key) }

// PrintKey is the package PrintKey for a key of the logical table pt serves.
func (pt *Phys) PrintKey(k []byte) string { return PrintKey(pt.keySchema, k) }

// ApplyOne writes one mutation, op naming it in telemetry and errors ("put", "delete").
func (pt *Phys) ApplyOne(ctx context.Context, op string, m backends.Mutation) (err error) {
	ctx, c := pt.core.Tel.Begin(ctx, op, pt.Name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, 1)) }()
	pk, _, err := pt.physical(m.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	logical := m.Key
	m.Key = pk
	rowErrs, err := pt.core.Backend.Apply(ctx, pt.Name, []backends.Mutation{m})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, pt.PrintKey(logical), SizeNote(err, logical, pk))
	}
	return nil
}

// Get is Table.Get on this table; rc prints keys by the key schema already (PrintedKeys).
func (pt *Phys) Get(ctx context.Context, key []byte, rc ReadConfig) (_ backends.Row, err error) {
	ctx, c := pt.core.Tel.Begin(ctx, "get", pt.Name)
	defer func() { c.End(ctx, err, telemetry.RowsIf(err, 1), 0) }()
	pk, _, err := pt.physical(key)
	if err == nil {
		err = driverkit.CheckLogicalFilter(rc.Read.Filter, rc.Read.Columns)
	}
	if err != nil {
		return backends.Row{}, fmt.Errorf("get: %w", err)
	}
	var local *backends.Filter
	rc.Read.Filter, local = splitFilter(rc.Read.Filter)
	rows, err := pt.core.Backend.Read(ctx, pt.Name, [][]byte{pk}, rc.Read)
	if err != nil {
		return backends.Row{}, fmt.Errorf("get %s: %w", pt.PrintKey(key), err)
	}
	if len(rows) != 1 {
		// A driver that breaks its contract is a bug to report, not a missing row.
		return backends.Row{}, fmt.Errorf("get %s: driver returned %d rows for one key", pt.PrintKey(key), len(rows))
	}
	if rows[0].Cells = driverkit.ApplyRow(local, key, rows[0].Cells); len(rows[0].Cells) == 0 {
		return backends.Row{}, fmt.Errorf("get %s: %w", pt.PrintKey(key), ErrNotFound)
	}
	return backends.Row{Key: key, Cells: rows[0].Cells}, nil
}

// Apply is Table.Apply on this table.
func (pt *Phys) Apply(ctx context.Context, muts []backends.Mutation) (rowErrs []error, err error) {
	ctx, c := pt.core.Tel.Begin(ctx, "apply", pt.Name)
	defer func() { c.End(ctx, err, 0, telemetry.AppliedRows(len(muts), rowErrs, err)) }()
	errs := make([]error, len(muts))
	phys := make([]backends.Mutation, len(muts))
	buckets := make([]int, len(muts))
	valid := make([]bool, len(muts))
	for i, m := range muts {
		pk, b, err := pt.physical(m.Key)
		if err != nil {
			errs[i] = fmt.Errorf("row %d: %w", i, err)
			continue
		}
		m.Key = pk
		phys[i], buckets[i], valid[i] = m, b, true
	}
	var (
		mu      sync.Mutex
		callErr error // the first whole-batch failure
		perRow  bool  // some batch got per-row outcomes: rows may have been written
	)
	pt.runBatches(ctx, buckets, valid, func(ctx context.Context, idx []int) {
		batch := make([]backends.Mutation, len(idx))
		for j, i := range idx {
			batch[j] = phys[i]
		}
		batchErrs, err := pt.core.Backend.Apply(ctx, pt.Name, batch)
		for j, i := range idx {
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("row %d (key %s): %w", i, pt.PrintKey(muts[i].Key), err)
			case batchErrs != nil && batchErrs[j] != nil:
				errs[i] = fmt.Errorf("row %d (key %s): %w", i, pt.PrintKey(muts[i].Key), SizeNote(batchErrs[j], muts[i].Key, phys[i].Key))
			}
		}
		mu.Lock()
		defer mu.Unlock()
		perRow = perRow || err == nil
		if err != nil && callErr == nil {
			callErr = err
		}
	})
	if callErr != nil && !perRow {
		return nil, fmt.Errorf("apply %s: %w", pt.Name, callErr)
	}
	return RowErrors(errs), nil
}

// GetMany is Table.GetMany on this table; rc prints keys by the key schema already.
func (pt *Phys) GetMany(ctx context.Context, keys [][]byte, rc ReadConfig) (_ []backends.Row, err error) {
	ctx, c := pt.core.Tel.Begin(ctx, "get_many", pt.Name)
	defer func() { c.End(ctx, err, telemetry.RowsIf(err, int64(len(keys))), 0) }()
	if err := driverkit.CheckLogicalFilter(rc.Read.Filter, rc.Read.Columns); err != nil {
		return nil, fmt.Errorf("get many: %w", err)
	}
	var local *backends.Filter
	rc.Read.Filter, local = splitFilter(rc.Read.Filter)
	phys := make([][]byte, len(keys))
	buckets := make([]int, len(keys))
	valid := make([]bool, len(keys))
	for i, k := range keys {
		pk, b, err := pt.physical(k)
		if err != nil {
			return nil, fmt.Errorf("get many: row %d: %w", i, err)
		}
		phys[i], buckets[i], valid[i] = pk, b, true
	}
	rows := make([]backends.Row, len(keys))
	errs := make([]error, len(keys))
	pt.runBatches(ctx, buckets, valid, func(ctx context.Context, idx []int) {
		batch := make([][]byte, len(idx))
		for j, i := range idx {
			batch[j] = phys[i]
		}
		got, err := pt.core.Backend.Read(ctx, pt.Name, batch, rc.Read)
		if err == nil && len(got) != len(idx) {
			err = fmt.Errorf("backend returned %d rows for %d keys", len(got), len(idx))
		}
		for j, i := range idx {
			if err != nil {
				errs[i] = err
				continue
			}
			rows[i] = backends.Row{Key: keys[i], Cells: driverkit.ApplyRow(local, keys[i], got[j].Cells)}
		}
	})
	for i, e := range errs {
		if e != nil {
			return nil, fmt.Errorf("get many: row %d (key %s): %w", i, pt.PrintKey(keys[i]), e)
		}
	}
	return rows, nil
}

// runBatches groups the valid indices by bucket, cuts each group into batches of at most batchRows and
// runs send on them with bounded parallelism. send must record its own outcome for every index it is
// given; runBatches returns only when every batch has been sent (or has seen the context end).
func (pt *Phys) runBatches(ctx context.Context, buckets []int, valid []bool, send func(ctx context.Context, idx []int)) {
	groups := make(map[int][]int)
	for i, ok := range valid {
		if ok {
			groups[buckets[i]] = append(groups[buckets[i]], i)
		}
	}
	var g errgroup.Group
	g.SetLimit(pt.core.Concurrency)
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), pt.core.BatchRows)
			batch := idx[:n:n]
			idx = idx[n:]
			// Batches are never skipped, even after ctx ends: send then fails fast with ctx's error and
			// records it for its rows, so no row ends without an outcome.
			g.Go(func() error { send(ctx, batch); return nil })
		}
	}
	_ = g.Wait()
}

// ApplyPhysical writes mutations whose keys are physical already as one store call: an import's
// batch, which is one bucket's.
func (pt *Phys) ApplyPhysical(ctx context.Context, muts []backends.Mutation) ([]error, error) {
	return pt.core.Backend.Apply(ctx, pt.Name, muts)
}

// CountByBucket is Table.CountByBucket on this table.
func (pt *Phys) CountByBucket(ctx context.Context) ([]int64, error) {
	ranges, err := pt.Salter.BucketRanges(nil, nil)
	if errors.Is(err, salting.ErrUnorderedRange) && pt.Salter.Buckets() == 1 {
		// A key transform such as reverse has no logical order across the table, but its one bucket
		// is the whole table: counting needs no order.
		ranges, err = []salting.BucketRange{{Bucket: 0}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count %s: %w", pt.Name, err)
	}
	counts := make([]int64, pt.Salter.Buckets())
	// The first failure cancels the other buckets' scans: each may be a whole region.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pt.core.Concurrency)
	for _, br := range ranges {
		g.Go(func() error {
			var n int64
			for _, err := range pt.core.Backend.Scan(gctx, pt.Name, backends.Range{Start: br.Start, End: br.End}, backends.ScanOptions{}) {
				if err != nil {
					return fmt.Errorf("count %s bucket %d: %w", pt.Name, br.Bucket, err)
				}
				n++
			}
			counts[br.Bucket] = n
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return counts, nil
}

// CheckAndMutate is Table.CheckAndMutate on this table.
func (pt *Phys) CheckAndMutate(ctx context.Context, cond backends.Condition, m backends.Mutation) (applied bool, err error) {
	ctx, c := pt.core.Tel.Begin(ctx, "check_and_mutate", pt.Name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, telemetry.AppliedRow(applied))) }()
	logical := m.Key
	pk, _, err := pt.physical(m.Key)
	if err != nil {
		return false, fmt.Errorf("check and mutate: %w", err)
	}
	m.Key = pk
	applied, err = pt.core.Backend.CheckAndMutate(ctx, pt.Name, cond, m)
	if err != nil {
		return false, fmt.Errorf("check and mutate %s: %w", pt.PrintKey(logical), err)
	}
	return applied, nil
}

// Increment is Table.Increment on this table.
func (pt *Phys) Increment(ctx context.Context, key []byte, incs []backends.Increment) (_ []backends.Cell, err error) {
	ctx, c := pt.core.Tel.Begin(ctx, "increment", pt.Name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, 1)) }()
	pk, _, err := pt.physical(key)
	if err != nil {
		return nil, fmt.Errorf("increment: %w", err)
	}
	cells, err := pt.core.Backend.Increment(ctx, pt.Name, pk, incs)
	if err != nil {
		return nil, fmt.Errorf("increment %s: %w", pt.PrintKey(key), err)
	}
	return cells, nil
}

// CheckAndMutateBatch does CheckAndMutate for each of ms (logical keys), grouped by bucket into
// batches of at most batchRows rows, each one CheckAndMutateBatch call, in parallel: the protocols
// built on compare-and-set (index writes, rebucket copies) pay one round trip per batch, not per row.
// applied[i] and errs[i] are ms[i]'s outcome; a row with an error may have been applied (a lost
// reply), as with CheckAndMutate. The rebucket copy writes its target with it; a Table's batch goes
// through Router.CheckAndMutateMany.
func (pt *Phys) CheckAndMutateBatch(ctx context.Context, ms []backends.CondMutation) (applied []bool, errs []error) {
	applied, errs = make([]bool, len(ms)), make([]error, len(ms))
	phys := make([]backends.CondMutation, len(ms))
	buckets := make([]int, len(ms))
	valid := make([]bool, len(ms))
	for i, m := range ms {
		pk, b, err := pt.physical(m.Mut.Key)
		if err != nil {
			errs[i] = fmt.Errorf("check and mutate %s: %w", pt.PrintKey(m.Mut.Key), err)
			continue
		}
		m.Mut.Key = pk
		phys[i], buckets[i], valid[i] = m, b, true
	}
	pt.checkAndMutatePhysical(ctx, phys, buckets, valid, applied, errs)
	return applied, errs
}

// checkAndMutatePhysical is CheckAndMutateBatch for the rows of ms (physical keys, in bucket
// buckets[i]) that are valid, straight to the store: the index protocol's data writes, which name
// the physical row they read. It fills applied and errs.
//
// Two mutations of one row go in successive rounds, in their order in ms: a batch holds one
// mutation per row (driverkit.CheckBatch), and the second one's condition must see the first applied.
func (pt *Phys) checkAndMutatePhysical(ctx context.Context, ms []backends.CondMutation, buckets []int, valid, applied []bool, errs []error) {
	ctx, c := pt.core.Tel.Begin(ctx, "check_and_mutate_batch", pt.Name)
	var written int64
	defer func() { c.End(ctx, nil, 0, written) }()
	left := valid
	for {
		round := make([]bool, len(ms))
		next := make([]bool, len(ms))
		seen := make(map[string]bool)
		more := false
		for i, ok := range left {
			switch {
			case !ok:
			case seen[string(ms[i].Mut.Key)]:
				next[i] = true
			default:
				seen[string(ms[i].Mut.Key)], round[i], more = true, true, true
			}
		}
		if !more {
			break
		}
		pt.runBatches(ctx, buckets, round, func(ctx context.Context, idx []int) {
			batch := make([]backends.CondMutation, len(idx))
			for j, i := range idx {
				batch[j] = ms[i]
			}
			a, rowErrs, err := pt.core.Backend.CheckAndMutateBatch(ctx, pt.Name, batch)
			for j, i := range idx {
				switch {
				case err != nil:
					errs[i] = fmt.Errorf("check and mutate batch %s: %w", pt.Name, err)
				case rowErrs != nil && rowErrs[j] != nil:
					errs[i] = fmt.Errorf("check and mutate batch %s: %w", pt.Name, rowErrs[j])
				default:
					applied[i] = a[j]
				}
			}
		})
		left = next
	}
	for _, a := range applied {
		if a {
			written++
		}
	}
}
