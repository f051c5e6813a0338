package indexproto

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/keys"
)

// Prefix is the start of the index keys whose leading parts hold vals (client.Index.Prefix).
func (d Def) Prefix(vals ...[]byte) ([]byte, error) {
	if len(vals) > len(d.Parts) {
		return nil, fmt.Errorf("index %s: %w: %d values for %d parts", d.Name, backends.ErrInvalidArgument, len(vals), len(d.Parts))
	}
	var out []byte
	for i, v := range vals {
		p := d.Parts[i]
		if p.Column.Family == "" {
			if n, err := keys.FieldsLen(v, 1); err != nil || n != len(v) {
				return nil, fmt.Errorf("index %s: %w: value %d is not one encoded key field", d.Name, backends.ErrInvalidArgument, i)
			}
			out = append(out, v...)
			continue
		}
		out = appendColumnPart(out, v, p.Desc)
	}
	return out, nil
}

// appendColumnPart encodes a column value as a keys Bytes field, so that parts never run into each
// other ("host1" is not a prefix of "host12"'s part) and compare as the values do.
func appendColumnPart(dst, v []byte, desc bool) []byte {
	if !desc {
		return keys.AppendText(dst, keys.KindBytes, v)
	}
	start := len(dst)
	dst = keys.AppendText(dst, keys.KindBytes, v)
	dst[start] = keys.KindBytes.Tag(true)
	for i := start + 1; i < len(dst); i++ {
		dst[i] ^= 0xFF
	}
	return dst
}

// Newest returns the newest value of a column among cells (sorted newest first per column).
func Newest(cells []backends.Cell, col backends.Column) ([]byte, bool) {
	for _, c := range cells {
		if c.Family == col.Family && c.Qualifier == col.Qualifier {
			return c.Value, true
		}
	}
	return nil, false
}

// EntryKey is the entry's key for a main row with these cells (client.Index.EntryKey); ok is false
// when the row has no entry (no cells, or a column part missing). A key field the key does not have
// is an error, which the caller prefixes with the index and the key: "field N: ...".
func (d Def) EntryKey(mainKey []byte, cells []backends.Cell) (key []byte, ok bool, err error) {
	if !slices.ContainsFunc(cells, func(c backends.Cell) bool { return !IsVersionCell(c) }) {
		return nil, false, nil // no data cell: DataCells, without its copy
	}
	key = make([]byte, 0, 2*len(mainKey)+32) // the parts, and the main key unless unique
	for _, p := range d.Parts {
		if p.Column.Family == "" {
			sp, err := keys.FieldSpan(mainKey, p.KeyField)
			if err != nil {
				return nil, false, fmt.Errorf("field %d: %w: %w", p.KeyField, backends.ErrInvalidKey, err)
			}
			if sp.Kind == keys.KindRaw && !d.KeyCell {
				return nil, false, fmt.Errorf("field %d: %w: a raw field runs to the end of the key, and the entry key must end with the main key", p.KeyField, backends.ErrInvalidKey)
			}
			key = append(key, mainKey[sp.Start:sp.End]...)
			continue
		}
		v, found := Newest(cells, p.Column)
		if !found {
			return nil, false, nil
		}
		key = appendColumnPart(key, v, p.Desc)
	}
	if !d.Unique {
		key = append(key, mainKey...)
	}
	return key, true, nil
}

// MainKey is the key of the main row whose entry has this key and these cells: the key cell's
// where the entries hold one (KeyCell), else the end of the entry's key, after its parts, which
// it shares. nil: no main key (an entry the protocol did not write).
func (d Def) MainKey(entryKey []byte, cells []backends.Cell) []byte {
	if d.KeyCell {
		mk, _ := Newest(cells, backends.Column{Family: EntryFamily, Qualifier: MainKeyQual})
		return mk
	}
	n, err := keys.FieldsLen(entryKey, len(d.Parts))
	if err != nil || n == len(entryKey) {
		return nil
	}
	return entryKey[n:len(entryKey):len(entryKey)]
}

// DataCells drops the version column: what a caller wrote.
func DataCells(cells []backends.Cell) []backends.Cell {
	if !slices.ContainsFunc(cells, IsVersionCell) {
		return cells
	}
	return slices.DeleteFunc(slices.Clone(cells), IsVersionCell)
}

// IsVersionCell reports whether c is the version column.
func IsVersionCell(c backends.Cell) bool { return c.Qualifier == VersionQualifier }

