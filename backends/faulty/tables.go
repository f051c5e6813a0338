package faulty

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
)

// The table operations: forwarded, after OpTable faults.

// CreateTable forwards to the wrapped backend, after OpTable faults.
func (f *Backend) CreateTable(ctx context.Context, table string, opts backends.TableOptions) error {
	if err := f.callFaults(ctx, OpTable, table, nil); err != nil {
		return err
	}
	return f.inner.CreateTable(ctx, table, opts)
}

// DeleteTable forwards to the wrapped backend, after OpTable faults.
func (f *Backend) DeleteTable(ctx context.Context, table string) error {
	if err := f.callFaults(ctx, OpTable, table, nil); err != nil {
		return err
	}
	return f.inner.DeleteTable(ctx, table)
}

// TableMeta forwards to the wrapped backend, after OpTable faults.
func (f *Backend) TableMeta(ctx context.Context, table string) (map[string]string, error) {
	if err := f.callFaults(ctx, OpTable, table, nil); err != nil {
		return nil, err
	}
	return f.inner.TableMeta(ctx, table)
}

// Tables forwards to the wrapped backend, after OpTable faults.
func (f *Backend) Tables(ctx context.Context) ([]string, error) {
	if err := f.callFaults(ctx, OpTable, "", nil); err != nil {
		return nil, err
	}
	return f.inner.Tables(ctx)
}

// Regions forwards to the wrapped backend when it is a RegionLister, after OpTable faults.
func (f *Backend) Regions(ctx context.Context, table string) ([][]byte, error) {
	rl, ok := f.inner.(backends.RegionLister)
	if !ok {
		return nil, fmt.Errorf("faulty: regions %q: %w: the wrapped backend does not list regions", table, backends.ErrInvalidArgument)
	}
	if err := f.callFaults(ctx, OpTable, table, nil); err != nil {
		return nil, err
	}
	return rl.Regions(ctx, table)
}

// RewriteTableMeta forwards to the wrapped backend, after OpTable faults.
func (f *Backend) RewriteTableMeta(ctx context.Context, table string, old, newMeta map[string]string) error {
	if err := f.callFaults(ctx, OpTable, table, nil); err != nil {
		return err
	}
	return f.inner.RewriteTableMeta(ctx, table, old, newMeta)
}
