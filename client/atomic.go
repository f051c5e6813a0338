package client

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
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
// it did. m is a put or a delete, as in Apply; its key and cond name the same row. On a table with
// indexes it is as atomic, through the index protocol when m touches an index (index_atomic.go).
func (t *Table) CheckAndMutate(ctx context.Context, cond Condition, m Mutation) (bool, error) {
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return false, fmt.Errorf("check and mutate %s: %w", t.printKey(m.Key), err)
	case it != nil:
		return it.CheckAndMutate(ctx, cond, m)
	}
	return t.rt.CheckAndMutate(ctx, cond, m)
}

// Increment adds each delta to its counter column of the row, atomically, and returns the new
// values, one cell per Increment in the order given (decode them with CounterValue). Counters are
// 8-byte big-endian integers, HBase's; a column holding anything else fails with ErrInvalidArgument
// and nothing changes. On a table with indexes it keeps them, as a read and a conditional write on
// the row's version; its cells then carry Timestamp 0.
func (t *Table) Increment(ctx context.Context, key []byte, incs ...Increment) ([]Cell, error) {
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return nil, fmt.Errorf("increment %s: %w", t.printKey(key), err)
	case it != nil:
		return it.Increment(ctx, key, incs...)
	}
	return t.rt.Increment(ctx, key, incs)
}

// CounterValue decodes a counter cell's value; ok is false when it is not an 8-byte counter.
func CounterValue(c Cell) (n int64, ok bool) { return driverkit.CounterValue(c.Value) }