// EntryCells are the cells of the entry of the row mainKey with status st and the covered values
// of row: every entry the protocol, a repair or an exclusive job writes. They are in column order,
// as a store keeps them, so that a store need not sort them. An index that covers nothing has no
// covered cell: an absent column reads as the empty value it would hold.
func (d Def) EntryCells(mainKey, st []byte, row []backends.Cell) []backends.Cell {
	return d.AppendEntryCells(make([]backends.Cell, 0, 3), mainKey, st, row)
}

// AppendEntryCells appends EntryCells to dst: at most 3 cells, the main key's only where KeyCell.
func (d Def) AppendEntryCells(dst []backends.Cell, mainKey, st []byte, row []backends.Cell) []backends.Cell {
	if len(d.Covered) > 0 {
		dst = append(dst, backends.Cell{Family: EntryFamily, Qualifier: CoveredQual, Value: d.EncodeCovered(row)})
	}
	if d.KeyCell {
		dst = append(dst, backends.Cell{Family: EntryFamily, Qualifier: MainKeyQual, Value: mainKey})
	}
	return append(dst, backends.Cell{Family: EntryFamily, Qualifier: StatusQual, Value: st})
}

// EncodeCovered packs the covered columns' newest values: per column a presence byte, then the
// value, length-prefixed. Timestamps are left out: a write stamped by the server has none yet when
// its entry is written, so a covered answer carries values only (Timestamp 0).
func (d Def) EncodeCovered(cells []backends.Cell) []byte {
	var out []byte
	for _, col := range d.Covered {
		i := slices.IndexFunc(cells, func(c backends.Cell) bool { return c.Family == col.Family && c.Qualifier == col.Qualifier })
		if i < 0 {
			out = append(out, 0)
			continue
		}
		out = append(out, 1)
		out = binary.AppendUvarint(out, uint64(len(cells[i].Value)))
		out = append(out, cells[i].Value...)
	}
	return out
}

// DecodeCovered unpacks EncodeCovered's bytes into cells, sorted as a row's are.
func (d Def) DecodeCovered(b []byte) ([]backends.Cell, error) {
	var cells []backends.Cell
	for _, col := range d.Covered {
		if len(b) == 0 {
			return nil, fmt.Errorf("index %s: covered columns truncated", d.Name)
		}
		present := b[0]
		b = b[1:]
		if present == 0 {
			continue
		}
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return nil, fmt.Errorf("index %s: covered columns corrupt", d.Name)
		}
		cells = append(cells, backends.Cell{Family: col.Family, Qualifier: col.Qualifier, Value: bytes.Clone(b[n : n+int(l)])})
		b = b[n+int(l):]
	}
	slices.SortStableFunc(cells, func(a, b backends.Cell) int {
		return strings.Compare(a.Family+"\x00"+a.Qualifier, b.Family+"\x00"+b.Qualifier)
	})
	return cells, nil
}

// Touches reports whether a mutation may change an entry: it names an indexed or covered column,
// or deletes a whole family or row. An index of the row key alone (no column part, nothing covered)
// has an entry while the row has a cell: any put may create it. (A delete of columns that leaves
// no cell leaves the entry, which the row's read finds stale, as for an entry whose write failed.)
func (d Def) Touches(m backends.Mutation) bool {
	if m.Delete && len(m.Cells) == 0 || !m.Delete && d.keyOnly() {
		return true
	}
	for _, c := range m.Cells {
		if d.usesColumn(backends.Column{Family: c.Family, Qualifier: c.Qualifier}) {
			return true
		}
	}
	return false
}

// keyOnly reports whether the index reads no column: its entry is the row key's alone.
func (d Def) keyOnly() bool {
	return len(d.Covered) == 0 && !slices.ContainsFunc(d.Parts, func(p Part) bool { return p.Column.Family != "" })
}

// usesColumn reports whether the index reads col (a whole family when its Qualifier is empty).
func (d Def) usesColumn(col backends.Column) bool {
	match := func(c backends.Column) bool {
		return c.Family == col.Family && (col.Qualifier == "" || c.Qualifier == col.Qualifier)
	}
	if slices.ContainsFunc(d.Covered, match) {
		return true
	}
	return slices.ContainsFunc(d.Parts, func(p Part) bool { return p.Column.Family != "" && match(p.Column) })
}
