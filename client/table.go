package client

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Table is a handle on one salted table. It is cheap, immutable and safe for concurrent use.
//
// A Table follows its table through rebuckets: its router (package internal/route) holds the
// handle's view of the directory and sends each call to the physical table serving it, or through a
// rebucket's rules. It follows the table's definitions too: when the stored meta declares indexes
// (CreateTable with TableConfig.Indexes, AddIndex), every write keeps them in step and Index queries
// them (see the package documentation); the handle reads the definitions again once they are older
// than the client's refresh interval (ten of them for a table without indexes: WithRouteRefresh), so
// an index added or dropped by another process is kept, or no longer kept, within it.
type Table struct {
	c         *Client
	name      string
	rt        *route.Router
	keySchema *keys.Schema // stored with the table: what KeyRegexFilter matches (keyschema.go)
	// view is the table's definitions as the handle last read them (index_state.go); nil on the raw
	// handles through which the index engine reads and writes, and on index tables.
	view *indexView
}

// indexed is the index engine a call of t goes through: the one of the table's definitions read
// less than the refresh interval ago, when they declare indexes; nil for a table without (the call
// goes straight to the router), and on a raw handle.
func (t *Table) indexed(ctx context.Context) (*indexedTable, error) {
	if t.view == nil {
		return nil, nil
	}
	cur, err := t.view.refresh(ctx, false)
	if err != nil || !cur.declared {
		return nil, err
	}
	return cur, nil
}

// Name is the table's name in the store.
func (t *Table) Name() string { return t.name }

// Salter is the table's salter (of a rebucketed table: the one serving it at the handle's last
// directory read).
func (t *Table) Salter() salting.Salter { return t.rt.Salter() }

// checkKey fails a key the table's salter cannot take, wrapping ErrInvalidKey, before anything is
// sent.
func (t *Table) checkKey(key []byte) error {
	_, _, err := route.PhysicalKey(t.Salter(), key)
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

// Delete deletes the given columns of a row (all versions), or the whole row when none are given. On
// a table with indexes, deleting an indexed or covered column is refused with ErrInvalidArgument:
// delete the row or put a new value.
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
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("%s %s: %w", op, t.printKey(m.Key), err)
	case it != nil:
		return it.applyOne(ctx, op, m)
	}
	return t.rt.ApplyOne(ctx, op, m)
}

// Get reads one row; ErrNotFound if it has no cells. A bad key fails before anything is sent.
func (t *Table) Get(ctx context.Context, key []byte, opts ...ReadOption) (Row, error) {
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return Row{}, fmt.Errorf("get %s: %w", t.printKey(key), err)
	case it != nil:
		return it.Get(ctx, key, opts...)
	}
	return t.rt.Get(ctx, key, readConfig(t.keySchema, opts))
}

// Apply applies many mutations: rows are grouped by bucket, cut into batches of at most the client's
// batch size, and the batches are sent in parallel. Like Bigtable's ApplyBulk, err reports a failure
// of the whole call, when no row was written (the table is missing, ctx ended): rowErrs is then nil.
// Otherwise rowErrs is nil when every row was written, else rowErrs[i] is the error of muts[i] (nil
// for rows that were written). Every row ends either written or with an error. A row with a bad key
// fails alone, before anything is sent for it, and does not stop its neighbours: a write reports per
// row, since its neighbours may be written already (see the package documentation for the rule).
//
// On a table with indexes each row goes through the index protocol when it touches an index.
func (t *Table) Apply(ctx context.Context, muts []Mutation) (rowErrs []error, err error) {
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return nil, fmt.Errorf("apply %s: %w", t.name, err)
	case it != nil:
		return it.Apply(ctx, muts)
	}
	return t.rt.Apply(ctx, muts)
}

// GetMany reads many rows, grouped by bucket and sent in parallel batches. rows[i] answers keys[i]; a
// missing row has its Key set and no Cells. A read fails whole: a bad key fails the call before
// anything is sent, and any failed batch fails the call (see the package documentation for the rule).
func (t *Table) GetMany(ctx context.Context, keys [][]byte, opts ...ReadOption) ([]Row, error) {
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return nil, fmt.Errorf("get %s: %w", t.name, err)
	case it != nil:
		return it.GetMany(ctx, keys, opts...)
	}
	return t.rt.GetMany(ctx, keys, readConfig(t.keySchema, opts))
}

// CountByBucket counts the rows stored in each bucket, reading keys only where the store allows. It is
// what shows a hotspot (one bucket holding everything) or its absence.
func (t *Table) CountByBucket(ctx context.Context) ([]int64, error) {
	return t.rt.CountByBucket(ctx)
}
