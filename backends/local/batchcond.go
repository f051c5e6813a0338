package local

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// CheckAndMutateBatch tests and applies every row in one write transaction: one disk sync for the
// batch, where CheckAndMutate per row costs one each.
func (s *Backend) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	fail := func(err error) ([]bool, []error, error) {
		return nil, nil, fmt.Errorf("local: check and mutate batch %q: %w", table, err)
	}
	if err := driverkit.CheckBatch(ms, MaxKeyLen); err != nil {
		return fail(err)
	}
	ti, err := s.atomicTable(ctx, table)
	if err != nil {
		return fail(err)
	}
	versions := driverkit.Versions(ti.MaxVersions)
	now := time.Now().UnixMilli() // a guess: the transaction gives the stamp
	var a arena
	changes := make([]change, len(ms))
	rowErrs := make([]error, len(ms))
	for i := range ms {
		// After CheckBatch only a family the table lacks is left to refuse: that row fails alone.
		if err := driverkit.CheckFamily(ti.families, ms[i].Cond.Family); err != nil {
			rowErrs[i] = fmt.Errorf("local: check and mutate batch %q: condition: %w", table, err)
			continue
		}
		m := ms[i].Mut
		if changes[i], err = prepare(ti.families, versions, &m, now, &a); err != nil {
			rowErrs[i] = fmt.Errorf("local: check and mutate batch %q: %w", table, err)
		}
	}
	applied := make([]bool, len(ms))
	err = s.db.Update(func(tx *bbolt.Tx) error {
		stamp := s.clock.next()
		for i := range ms {
			if rowErrs[i] != nil {
				continue
			}
			b, cells, err := rowForUpdate(tx, ti, ms[i].Mut.Key)
			if err != nil {
				return err
			}
			if !driverkit.Holds(ms[i].Cond, cells) {
				continue
			}
			if err := restamp(&changes[i], &ms[i].Mut, ti.families, versions, stamp, &a); err != nil {
				rowErrs[i] = fmt.Errorf("local: check and mutate batch %q: %w", table, err)
				continue
			}
			if _, err := writeChange(b, &changes[i], b.Get(ms[i].Mut.Key), versions, nil); err != nil {
				return err
			}
			applied[i] = true
		}
		return nil
	})
	if err != nil {
		return fail(dbErr(err))
	}
	return driverkit.BatchOutcome(ctx, table, applied, rowErrs)
}
