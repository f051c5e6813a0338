package backends

import (
	"encoding/binary"
	"fmt"
)

// Condition is what CheckAndMutate tests on a row: the newest version of one column holds Value,
// byte for byte. An empty Value matches a column with no version or an empty value: HBase's rule (its
// check-and-put takes an empty expected value to mean the column is absent, and cannot tell the two
// apart), kept on every store.
type Condition struct {
	Family    string
	Qualifier string
	Value     []byte
}

// Increment adds Delta to the counter in one column: an 8-byte big-endian two's-complement integer
// (HBase's Bytes.toBytes(long)); an absent column counts as 0.
type Increment struct {
	Family    string
	Qualifier string
	Delta     int64
}

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
func CheckIncrements(incs []Increment) error {
	if len(incs) == 0 {
		return fmt.Errorf("%w: no increments", ErrInvalidArgument)
	}
	seen := make(map[Column]bool, len(incs))
	for _, inc := range incs {
		c := Column{Family: inc.Family, Qualifier: inc.Qualifier}
		if seen[c] {
			return fmt.Errorf("%w: column %s:%s incremented twice in one call", ErrInvalidArgument, c.Family, c.Qualifier)
		}
		seen[c] = true
	}
	return nil
}

// Holds reports whether cond holds for a row with these cells (newest version first per column).
func (cond Condition) Holds(cells []Cell) bool {
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
func AddCounters(cells []Cell, incs []Increment, now int64) ([]Cell, error) {
	out := make([]Cell, len(incs))
	for i, inc := range incs {
		var n int64
		ts := now
		for _, c := range cells {
			if c.Family == inc.Family && c.Qualifier == inc.Qualifier {
				v, ok := CounterValue(c.Value)
				if !ok {
					return nil, fmt.Errorf("%w: column %s:%s holds %d bytes, not an 8-byte counter", ErrInvalidArgument, c.Family, c.Qualifier, len(c.Value))
				}
				// Stamped past the old version, as HBase does, so the sum wins even when the old
				// value was stamped ahead of the clock.
				n, ts = v, max(now, c.Timestamp+1)
				break
			}
		}
		out[i] = Cell{Family: inc.Family, Qualifier: inc.Qualifier, Value: CounterBytes(n + inc.Delta), Timestamp: ts}
	}
	return out, nil
}
