package memory

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// CheckAndMutateBatch tests and applies every row under one hold of the table's write lock: each row
// is atomic, as CheckAndMutate makes it, and the batch costs one lock.
func (b *Backend) CheckAndMutateBatch(ctx context.Context, name string, ms []backends.CondMutation) ([]bool, []error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("memory: check and mutate batch %q: %w", name, err)
	}
	if err := driverkit.CheckBatch(ms, MaxKeyLen); err != nil {
		return nil, nil, fmt.Errorf("memory: check and mutate batch %q: %w", name, err)
	}
	t, err := b.table(name)
	if err != nil {
		return nil, nil, err
	}
	changes := make([]*change, len(ms))
	rowErrs := make([]error, len(ms))
	for i, cm := range ms {
		// After CheckBatch only a family the table lacks is left to refuse: that row fails alone.
		if err := driverkit.CheckFamily(t.families, cm.Cond.Family); err != nil {
			rowErrs[i] = fmt.Errorf("memory: check and mutate batch %q: condition: %w", name, err)
			continue
		}
		if changes[i], err = prepare(t.families, t.versions, cm.Mut); err != nil {
			rowErrs[i] = fmt.Errorf("memory: check and mutate batch %q: %w", name, err)
		}
	}
	applied := make([]bool, len(ms))
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return nil, nil, fmt.Errorf("memory: check and mutate batch %q: %w", name, backends.ErrTableNotFound)
	}
	now := t.stampLocked(b.now)
	for i, c := range changes {
		if c != nil && driverkit.Holds(ms[i].Cond, t.cellsLocked(c.key)) {
			t.applyLocked(c, now)
			applied[i] = true
		}
	}
	return driverkit.BatchOutcome(ctx, name, applied, rowErrs)
}
