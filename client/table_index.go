package client

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/salting"
)

// This file holds Table's calls on its indexes. The handle learns them from the table's stored meta
// (index_state.go); a table without indexes answers them with ErrIndexNotFound.

// Index returns the table's index of that name, as of the handle's last reading of the table's
// definitions (its calls read them again once older than the refresh interval); an unknown name
// fails with ErrIndexNotFound, naming the indexes the table has.
func (t *Table) Index(name string) (*Index, error) {
	if t.view == nil {
		return nil, fmt.Errorf("table %s: %w %q (an index's own table has no indexes)", t.name, ErrIndexNotFound, name)
	}
	return t.view.cur.Load().Index(name)
}

// Indexes returns the table's indexes, sorted by name, as Index does: building ones too (see
// Index.State), not the ones being dropped. A table without indexes has none.
func (t *Table) Indexes() []*Index {
	if t.view == nil {
		return nil
	}
	return t.view.cur.Load().Indexes()
}

// RebucketIndex moves one index's table to a new salting spec, as Rebucket moves a table, while the
// table's writers and readers run: every handle's index writes and reads follow the index table's
// router, so entries land in, and are read from, the table the rebucket's step says. The spec stored
// with the table's index definition (Index.Config, Spec) stays the one the index was created with;
// the directory (RebucketStatus of IndexTableName) names the one serving it. Families and
// MaxVersions of opts are the index table's own and ignored.
func (t *Table) RebucketIndex(ctx context.Context, name string, to salting.Salter, opts RebucketOptions) error {
	it, err := t.engine(ctx, "rebucket index")
	if err != nil {
		return err
	}
	return it.RebucketIndex(ctx, name, to, opts)
}

// Exclusive fences every other writer of the table, which must have an index: it records the fence
// in the table's meta by compare-and-set, moves the active indexes to building, and waits opts.Fence
// for every handle to see it (their writes then fail with ErrFenced, retryable). A live fence of
// another holder fails it with ErrFenced, unless opts.TakeOver. An index being built by AddIndex, or
// dropped, refuses it. The holder must Release the fence; until then it renews its lease.
func (t *Table) Exclusive(ctx context.Context, opts ExclusiveOptions) (*ExclusiveTable, error) {
	it, err := t.engine(ctx, "exclusive")
	if err != nil {
		return nil, err
	}
	return it.Exclusive(ctx, opts)
}

// engine is the index engine of a call that needs one: ErrIndexNotFound for a table without
// indexes.
func (t *Table) engine(ctx context.Context, op string) (*indexedTable, error) {
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", op, t.name, err)
	case it == nil:
		return nil, fmt.Errorf("%s %s: %w: the table has no indexes", op, t.name, ErrIndexNotFound)
	}
	return it, nil
}
