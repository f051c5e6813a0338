package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/telemetry"
)

// CheckAndMutate applies m to its row if cond holds there, atomically, and reports whether it did,
// as Table.CheckAndMutate does, keeping the indexes.
//
// A put that touches no index goes to the store as one conditional mutation, with a new row version
// in it. One that touches an index goes through the index protocol: the row is read, cond is checked
// on it, and the data write applies only while the row's version is the one read. That is as atomic
// as the store's own check: every put, row delete and Increment of a table with indexes writes a new
// version in the same row mutation, and a delete of columns runs under a mark that such reads wait
// out (see the package documentation), so an unchanged version means a row unchanged since cond was
// checked; a failed check writes nothing and is linearized at the read. A delete of columns no index
// uses checks cond the same way before its mark.
func (it *indexedTable) CheckAndMutate(ctx context.Context, cond Condition, m Mutation) (applied bool, err error) {
	err = it.write(ctx, func(it *indexedTable) error {
		applied, err = it.checkAndMutate(ctx, cond, m)
		return err
	})
	return applied, err
}

func (it *indexedTable) checkAndMutate(ctx context.Context, cond Condition, m Mutation) (applied bool, err error) {
	indexed, err := it.indexedMutation(m)
	if err != nil {
		return false, fmt.Errorf("check and mutate %s: %w", it.t.printKey(m.Key), err)
	}
	if !indexed && !m.Delete {
		return it.t.CheckAndMutate(ctx, cond, it.stamp(m))
	}
	ctx, c := it.t.c.core.Tel.Begin(ctx, "check_and_mutate", it.t.name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, telemetry.AppliedRow(applied))) }()
	if err := it.t.checkKey(m.Key); err != nil {
		return false, fmt.Errorf("check and mutate: %w", err)
	}
	if indexed {
		applied, err = it.writeDerived(ctx, m.Key, false, true, func(row []Cell) (Mutation, bool, error) {
			return m, driverkit.Holds(cond, row), nil
		})
	} else {
		applied, err = it.deleteColumns(ctx, m, &cond)
	}
	if err != nil {
		return false, fmt.Errorf("check and mutate %s: %w", it.t.printKey(m.Key), err)
	}
	return applied, nil
}

// Increment adds each delta to its counter column of the row and returns the new values, as
// Table.Increment does, keeping the indexes. It is a read and a conditional write on the row's
// version (retried while other writers change the row), so that the row's version changes with its
// counters: what keeps CheckAndMutate's condition atomic. The cells returned carry Timestamp 0: the
// store stamps them on write.
func (it *indexedTable) Increment(ctx context.Context, key []byte, incs ...Increment) (out []Cell, err error) {
	err = it.write(ctx, func(it *indexedTable) error {
		out, err = it.increment(ctx, key, incs)
		return err
	})
	return out, err
}

func (it *indexedTable) increment(ctx context.Context, key []byte, incs []Increment) (_ []Cell, err error) {
	ctx, c := it.t.c.core.Tel.Begin(ctx, "increment", it.t.name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, 1)) }()
	if err := driverkit.CheckIncrements(incs); err != nil {
		return nil, fmt.Errorf("increment %s: %w", it.t.printKey(key), err)
	}
	var out []Cell
	_, err = it.writeDerived(ctx, key, false, true, func(row []Cell) (Mutation, bool, error) {
		out = out[:0]
		for _, inc := range incs {
			n := int64(0)
			if v, ok := indexproto.Newest(row, Column{Family: inc.Family, Qualifier: inc.Qualifier}); ok {
				var counter bool
				if n, counter = driverkit.CounterValue(v); !counter {
					return Mutation{}, false, fmt.Errorf("%w: column %s:%s holds %d bytes, not an 8-byte counter", backends.ErrInvalidArgument, inc.Family, inc.Qualifier, len(v))
				}
			}
			out = append(out, Cell{Family: inc.Family, Qualifier: inc.Qualifier, Value: driverkit.CounterBytes(n + inc.Delta)})
		}
		return Mutation{Key: key, Cells: slices.Clone(out)}, true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("increment %s: %w", it.t.printKey(key), err)
	}
	return out, nil
}
