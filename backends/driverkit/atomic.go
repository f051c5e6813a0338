package driverkit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/brine-kv/brine/backends"
)

// CounterValue decodes a counter cell's value; ok is false when it is not 8 bytes.
func CounterValue(v []byte) (n int64, ok bool) {
	if len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
}

// CounterBytes encodes a counter value.
func CounterBytes(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// CheckIncrements refuses an empty increment list or one naming a column twice, before anything is
// sent: a store could not add both deltas atomically.
func CheckIncrements(incs []backends.Increment) error {
	if len(incs) == 0 {
		return fmt.Errorf("%w: no increments", backends.ErrInvalidArgument)
	}
	seen := make(map[backends.Column]bool, len(incs))
	for _, inc := range incs {
		c := backends.Column{Family: inc.Family, Qualifier: inc.Qualifier}
		if seen[c] {
			return fmt.Errorf("%w: column %s:%s incremented twice in one call", backends.ErrInvalidArgument, c.Family, c.Qualifier)
		}
		seen[c] = true
	}
	return nil
}

// Holds reports whether cond holds for a row with these cells (newest version first per column):
// Condition's rule, for the drivers that test it themselves.
func Holds(cond backends.Condition, cells []backends.Cell) bool {
	for _, c := range cells {
		if c.Family == cond.Family && c.Qualifier == cond.Qualifier {
			return string(c.Value) == string(cond.Value)
		}
	}
	return len(cond.Value) == 0
}

// AddCounters computes the cells an Increment writes: each counter's newest value in cells (newest
// version first per column; absent: 0) plus its delta, stamped now. It fails with
// ErrInvalidArgument when a column holds anything but 8 bytes. Drivers that increment by reading and
// writing under their own lock or condition use it, so the arithmetic is one rule.
func AddCounters(cells []backends.Cell, incs []backends.Increment, now int64) ([]backends.Cell, error) {
	out := make([]backends.Cell, len(incs))
	for i, inc := range incs {
		var n int64
		ts := now
		for _, c := range cells {
			if c.Family == inc.Family && c.Qualifier == inc.Qualifier {
				v, ok := CounterValue(c.Value)
				if !ok {
					return nil, fmt.Errorf("%w: column %s:%s holds %d bytes, not an 8-byte counter", backends.ErrInvalidArgument, c.Family, c.Qualifier, len(c.Value))
				}
				// Stamped past the old version, as HBase does, so the sum wins even when the old
				// value was stamped ahead of the clock.
				n, ts = v, max(now, c.Timestamp+1)
				break
			}
		}
		out[i] = backends.Cell{Family: inc.Family, Qualifier: inc.Qualifier, Value: CounterBytes(n + inc.Delta), Timestamp: ts}
	}
	return out, nil
}

// CheckBatch refuses, before anything is sent, a batch of conditional writes that no store could
// apply as given: a key that is empty or longer than keyLimit (ErrInvalidKey; keyLimit 0 sets no
// limit), a put without cells or a negative timestamp (CheckMutation), two mutations of one row
// (ErrInvalidArgument: which one would the condition see?). Families are left to the driver.
func CheckBatch(ms []backends.CondMutation, keyLimit int) error {
	if keyLimit <= 0 {
		keyLimit = math.MaxInt
	}
	seen := make(map[string]int, len(ms))
	for i := range ms {
		m := &ms[i].Mut
		if err := CheckMutation(nil, keyLimit, m); err != nil {
			return fmt.Errorf("row %d (%q): %w", i, m.Key, err)
		}
		if j, dup := seen[string(m.Key)]; dup {
			return fmt.Errorf("rows %d and %d: %w: two mutations of row %q in one batch", j, i, backends.ErrInvalidArgument, m.Key)
		}
		seen[string(m.Key)] = i
	}
	return nil
}

// BatchOutcome turns per-row results into Backend.CheckAndMutateBatch's: rowErrs nil when no row failed; the
// whole call's error when no row got an answer because the table is missing or ctx ended.
func BatchOutcome(ctx context.Context, table string, applied []bool, rowErrs []error) ([]bool, []error, error) {
	failed := 0
	var notFound error
	for _, err := range rowErrs {
		if err != nil {
			failed++
			if notFound == nil && errors.Is(err, backends.ErrTableNotFound) {
				notFound = err
			}
		}
	}
	switch {
	case failed == 0:
		return applied, nil, nil
	case failed < len(rowErrs):
		return applied, rowErrs, nil
	case notFound != nil:
		return nil, nil, notFound
	case ctx.Err() != nil:
		return nil, nil, fmt.Errorf("brine: check and mutate batch %q: %w", table, ctx.Err())
	}
	return applied, rowErrs, nil
}
