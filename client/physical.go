package client

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

// physTable is one physical table under one salter: what a router's view of the directory names
// (the table serving a logical one, and during a rebucket its target). Its methods salt keys and call
// the store; they know nothing of routes. Table, the user's handle, reaches it only through its router.
type physTable struct {
	c         *Client
	name      string
	salter    salting.Salter
	keySchema *keys.Schema // the logical table's: errors print keys as the user writes them
}

// physicalKey returns the physical key and bucket of a logical key under s, or an error wrapping
// ErrInvalidKey.
func physicalKey(s salting.Salter, key []byte) ([]byte, int, error) {
	if len(key) == 0 {
		return nil, 0, fmt.Errorf("%w: empty row key", backends.ErrInvalidKey)
	}
	pk, b, err := salting.AppendPhysicalBucket(s, make([]byte, 0, len(key)+salting.MaxPrefixLen), key)
	if err != nil {
		return nil, 0, keyError(key, err)
	}
	return pk, b, nil
}

func (pt *physTable) physical(key []byte) ([]byte, int, error) { return physicalKey(pt.salter, key) }

// printKey is printKey for a key of the logical table pt serves.
func (pt *physTable) printKey(k []byte) string { return printKey(pt.keySchema, k) }

func (pt *physTable) applyOne(ctx context.Context, op string, m Mutation) (err error) {
	ctx, c := pt.c.tel.Begin(ctx, op, pt.name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, 1)) }()
	pk, _, err := pt.physical(m.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	logical := m.Key
	m.Key = pk
	rowErrs, err := pt.c.backend.Apply(ctx, pt.name, []Mutation{m})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, pt.printKey(logical), err)
	}
	return nil
}

// get is Table.Get on this table; opts already print keys by the key schema (printedKeys).
func (pt *physTable) get(ctx context.Context, key []byte, opts []ReadOption) (_ Row, err error) {
	ctx, c := pt.c.tel.Begin(ctx, "get", pt.name)
	defer func() { c.End(ctx, err, telemetry.RowsIf(err, 1), 0) }()
	cfg := newReadConfig(opts)
	pk, _, err := pt.physical(key)
	if err == nil {
		err = driverkit.CheckLogicalFilter(cfg.read.Filter, cfg.read.Columns)
	}
	if err != nil {
		return Row{}, fmt.Errorf("get: %w", err)
	}
	var local *Filter
	cfg.read.Filter, local = splitFilter(cfg.read.Filter)
	rows, err := pt.c.backend.Read(ctx, pt.name, [][]byte{pk}, cfg.read)
	if err != nil {
		return Row{}, fmt.Errorf("get %s: %w", pt.printKey(key), err)
	}
	if len(rows) != 1 {
		// A driver that breaks its contract is a bug to report, not a missing row.
		return Row{}, fmt.Errorf("get %s: driver returned %d rows for one key", pt.printKey(key), len(rows))
	}
	if rows[0].Cells = driverkit.ApplyRow(local, key, rows[0].Cells); len(rows[0].Cells) == 0 {
		return Row{}, fmt.Errorf("get %s: %w", pt.printKey(key), ErrNotFound)
	}
	return Row{Key: key, Cells: rows[0].Cells}, nil
}

// apply is Table.Apply on this table.
func (pt *physTable) apply(ctx context.Context, muts []Mutation) (rowErrs []error, err error) {
	ctx, c := pt.c.tel.Begin(ctx, "apply", pt.name)
	defer func() { c.End(ctx, err, 0, telemetry.AppliedRows(len(muts), rowErrs, err)) }()
	errs := make([]error, len(muts))
	phys := make([]Mutation, len(muts))
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
		batch := make([]Mutation, len(idx))
		for j, i := range idx {
			batch[j] = phys[i]
		}
		batchErrs, err := pt.c.backend.Apply(ctx, pt.name, batch)
		for j, i := range idx {
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("row %d (key %s): %w", i, pt.printKey(muts[i].Key), err)
			case batchErrs != nil && batchErrs[j] != nil:
				errs[i] = fmt.Errorf("row %d (key %s): %w", i, pt.printKey(muts[i].Key), batchErrs[j])
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
		return nil, fmt.Errorf("apply %s: %w", pt.name, callErr)
	}
	return rowErrors(errs), nil
}

