package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Table is a handle on one salted table. It is cheap, immutable and safe for concurrent use.
type Table struct {
	c         *Client
	name      string
	salter    salting.Salter
	rt        *router      // follows rebuckets; nil on the physical tables a router hands out
	keySchema *keys.Schema // stored with the table: what KeyRegexFilter matches (keyschema.go)
}

// Name is the table's name in the store.
func (t *Table) Name() string { return t.name }

// Salter is the table's salter (of a rebucketed table: the one serving it at the handle's last
// directory read).
func (t *Table) Salter() salting.Salter {
	if t.rt != nil {
		return t.rt.salter()
	}
	return t.salter
}

// physical returns the physical key and bucket of a logical key, or an error wrapping ErrInvalidKey.
func (t *Table) physical(key []byte) ([]byte, int, error) {
	if len(key) == 0 {
		return nil, 0, fmt.Errorf("%w: empty row key", backends.ErrInvalidKey)
	}
	pk, b, err := salting.AppendPhysicalBucket(t.salter, make([]byte, 0, len(key)+salting.MaxPrefixLen), key)
	if err != nil {
		return nil, 0, keyError(key, err)
	}
	return pk, b, nil
}

// Put writes cells to one row.
func (t *Table) Put(ctx context.Context, key []byte, cells ...Cell) error {
	m, err := t.putMutation(key, cells)
	if err != nil {
		return err
	}
	return t.applyOne(ctx, "put", m)
}

// Delete deletes the given columns of a row (all versions), or the whole row when none are given.
func (t *Table) Delete(ctx context.Context, key []byte, columns ...Column) error {
	return t.applyOne(ctx, "delete", deleteMutation(key, columns))
}

// putMutation is Put's mutation; a put without cells fails before anything is sent.
func (t *Table) putMutation(key []byte, cells []Cell) (Mutation, error) {
	if len(cells) == 0 {
		return Mutation{}, fmt.Errorf("put %s: %w: no cells", t.printKey(key), backends.ErrInvalidArgument)
	}
	return Mutation{Key: key, Cells: cells}, nil
}

// deleteMutation is Delete's mutation: the columns given, or the whole row.
func deleteMutation(key []byte, columns []Column) Mutation {
	m := Mutation{Key: key, Delete: true}
	for _, col := range columns {
		m.Cells = append(m.Cells, Cell{Family: col.Family, Qualifier: col.Qualifier})
	}
	return m
}

func (t *Table) applyOne(ctx context.Context, op string, m Mutation) (err error) {
	if t.rt != nil {
		return t.rt.applyOne(ctx, op, m)
	}
	ctx, c := t.c.tel.begin(ctx, op, t.name)
	defer func() { c.end(ctx, err, 0, rowsIf(err, 1)) }()
	pk, _, err := t.physical(m.Key)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	logical := m.Key
	m.Key = pk
	rowErrs, err := t.c.backend.Apply(ctx, t.name, []Mutation{m})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, t.printKey(logical), err)
	}
	return nil
}

// Get reads one row; ErrNotFound if it has no cells. A bad key fails before anything is sent.
func (t *Table) Get(ctx context.Context, key []byte, opts ...ReadOption) (_ Row, err error) {
	opts = printedKeys(t.keySchema, opts)
	if t.rt != nil {
		return t.rt.getOne(ctx, key, opts)
	}
	ctx, c := t.c.tel.begin(ctx, "get", t.name)
	defer func() { c.end(ctx, err, rowsIf(err, 1), 0) }()
	cfg := newReadConfig(opts)
	pk, _, err := t.physical(key)
	if err == nil {
		err = driverkit.CheckLogicalFilter(cfg.read.Filter, cfg.read.Columns)
	}
	if err != nil {
		return Row{}, fmt.Errorf("get: %w", err)
	}
	var local *Filter
	cfg.read.Filter, local = splitFilter(cfg.read.Filter)
	rows, err := t.c.backend.Read(ctx, t.name, [][]byte{pk}, cfg.read)
	if err != nil {
		return Row{}, fmt.Errorf("get %s: %w", t.printKey(key), err)
	}
	if len(rows) != 1 {
		// A driver that breaks its contract is a bug to report, not a missing row.
		return Row{}, fmt.Errorf("get %s: driver returned %d rows for one key", t.printKey(key), len(rows))
	}
	if rows[0].Cells = driverkit.ApplyRow(local, key, rows[0].Cells); len(rows[0].Cells) == 0 {
		return Row{}, fmt.Errorf("get %s: %w", t.printKey(key), ErrNotFound)
	}
	return Row{Key: key, Cells: rows[0].Cells}, nil
}

