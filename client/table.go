package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Table is a handle on one salted table. It is cheap, immutable and safe for concurrent use.
//
// A Table follows its table through rebuckets: its router holds the handle's view of the directory
// and sends each call to the physical table (physTable) serving it, or through a rebucket's rules.
type Table struct {
	c         *Client
	name      string
	rt        *router
	keySchema *keys.Schema // stored with the table: what KeyRegexFilter matches (keyschema.go)
}

// Name is the table's name in the store.
func (t *Table) Name() string { return t.name }

// Salter is the table's salter (of a rebucketed table: the one serving it at the handle's last
// directory read).
func (t *Table) Salter() salting.Salter { return t.rt.salter() }

// checkKey fails a key the table's salter cannot take, wrapping ErrInvalidKey, before anything is
// sent.
func (t *Table) checkKey(key []byte) error {
	_, _, err := physicalKey(t.Salter(), key)
	return err
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

func (t *Table) applyOne(ctx context.Context, op string, m Mutation) error {
	return t.rt.applyOne(ctx, op, m)
}

// Get reads one row; ErrNotFound if it has no cells. A bad key fails before anything is sent.
func (t *Table) Get(ctx context.Context, key []byte, opts ...ReadOption) (Row, error) {
	return t.rt.getOne(ctx, key, printedKeys(t.keySchema, opts))
}

// Apply applies many mutations: rows are grouped by bucket, cut into batches of at most the client's
// batch size, and the batches are sent in parallel. Like Bigtable's ApplyBulk, err reports a failure
// of the whole call, when no row was written (the table is missing, ctx ended): rowErrs is then nil.
// Otherwise rowErrs is nil when every row was written, else rowErrs[i] is the error of muts[i] (nil
// for rows that were written). Every row ends either written or with an error. A row with a bad key
// fails alone, before anything is sent for it, and does not stop its neighbours: a write reports per
// row, since its neighbours may be written already (see the package documentation for the rule).
func (t *Table) Apply(ctx context.Context, muts []Mutation) (rowErrs []error, err error) {
	return t.rt.apply(ctx, muts)
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
func (t *Table) GetMany(ctx context.Context, keys [][]byte, opts ...ReadOption) ([]Row, error) {
	return t.rt.getMany(ctx, keys, printedKeys(t.keySchema, opts))
}

// CountByBucket counts the rows stored in each bucket, reading keys only where the store allows. It is
// what shows a hotspot (one bucket holding everything) or its absence.
func (t *Table) CountByBucket(ctx context.Context) ([]int64, error) {
	pt, err := t.rt.plain(ctx, "count", true)
	if err != nil {
		return nil, err
	}
	return pt.countByBucket(ctx)
}
