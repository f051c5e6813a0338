package dropin

import (
	"bytes"
	"cmp"
	"fmt"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/keys"
)

// A logical key is the byte string the salter sees: the first column's value (for a multi-column
// table whose first column is variable, in tablestore.AppendKeyHead's encoding), then for a
// multi-column table the other columns in tablestore.AppendKeyTail's encoding. The physical key is
// the salter's output, which the table's KeyLayout splits into the stored columns. On a multi-column
// table the salter must only prepend a prefix, so the stored first column is the salt followed by
// the caller's value and the other columns are the caller's.

// columnValue checks one column of a caller's primary key and returns its value's bytes (for
// INTEGER, the tail encoding) with its INF option: -1 INF_MIN, +1 INF_MAX, 0 a value.
func (t *table) columnValue(i int, c *ots.PrimaryKeyColumn, allowInf bool) (val any, inf int, err error) {
	col := t.cols[i]
	if c == nil {
		return nil, 0, fmt.Errorf("%w: column %d is nil", backends.ErrInvalidKey, i)
	}
	if c.ColumnName != col.Name {
		return nil, 0, fmt.Errorf("%w: column %d is %q, the table's is %q (columns must be the table's, in order)",
			backends.ErrInvalidKey, i, c.ColumnName, col.Name)
	}
	switch c.PrimaryKeyOption {
	case ots.NONE:
	case ots.MIN, ots.MAX:
		if !allowInf {
			return nil, 0, fmt.Errorf("%w: column %s is INF_MIN/INF_MAX, which only range bounds take", backends.ErrInvalidKey, col.Name)
		}
		if c.PrimaryKeyOption == ots.MIN {
			return nil, -1, nil
		}
		return nil, +1, nil
	case ots.AUTO_INCREMENT:
		return nil, 0, fmt.Errorf("%w: column %s: AUTO_INCREMENT keys are not supported", ErrUnsupported, col.Name)
	default:
		return nil, 0, fmt.Errorf("%w: column %s: option %d", backends.ErrInvalidKey, col.Name, c.PrimaryKeyOption)
	}
	ok := false
	switch c.Value.(type) {
	case []byte:
		ok = col.Type == tablestore.KeyBinary
	case string:
		ok = col.Type == tablestore.KeyString
	case int64:
		ok = col.Type == tablestore.KeyInteger
	}
	if !ok {
		return nil, 0, fmt.Errorf("%w: column %s is %s, the value is %T", backends.ErrInvalidKey, col.Name, col.Type, c.Value)
	}
	return c.Value, 0, nil
}

func bytesOf(v any) []byte {
	switch v := v.(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	return nil
}

// keyPrefix encodes a caller's primary key as a logical key, up to its first INF column: prefix holds
// the columns before it, inf is that column's option (0 when every column is a value and prefix is the
// whole key). first is the first column's length when it was given (-1 otherwise).
func (t *table) keyPrefix(pk *ots.PrimaryKey, allowInf bool) (prefix []byte, inf, first int, err error) {
	if pk == nil {
		return nil, 0, -1, fmt.Errorf("%w: no primary key", backends.ErrInvalidKey)
	}
	if len(pk.PrimaryKeys) != len(t.cols) {
		return nil, 0, -1, fmt.Errorf("%w: %d primary-key columns, the table has %d (%s)", backends.ErrInvalidKey,
			len(pk.PrimaryKeys), len(t.cols), tablestore.FormatPrimaryKey(t.cols...))
	}
	first = -1
	// Every column is checked, those after an INF included: the service refuses a bound of the wrong
	// type wherever it is, and compareBounds relies on both bounds' values having the column's type.
	vals := make([]any, len(pk.PrimaryKeys))
	infs := make([]int, len(pk.PrimaryKeys))
	for i, c := range pk.PrimaryKeys {
		if vals[i], infs[i], err = t.columnValue(i, c, allowInf); err != nil {
			return nil, 0, -1, err
		}
	}
	for i, v := range vals {
		if inf := infs[i]; inf != 0 {
			// Columns after the first INF do not change the tuple's order among keys: the
			// service compares them only with keys equal up to the INF, and there are none.
			return prefix, inf, first, nil
		}
		if i == 0 {
			first = len(bytesOf(v))
			if t.layout.Variable() {
				prefix = tablestore.AppendKeyHead(prefix, bytesOf(v))
			} else {
				prefix = append(prefix, bytesOf(v)...)
			}
			continue
		}
		if prefix, err = tablestore.AppendKeyTail(prefix, v); err != nil {
			return nil, 0, -1, err
		}
	}
	return prefix, 0, first, nil
}

// saltLen is the length of the salt the salter prepends to logical (0 for unsalted tables).
func (t *table) saltLen(logical []byte) (int, error) {
	phys, err := t.salter.AppendPhysical(nil, logical)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", backends.ErrInvalidKey, err)
	}
	return len(phys) - len(logical), nil
}

