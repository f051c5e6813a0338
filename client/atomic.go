package client

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/telemetry"
)

// Condition and Increment are the driver contract's; see backends.Condition and backends.Increment.
type (
	// Condition is what CheckAndMutate tests: the newest version of one column holds Value (an empty
	// Value: the column is absent or empty, HBase's rule).
	Condition = backends.Condition
	// Increment adds Delta to an 8-byte big-endian counter column (absent: 0).
	Increment = backends.Increment
)

// ErrUnsupported is backends.ErrUnsupported: what was asked cannot be done faithfully, and nothing
// was sent (a cell filter under Or or Not, a new index on a table that was rebucketed).
var ErrUnsupported = backends.ErrUnsupported

// CheckAndMutate applies m to its row if cond holds there, atomically (HBase's CheckAndMutate,
// Tablestore's conditional update, a lock or transaction on the embedded stores), and reports whether
// it did. m is a put or a delete, as in Apply; its key and cond name the same row.
func (t *Table) CheckAndMutate(ctx context.Context, cond Condition, m Mutation) (bool, error) {
	pt, families, err := t.rt.prepareAtomic(ctx, m.Key)
	if err != nil {
		return false, fmt.Errorf("check and mutate %s: %w", t.printKey(m.Key), err)
	}
	return pt.checkAndMutate(ctx, cond, keepMark(m, families))
}

func (pt *physTable) checkAndMutate(ctx context.Context, cond Condition, m Mutation) (applied bool, err error) {
	ctx, c := pt.c.tel.Begin(ctx, "check_and_mutate", pt.name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, telemetry.AppliedRow(applied))) }()
	logical := m.Key
	pk, _, err := pt.physical(m.Key)
	if err != nil {
		return false, fmt.Errorf("check and mutate: %w", err)
	}
	m.Key = pk
	applied, err = pt.c.backend.CheckAndMutate(ctx, pt.name, cond, m)
	if err != nil {
		return false, fmt.Errorf("check and mutate %s: %w", pt.printKey(logical), err)
	}
	return applied, nil
}

// Increment adds each delta to its counter column of the row, atomically, and returns the new
// values, one cell per Increment in the order given (decode them with CounterValue). Counters are
// 8-byte big-endian integers, HBase's; a column holding anything else fails with ErrInvalidArgument
// and nothing changes.
func (t *Table) Increment(ctx context.Context, key []byte, incs ...Increment) ([]Cell, error) {
	pt, _, err := t.rt.prepareAtomic(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("increment %s: %w", t.printKey(key), err)
	}
	return pt.increment(ctx, key, incs)
}

func (pt *physTable) increment(ctx context.Context, key []byte, incs []Increment) (_ []Cell, err error) {
	ctx, c := pt.c.tel.Begin(ctx, "increment", pt.name)
	defer func() { c.End(ctx, err, 0, telemetry.RowsIf(err, 1)) }()
	pk, _, err := pt.physical(key)
	if err != nil {
		return nil, fmt.Errorf("increment: %w", err)
	}
	cells, err := pt.c.backend.Increment(ctx, pt.name, pk, incs)
	if err != nil {
		return nil, fmt.Errorf("increment %s: %w", pt.printKey(key), err)
	}
	return cells, nil
}

// CounterValue decodes a counter cell's value; ok is false when it is not an 8-byte counter.
func CounterValue(c Cell) (n int64, ok bool) { return driverkit.CounterValue(c.Value) }
