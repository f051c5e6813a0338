package faulty

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
)

var _ backends.RowAtomic = (*Backend)(nil)

// rowAtomic returns the wrapped backend's atomic operations, or ErrUnsupported.
func (f *Backend) rowAtomic(op, table string) (backends.RowAtomic, error) {
	ra, ok := f.inner.(backends.RowAtomic)
	if !ok {
		return nil, fmt.Errorf("faulty: %s %q: %w: the wrapped backend has no atomic row operations", op, table, backends.ErrUnsupported)
	}
	return ra, nil
}

// CheckAndMutate forwards to the wrapped backend, after OpAtomic faults (Error, Timeout, Delay).
func (f *Backend) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	ra, err := f.rowAtomic("check and mutate", table)
	if err != nil {
		return false, err
	}
	if err := f.callFaults(ctx, OpAtomic, table, [][]byte{m.Key}); err != nil {
		return false, err
	}
	return ra.CheckAndMutate(ctx, table, cond, m)
}

// Increment forwards to the wrapped backend, after OpAtomic faults (Error, Timeout, Delay).
func (f *Backend) Increment(ctx context.Context, table string, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	ra, err := f.rowAtomic("increment", table)
	if err != nil {
		return nil, err
	}
	if err := f.callFaults(ctx, OpAtomic, table, [][]byte{key}); err != nil {
		return nil, err
	}
	return ra.Increment(ctx, table, key, incs)
}