// getMany is Table.GetMany on this table; opts already print keys by the key schema.
func (pt *physTable) getMany(ctx context.Context, keys [][]byte, opts []ReadOption) (_ []Row, err error) {
	ctx, c := pt.c.tel.Begin(ctx, "get_many", pt.name)
	defer func() { c.End(ctx, err, telemetry.RowsIf(err, int64(len(keys))), 0) }()
	cfg := newReadConfig(opts)
	if err := driverkit.CheckLogicalFilter(cfg.read.Filter, cfg.read.Columns); err != nil {
		return nil, fmt.Errorf("get many: %w", err)
	}
	var local *Filter
	cfg.read.Filter, local = splitFilter(cfg.read.Filter)
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
	rows := make([]Row, len(keys))
	errs := make([]error, len(keys))
	pt.runBatches(ctx, buckets, valid, func(ctx context.Context, idx []int) {
		batch := make([][]byte, len(idx))
		for j, i := range idx {
			batch[j] = phys[i]
		}
		got, err := pt.c.backend.Read(ctx, pt.name, batch, cfg.read)
		if err == nil && len(got) != len(idx) {
			err = fmt.Errorf("backend returned %d rows for %d keys", len(got), len(idx))
		}
		for j, i := range idx {
			if err != nil {
				errs[i] = err
				continue
			}
			rows[i] = Row{Key: keys[i], Cells: driverkit.ApplyRow(local, keys[i], got[j].Cells)}
		}
	})
	for i, e := range errs {
		if e != nil {
			return nil, fmt.Errorf("get many: row %d (key %s): %w", i, pt.printKey(keys[i]), e)
		}
	}
	return rows, nil
}

// runBatches groups the valid indices by bucket, cuts each group into batches of at most batchRows and
// runs send on them with bounded parallelism. send must record its own outcome for every index it is
// given; runBatches returns only when every batch has been sent (or has seen the context end).
func (pt *physTable) runBatches(ctx context.Context, buckets []int, valid []bool, send func(ctx context.Context, idx []int)) {
	groups := make(map[int][]int)
	for i, ok := range valid {
		if ok {
			groups[buckets[i]] = append(groups[buckets[i]], i)
		}
	}
	var g errgroup.Group
	g.SetLimit(pt.c.concurrency)
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), pt.c.batchRows)
			batch := idx[:n:n]
			idx = idx[n:]
			// Batches are never skipped, even after ctx ends: send then fails fast with ctx's error and
			// records it for its rows, so no row ends without an outcome.
			g.Go(func() error { send(ctx, batch); return nil })
		}
	}
	_ = g.Wait()
}

// countByBucket is Table.CountByBucket on this table.
func (pt *physTable) countByBucket(ctx context.Context) ([]int64, error) {
	ranges, err := pt.salter.BucketRanges(nil, nil)
	if errors.Is(err, salting.ErrUnorderedRange) && pt.salter.Buckets() == 1 {
		// A key transform such as reverse has no logical order across the table, but its one bucket
		// is the whole table: counting needs no order.
		ranges, err = []salting.BucketRange{{Bucket: 0}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count %s: %w", pt.name, err)
	}
	counts := make([]int64, pt.salter.Buckets())
	// The first failure cancels the other buckets' scans: each may be a whole region.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pt.c.concurrency)
	for _, br := range ranges {
		g.Go(func() error {
			var n int64
			for _, err := range pt.c.backend.Scan(gctx, pt.name, backends.Range{Start: br.Start, End: br.End}, backends.ScanOptions{}) {
				if err != nil {
					return fmt.Errorf("count %s bucket %d: %w", pt.name, br.Bucket, err)
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
