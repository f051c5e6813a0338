package local

import (
	"context"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// CheckAndMutate tests cond and applies m in one write transaction, which stamps m's cells of
// timestamp 0.
func (s *Backend) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	fail := func(err error) (bool, error) { return false, fmt.Errorf("local: check and mutate %q: %w", table, err) }
	ti, err := s.atomicTable(ctx, table)
	if err != nil {
		return fail(err)
	}
	if err := driverkit.CheckFamily(ti.families, cond.Family); err != nil {
		return fail(err)
	}
	versions := driverkit.Versions(ti.MaxVersions)
	var a arena
	c, err := prepare(ti.families, versions, &m, time.Now().UnixMilli(), &a)
	if err != nil {
		return fail(err)
	}
	applied := false
	err = s.db.Update(func(tx *bbolt.Tx) error {
		b, cells, err := rowForUpdate(tx, ti, m.Key)
		if err != nil || !driverkit.Holds(cond, cells) {
			return err
		}
		if err := restamp(&c, &m, ti.families, versions, s.clock.next(), &a); err != nil {
			return err
		}
		applied = true
		_, err = writeChange(b, &c, b.Get(m.Key), versions, nil)
		return err
	})
	if err != nil {
		return fail(dbErr(err))
	}
	return applied, nil
}

// Increment adds the deltas in one write transaction.
func (s *Backend) Increment(ctx context.Context, table string, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	fail := func(err error) ([]backends.Cell, error) {
		return nil, fmt.Errorf("local: increment %q: %w", table, err)
	}
	ti, err := s.atomicTable(ctx, table)
	if err != nil {
		return fail(err)
	}
	if err := checkKey(key); err != nil {
		return fail(err)
	}
	if err := driverkit.CheckIncrements(incs); err != nil {
		return fail(err)
	}
	for _, inc := range incs {
		if err := driverkit.CheckFamily(ti.families, inc.Family); err != nil {
			return fail(err)
		}
	}
	versions := driverkit.Versions(ti.MaxVersions)
	var out []backends.Cell
	err = s.db.Update(func(tx *bbolt.Tx) error {
		b, cells, err := rowForUpdate(tx, ti, key)
		if err != nil {
			return err
		}
		now := s.clock.next()
		if out, err = driverkit.AddCounters(cells, incs, now); err != nil {
			return err
		}
		var a arena
		m := backends.Mutation{Key: key, Cells: out}
		c, err := prepare(ti.families, versions, &m, now, &a)
		if err != nil {
			return err
		}
		_, err = writeChange(b, &c, b.Get(key), versions, nil)
		return err
	})
	if err != nil {
		return fail(dbErr(err))
	}
	return out, nil
}

func (s *Backend) atomicTable(ctx context.Context, table string) (*tableInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.usable(true); err != nil {
		return nil, err
	}
	return s.table(table)
}

// rowForUpdate returns the table's bucket in tx and the newest version of each column of the row.
func rowForUpdate(tx *bbolt.Tx, ti *tableInfo, key []byte) (*bbolt.Bucket, []backends.Cell, error) {
	b := tx.Bucket(ti.bucket)
	if b == nil {
		return nil, nil, backends.ErrTableNotFound
	}
	v := b.Get(key)
	if v == nil {
		return b, nil, nil
	}
	var cp copier
	cells, err := cp.cells(v, backends.ReadOptions{})
	return b, cells, err
}
