package tablestore

import (
	"context"
	"slices"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// KeyLayout maps a table's physical row keys (salt included) to its primary key and back, with the
// rules of the package comment. It is what the SDK drop-in (package dropin) rewrites keys with. A
// KeyLayout is immutable and safe for concurrent use.
type KeyLayout struct {
	s *keySchema
}

// NewKeyLayout validates a primary key and returns its layout.
func NewKeyLayout(cols []KeyColumn) (*KeyLayout, error) {
	s, err := newKeySchema(slices.Clone(cols))
	if err != nil {
		return nil, err
	}
	return &KeyLayout{s: s}, nil
}

// KeyLayout returns the layout of a table's primary key, learned as Scan and Read learn it: from the
// service and, for a multi-column key, the stored meta or Options.Schemas.
func (b *Backend) KeyLayout(ctx context.Context, table string) (*KeyLayout, error) {
	s, err := b.schema(ctx, table)
	if err != nil {
		return nil, err
	}
	return &KeyLayout{s: s}, nil
}

// Columns returns the primary-key columns.
func (l *KeyLayout) Columns() []KeyColumn { return slices.Clone(l.s.cols) }

// PrimaryKey returns the primary key that holds a physical key. It enforces the service's key limits
// (empty keys, values over 1 KB, STRING values that are not UTF-8, malformed tails) with errors
// wrapping backends.ErrInvalidKey.
func (l *KeyLayout) PrimaryKey(key []byte) (*ots.PrimaryKey, error) {
	vals, err := l.s.values(key)
	if err != nil {
		return nil, err
	}
	return l.s.primaryKey(vals), nil
}

// Key returns the physical key a primary key read from the service holds.
func (l *KeyLayout) Key(pk *ots.PrimaryKey) ([]byte, error) { return l.s.keyOf(pk) }

// RangeKeys returns the GetRange bounds that cover the physical key range [start, end) (empty:
// unbounded) in the given direction: for FORWARD the inclusive start and exclusive end, for BACKWARD
// the inclusive start above the range and the exclusive end below it. The bounds may be looser than
// the range (a byte range is not always a key tuple), so the caller drops rows outside [start, end);
// a BACKWARD scan also returns the row equal to end, if any. ok is false when no key of the layout
// lies in the range.
func (l *KeyLayout) RangeKeys(start, end []byte, dir ots.Direction) (startPK, endPK *ots.PrimaryKey, ok bool) {
	s, e, ok := l.s.rangeBounds(start, end, dir == ots.BACKWARD)
	if !ok {
		return nil, nil, false
	}
	return l.s.primaryKey(s), l.s.primaryKey(e), true
}

// rangeBounds maps [start, end) to GetRange tuples (see RangeKeys).
func (s *keySchema) rangeBounds(start, end []byte, reverse bool) (from, to []pkVal, ok bool) {
	if reverse {
		from, to = s.upperBound(end), s.lowerBound(start, true)
		return from, to, compareTuples(from, to) > 0
	}
	from, to = s.lowerBound(start, false), s.upperBound(end)
	return from, to, compareTuples(from, to) < 0
}