// checkFirstWidth checks a multi-column table's fixed-width first column: with the salt, it must fill
// the column's width, or the key would not split back into the caller's columns.
func (t *table) checkFirstWidth(logical []byte, first int) error {
	if len(t.cols) == 1 || t.layout.Variable() || first < 0 {
		return nil
	}
	n, err := t.saltLen(logical)
	if err != nil {
		return err
	}
	if w := t.cols[0].Width; first+n != w {
		return fmt.Errorf("%w: column %s has %d bytes; with the %d-byte salt it must fill its width of %d, so give %d bytes",
			backends.ErrInvalidKey, t.cols[0].Name, first, n, w, w-n)
	}
	return nil
}

// physicalPK turns a caller's primary key of a row operation into the stored one.
func (t *table) physicalPK(pk *ots.PrimaryKey) (*ots.PrimaryKey, error) {
	logical, _, first, err := t.keyPrefix(pk, false)
	if err != nil {
		return nil, err
	}
	if first == 0 {
		return nil, fmt.Errorf("%w: column %s is empty", backends.ErrInvalidKey, t.cols[0].Name)
	}
	if err := t.checkFirstWidth(logical, first); err != nil {
		return nil, err
	}
	phys, err := t.salter.AppendPhysical(nil, logical)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", backends.ErrInvalidKey, err)
	}
	out, err := t.layout.PrimaryKey(phys)
	if err != nil {
		return nil, err
	}
	// A salter that does not only prepend would move the other columns: check they are the caller's,
	// and that the first is the salt followed by the caller's value.
	if len(t.cols) > 1 {
		stored, given := bytesOf(out.PrimaryKeys[0].Value), bytesOf(pk.PrimaryKeys[0].Value)
		if len(stored) != len(phys)-len(logical)+len(given) || !bytes.HasSuffix(stored, given) {
			return nil, fmt.Errorf("%w: salter %s does not store column %s as a prefix and the caller's value",
				ErrUnsupported, t.salter.Spec(), t.cols[0].Name)
		}
	}
	for i := 1; i < len(t.cols); i++ {
		if !sameValue(out.PrimaryKeys[i].Value, pk.PrimaryKeys[i].Value) {
			return nil, fmt.Errorf("%w: salter %s changes column %s; only the first column may be salted",
				ErrUnsupported, t.salter.Spec(), t.cols[i].Name)
		}
	}
	return out, nil
}

func sameValue(a, b any) bool {
	switch a := a.(type) {
	case int64:
		b, ok := b.(int64)
		return ok && a == b
	case string:
		b, ok := b.(string)
		return ok && a == b
	case []byte:
		b, ok := b.([]byte)
		return ok && bytes.Equal(a, b)
	}
	return false
}

// logicalPK turns a primary key read from the service into the caller's, with the logical key bytes.
func (t *table) logicalPK(pk *ots.PrimaryKey) (*ots.PrimaryKey, []byte, error) {
	phys, err := t.layout.Key(pk)
	if err != nil {
		return nil, nil, err
	}
	logical, err := t.salter.AppendLogical(nil, phys)
	if err != nil {
		return nil, nil, fmt.Errorf("row key %q: %w", phys, err)
	}
	out := &ots.PrimaryKey{PrimaryKeys: make([]*ots.PrimaryKeyColumn, len(t.cols))}
	first := logical
	if len(t.cols) > 1 {
		// The salter only prepends (physicalPK checks it): the caller's first column is the stored one
		// without the salt.
		n := len(phys) - len(logical)
		stored := bytesOf(pk.PrimaryKeys[0].Value)
		if n < 0 || n > len(stored) || !bytes.HasSuffix(phys, logical) {
			return nil, nil, fmt.Errorf("row key %q: %w: salter %s does not only prepend a prefix",
				phys, ErrUnsupported, t.salter.Spec())
		}
		first = stored[n:]
		for i := 1; i < len(t.cols); i++ {
			c := *pk.PrimaryKeys[i]
			out.PrimaryKeys[i] = &c
		}
	}
	var v any = first
	if t.cols[0].Type == tablestore.KeyString {
		v = string(first)
	}
	out.PrimaryKeys[0] = &ots.PrimaryKeyColumn{ColumnName: t.cols[0].Name, Value: v}
	return out, logical, nil
}

