package faulty

import (
	"context"

	"github.com/brine-kv/brine/backends"
)

// CheckAndMutate forwards to the wrapped backend, after OpAtomic faults (Error, Timeout, Delay).
func (f *Backend) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	if err := f.callFaults(ctx, OpAtomic, table, [][]byte{m.Key}); err != nil {
		return false, err
	}
	return f.inner.CheckAndMutate(ctx, table, cond, m)
}

// Increment forwards to the wrapped backend, after OpAtomic faults (Error, Timeout, Delay).
func (f *Backend) Increment(ctx context.Context, table string, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	if err := f.callFaults(ctx, OpAtomic, table, [][]byte{key}); err != nil {
		return nil, err
	}
	return f.inner.Increment(ctx, table, key, incs)
}