// Apply applies many mutations: rows are grouped by bucket, cut into batches of at most the client's
// batch size, and the batches are sent in parallel. Like Bigtable's ApplyBulk, err reports a failure
// of the whole call, when no row was written (the table is missing, ctx ended): rowErrs is then nil.
// Otherwise rowErrs is nil when every row was written, else rowErrs[i] is the error of muts[i] (nil
// for rows that were written). Every row ends either written or with an error. A row with a bad key
// fails alone, before anything is sent for it, and does not stop its neighbours: a write reports per
// row, since its neighbours may be written already (see the package documentation for the rule).
func (t *Table) Apply(ctx context.Context, muts []Mutation) (rowErrs []error, err error) {
	if t.rt != nil {
		return t.rt.apply(ctx, muts)
	}
	ctx, c := t.c.tel.begin(ctx, "apply", t.name)
	defer func() { c.end(ctx, err, 0, appliedRows(len(muts), rowErrs, err)) }()
	errs := make([]error, len(muts))
	phys := make([]Mutation, len(muts))
	buckets := make([]int, len(muts))
	valid := make([]bool, len(muts))
	for i, m := range muts {
		pk, b, err := t.physical(m.Key)
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
	t.runBatches(ctx, buckets, valid, func(ctx context.Context, idx []int) {
		batch := make([]Mutation, len(idx))
		for j, i := range idx {
			batch[j] = phys[i]
		}
		batchErrs, err := t.c.backend.Apply(ctx, t.name, batch)
		for j, i := range idx {
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("row %d (key %s): %w", i, t.printKey(muts[i].Key), err)
			case batchErrs != nil && batchErrs[j] != nil:
				errs[i] = fmt.Errorf("row %d (key %s): %w", i, t.printKey(muts[i].Key), batchErrs[j])
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
		return nil, fmt.Errorf("apply %s: %w", t.name, callErr)
	}
	return rowErrors(errs), nil
}

// applyPart applies sub, the mutations at positions idx of a larger call, and records each one's
// outcome in errs at its position: the call's error for every row when it failed whole.
func applyPart(ctx context.Context, apply func(context.Context, []Mutation) ([]error, error), sub []Mutation, idx []int, errs []error) {
	rowErrs, err := apply(ctx, sub)
	for j, i := range idx {
		switch {
		case err != nil:
			errs[i] = err
		case rowErrs != nil && rowErrs[j] != nil:
			errs[i] = rowErrs[j]
		}
	}
}

// rowErrors is errs as Apply returns it: nil when every row was written.
func rowErrors(errs []error) []error {
	if slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		return errs
	}
	return nil
}

// GetMany reads many rows, grouped by bucket and sent in parallel batches. rows[i] answers keys[i]; a
// missing row has its Key set and no Cells. A read fails whole: a bad key fails the call before
// anything is sent, and any failed batch fails the call (see the package documentation for the rule).
func (t *Table) GetMany(ctx context.Context, keys [][]byte, opts ...ReadOption) (_ []Row, err error) {
	opts = printedKeys(t.keySchema, opts)
	if t.rt != nil {
		return t.rt.getMany(ctx, keys, opts)
	}
	ctx, c := t.c.tel.begin(ctx, "get_many", t.name)
	defer func() { c.end(ctx, err, rowsIf(err, int64(len(keys))), 0) }()
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
		pk, b, err := t.physical(k)
		if err != nil {
			return nil, fmt.Errorf("get many: row %d: %w", i, err)
		}
		phys[i], buckets[i], valid[i] = pk, b, true
	}
	rows := make([]Row, len(keys))
	errs := make([]error, len(keys))
	t.runBatches(ctx, buckets, valid, func(ctx context.Context, idx []int) {
		batch := make([][]byte, len(idx))
		for j, i := range idx {
			batch[j] = phys[i]
		}
		got, err := t.c.backend.Read(ctx, t.name, batch, cfg.read)
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
			return nil, fmt.Errorf("get many: row %d (key %s): %w", i, t.printKey(keys[i]), e)
		}
	}
	return rows, nil
}

// runBatches groups the valid indices by bucket, cuts each group into batches of at most batchRows and
// runs send on them with bounded parallelism. send must record its own outcome for every index it is
// given; runBatches returns only when every batch has been sent (or has seen the context end).
func (t *Table) runBatches(ctx context.Context, buckets []int, valid []bool, send func(ctx context.Context, idx []int)) {
	groups := make(map[int][]int)
	for i, ok := range valid {
		if ok {
			groups[buckets[i]] = append(groups[buckets[i]], i)
		}
	}
	var g errgroup.Group
	g.SetLimit(t.c.concurrency)
	for _, idx := range groups {
		for len(idx) > 0 {
			n := min(len(idx), t.c.batchRows)
			batch := idx[:n:n]
			idx = idx[n:]
			// Batches are never skipped, even after ctx ends: send then fails fast with ctx's error and
			// records it for its rows, so no row ends without an outcome.
			g.Go(func() error { send(ctx, batch); return nil })
		}
	}
	_ = g.Wait()
}

// CountByBucket counts the rows stored in each bucket, reading keys only where the store allows. It is
// what shows a hotspot (one bucket holding everything) or its absence.
func (t *Table) CountByBucket(ctx context.Context) ([]int64, error) {
	if t.rt != nil {
		pt, err := t.rt.plain(ctx, "count", true)
		if err != nil {
			return nil, err
		}
		return pt.CountByBucket(ctx)
	}
	ranges, err := t.salter.BucketRanges(nil, nil)
	if errors.Is(err, salting.ErrUnorderedRange) && t.salter.Buckets() == 1 {
		// A key transform such as reverse has no logical order across the table, but its one bucket
		// is the whole table: counting needs no order.
		ranges, err = []salting.BucketRange{{Bucket: 0}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("count %s: %w", t.name, err)
	}
	counts := make([]int64, t.salter.Buckets())
	// The first failure cancels the other buckets' scans: each may be a whole region.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.c.concurrency)
	for _, br := range ranges {
		g.Go(func() error {
			var n int64
			for _, err := range t.c.backend.Scan(gctx, t.name, backends.Range{Start: br.Start, End: br.End}, backends.ScanOptions{}) {
				if err != nil {
					return fmt.Errorf("count %s bucket %d: %w", t.name, br.Bucket, err)
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