// compareBounds orders two range bounds the way the service does (INF_MIN < values < INF_MAX, column
// by column). Both have been checked by keyPrefix.
func compareBounds(a, b *ots.PrimaryKey) int {
	for i := range min(len(a.PrimaryKeys), len(b.PrimaryKeys)) {
		x, y := a.PrimaryKeys[i], b.PrimaryKeys[i]
		if c := cmp.Compare(infOf(x), infOf(y)); c != 0 {
			return c
		}
		if infOf(x) != 0 {
			continue
		}
		var c int
		switch xv := x.Value.(type) {
		case int64:
			c = cmp.Compare(xv, y.Value.(int64))
		default:
			c = bytes.Compare(bytesOf(x.Value), bytesOf(y.Value))
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func infOf(c *ots.PrimaryKeyColumn) int {
	switch c.PrimaryKeyOption {
	case ots.MIN:
		return -1
	case ots.MAX:
		return +1
	}
	return 0
}

// logicalRange maps GetRange bounds to the logical byte range [lo, hi) (empty lo: from the first key;
// nil hi: to the last). empty reports that no key lies between the bounds.
func (t *table) logicalRange(start, end *ots.PrimaryKey, dir ots.Direction) (lo, hi []byte, empty bool, err error) {
	sp, sinf, sfirst, err := t.keyPrefix(start, true)
	if err != nil {
		return nil, nil, false, fmt.Errorf("start primary key: %w", err)
	}
	ep, einf, efirst, err := t.keyPrefix(end, true)
	if err != nil {
		return nil, nil, false, fmt.Errorf("end primary key: %w", err)
	}
	if err := t.checkFirstWidth(sp, sfirst); err != nil {
		return nil, nil, false, fmt.Errorf("start primary key: %w", err)
	}
	if err := t.checkFirstWidth(ep, efirst); err != nil {
		return nil, nil, false, fmt.Errorf("end primary key: %w", err)
	}
	c := compareBounds(start, end)
	switch {
	case dir == ots.FORWARD && c >= 0:
		return nil, nil, false, fmt.Errorf("%w: FORWARD needs the start primary key below the end", backends.ErrInvalidArgument)
	case dir == ots.BACKWARD && c <= 0:
		return nil, nil, false, fmt.Errorf("%w: BACKWARD needs the start primary key above the end", backends.ErrInvalidArgument)
	case dir != ots.FORWARD && dir != ots.BACKWARD:
		return nil, nil, false, fmt.Errorf("%w: direction %d", backends.ErrInvalidArgument, dir)
	}
	var loEmpty, hiEmpty bool
	if dir == ots.FORWARD {
		lo, loEmpty = lowerBound(sp, sinf, false)
		hi, hiEmpty = upperBound(ep, einf, false)
	} else {
		hi, hiEmpty = upperBound(sp, sinf, true)
		lo, loEmpty = lowerBound(ep, einf, true)
	}
	if loEmpty || hiEmpty || (hi != nil && bytes.Compare(lo, hi) >= 0) {
		return nil, nil, true, nil
	}
	return lo, hi, false, nil
}

// lowerBound is the least logical key at or above (strict: above) a bound; empty when there is none.
func lowerBound(prefix []byte, inf int, strict bool) (lo []byte, empty bool) {
	switch {
	case inf < 0:
		return prefix, false
	case inf > 0:
		lo = keys.PrefixEnd(prefix)
		return lo, lo == nil
	case strict:
		return keys.Successor(prefix), false
	}
	return prefix, false
}

// upperBound is the exclusive logical upper end for keys below (inclusive: at or below) a bound; nil
// means no end, and empty that no key is below it.
func upperBound(prefix []byte, inf int, inclusive bool) (hi []byte, empty bool) {
	switch {
	case inf < 0:
		return prefix, len(prefix) == 0
	case inf > 0:
		return keys.PrefixEnd(prefix), false
	case inclusive:
		return keys.Successor(prefix), false
	}
	return prefix, len(prefix) == 0
}
