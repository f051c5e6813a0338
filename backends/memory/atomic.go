package memory

import (
	"bytes"
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// CheckAndMutate tests cond and applies m under the table's write lock.
func (b *Backend) CheckAndMutate(ctx context.Context, name string, cond backends.Condition, m backends.Mutation) (bool, error) {
	t, err := b.atomicTable(ctx, "check and mutate", name)
	if err != nil {
		return false, err
	}
	if err := driverkit.CheckFamily(t.families, cond.Family); err != nil {
		return false, fmt.Errorf("memory: check and mutate %q: condition: %w", name, err)
	}
	c, err := prepare(t.families, t.versions, m)
	if err != nil {
		return false, fmt.Errorf("memory: check and mutate %q: %w", name, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return false, fmt.Errorf("memory: check and mutate %q: %w", name, backends.ErrTableNotFound)
	}
	if !driverkit.Holds(cond, t.cellsLocked(c.key)) {
		return false, nil
	}
	t.applyLocked(c, t.stampLocked(b.now))
	return true, nil
}

// Increment adds the deltas under the table's write lock.
func (b *Backend) Increment(ctx context.Context, name string, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	t, err := b.atomicTable(ctx, "increment", name)
	if err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("memory: increment %q: %w", name, err)
	}
	if err := driverkit.CheckIncrements(incs); err != nil {
		return nil, fmt.Errorf("memory: increment %q: %w", name, err)
	}
	for _, inc := range incs {
		if err := driverkit.CheckFamily(t.families, inc.Family); err != nil {
			return nil, fmt.Errorf("memory: increment %q: %w", name, err)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return nil, fmt.Errorf("memory: increment %q: %w", name, backends.ErrTableNotFound)
	}
	now := t.stampLocked(b.now)
	cells, err := driverkit.AddCounters(t.cellsLocked(key), incs, now)
	if err != nil {
		return nil, fmt.Errorf("memory: increment %q: %w", name, err)
	}
	c, err := prepare(t.families, t.versions, backends.Mutation{Key: key, Cells: cells})
	if err != nil {
		return nil, fmt.Errorf("memory: increment %q: %w", name, err)
	}
	t.applyLocked(c, now)
	for i := range cells {
		cells[i].Value = bytes.Clone(cells[i].Value)
	}
	return cells, nil
}

// atomicTable runs the checks every atomic operation starts with.
func (b *Backend) atomicTable(ctx context.Context, op, name string) (*table, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: %s %q: %w", op, name, err)
	}
	return b.table(name)
}
