package tablestore

import (
	"context"
	"fmt"
	"maps"
	"slices"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
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

// Variable reports a multi-column key whose first column has no fixed width: a physical key holds
// that column in AppendKeyHead's encoding, and only a text salt prefix leaves it the salt followed by
// the value.
func (l *KeyLayout) Variable() bool { return l.s.variable() }

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

// Forget drops what the backend learned of table's key, so that the next call describes it again:
// for a table dropped and created anew, possibly with another key, by another client.
func (b *Backend) Forget(table string) { b.dropSchema(table) }

// MetaTable returns the name of the table that holds the Meta of brine's tables.
func (b *Backend) MetaTable() string { return b.opts.MetaTable }

// AdoptTable stores meta for an existing table, as CreateTable stores TableOptions.Meta for the tables
// it creates: the way to use a table created without brine (by the SDK, say) with a salting spec and a
// declared key. Entries already stored are kept, and one stored with another value is refused
// (backends.ErrInvalidArgument: a table's layout cannot change in place); a MetaPrimaryKey entry must
// name the table's key columns and types. The table's rows are not touched: its keys must already be
// laid out as meta says (an empty table, or keys that already carry the salt).
func (b *Backend) AdoptTable(ctx context.Context, table string, meta map[string]string) error {
	if err := checkTableName(table); err != nil {
		return err
	}
	if table == b.opts.MetaTable {
		return fmt.Errorf("tablestore: table %q: %w: reserved for brine's table metadata", table, backends.ErrInvalidArgument)
	}
	cols, err := b.describe(ctx, table)
	if err != nil {
		return err
	}
	if spec, ok := meta[MetaPrimaryKey]; ok {
		declared, err := ParsePrimaryKey(spec)
		if err != nil {
			return err
		}
		if !sameColumns(declared, cols) {
			return fmt.Errorf("tablestore: adopt %q: %w: declared key %s, the table's is %s",
				table, backends.ErrInvalidArgument, spec, FormatPrimaryKey(cols...))
		}
	}
	row, _, err := b.getMeta(ctx, table)
	if err != nil {
		return err
	}
	merged := maps.Clone(row.Meta)
	if merged == nil {
		merged = map[string]string{}
	}
	for k, v := range meta {
		if old, ok := merged[k]; ok && old != v {
			return fmt.Errorf("tablestore: adopt %q: %w: %s is %q, not %q", table, backends.ErrInvalidArgument, k, old, v)
		}
		merged[k] = v
	}
	cells, err := encodeMeta(backends.TableOptions{Meta: merged, SplitKeys: row.SplitKeys})
	if err != nil {
		return err
	}
	if err := b.ensureMetaTable(ctx); err != nil {
		return err
	}
	if err := b.putMeta(ctx, table, cells); err != nil {
		return err
	}
	b.dropSchema(table)
	return nil
}

// DeleteMeta deletes the meta row of a table that was dropped without the backend (by the SDK, say),
// so that a table created later under its name does not inherit it, and forgets the table's key.
func (b *Backend) DeleteMeta(ctx context.Context, table string) error {
	b.dropSchema(table)
	return b.deleteMeta(ctx, table)
}
