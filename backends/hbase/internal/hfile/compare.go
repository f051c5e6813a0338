package hfile

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Type is a cell's KeyValue type code, as HBase stores it in the last byte of a key.
type Type byte

// The cell types a store file holds (KeyValue.Type).
const (
	TypePut                 Type = 4
	TypeDelete              Type = 8  // one version of a column
	TypeDeleteFamilyVersion Type = 10 // one version of every column of the family
	TypeDeleteColumn        Type = 12 // every version of a column up to the timestamp
	TypeDeleteFamily        Type = 14 // every column of the family up to the timestamp
)

func (t Type) String() string {
	switch t {
	case TypePut:
		return "Put"
	case TypeDelete:
		return "Delete"
	case TypeDeleteFamilyVersion:
		return "DeleteFamilyVersion"
	case TypeDeleteColumn:
		return "DeleteColumn"
	case TypeDeleteFamily:
		return "DeleteFamily"
	}
	return fmt.Sprintf("Type(%d)", byte(t))
}

func (t Type) valid() bool {
	switch t {
	case TypePut, TypeDelete, TypeDeleteFamilyVersion, TypeDeleteColumn, TypeDeleteFamily:
		return true
	}
	return false
}

// Cell is one cell of a store file. A zero Type is taken as TypePut.
type Cell struct {
	Row       []byte
	Family    []byte
	Qualifier []byte
	Timestamp int64 // milliseconds, as HBase stamps cells; never negative
	Type      Type
	Value     []byte
}

func (c Cell) typ() Type {
	if c.Type == 0 {
		return TypePut
	}
	return c.Type
}

// Limits of a KeyValue's fields: the row length is a Java short, the family length a signed byte.
const (
	MaxRowLen    = math.MaxInt16
	MaxFamilyLen = math.MaxInt8
)

// ErrInvalidCell is returned for a cell HBase could not store: an empty row, a row or family too
// long, a negative timestamp, an unknown type, or a key or value past 2 GiB.
var ErrInvalidCell = errors.New("hfile: invalid cell")

func (c Cell) check() error {
	switch {
	case len(c.Row) == 0:
		return fmt.Errorf("%w: empty row", ErrInvalidCell)
	case len(c.Row) > MaxRowLen:
		return fmt.Errorf("%w: row of %d bytes (at most %d)", ErrInvalidCell, len(c.Row), MaxRowLen)
	case len(c.Family) > MaxFamilyLen:
		return fmt.Errorf("%w: family of %d bytes (at most %d)", ErrInvalidCell, len(c.Family), MaxFamilyLen)
	case c.Timestamp < 0:
		return fmt.Errorf("%w: negative timestamp %d", ErrInvalidCell, c.Timestamp)
	case !c.typ().valid():
		return fmt.Errorf("%w: type %v", ErrInvalidCell, c.Type)
	case int64(keyLen(c))+int64(len(c.Value))+cellOverhead > math.MaxInt32:
		return fmt.Errorf("%w: key of %d bytes, value of %d", ErrInvalidCell, keyLen(c), len(c.Value))
	}
	return nil
}

// Compare orders cells as HBase's CellComparatorImpl does: row, family, qualifier (each bytewise),
// then timestamp descending (newest first), then type code descending (so a delete marker comes
// before a put of the same timestamp, and hides it). It returns -1, 0 or +1. Values are not
// compared: two cells of the same key are equal.
func Compare(a, b Cell) int {
	if c := bytes.Compare(a.Row, b.Row); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Qualifier, b.Qualifier); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Timestamp, a.Timestamp); c != 0 {
		return c
	}
	return cmp.Compare(b.typ(), a.typ())
}

// keyLen is the length of c's KeyValue key: rowLen(2) row famLen(1) family qualifier ts(8) type(1).
func keyLen(c Cell) int {
	return 2 + len(c.Row) + 1 + len(c.Family) + len(c.Qualifier) + 8 + 1
}

// appendKey appends c's KeyValue key, the form of keys in data blocks, indexes and file info.
func appendKey(dst []byte, c Cell) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(c.Row)))
	dst = append(dst, c.Row...)
	dst = append(dst, byte(len(c.Family)))
	dst = append(dst, c.Family...)
	dst = append(dst, c.Qualifier...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(c.Timestamp))
	return append(dst, byte(c.typ()))
}

// ParseKey splits a KeyValue key into a cell without a value. The returned slices alias key.
func ParseKey(key []byte) (Cell, error) {
	if len(key) < 2+1+8+1 {
		return Cell{}, fmt.Errorf("hfile: key of %d bytes is too short", len(key))
	}
	rowLen := int(binary.BigEndian.Uint16(key))
	if 2+rowLen+1+9 > len(key) {
		return Cell{}, fmt.Errorf("hfile: key of %d bytes holds a row of %d", len(key), rowLen)
	}
	rest := key[2+rowLen:]
	famLen := int(rest[0])
	if 1+famLen+9 > len(rest) {
		return Cell{}, fmt.Errorf("hfile: key of %d bytes holds a family of %d", len(key), famLen)
	}
	tail := len(key) - 9
	return Cell{
		Row:       key[2 : 2+rowLen],
		Family:    rest[1 : 1+famLen],
		Qualifier: key[2+rowLen+1+famLen : tail],
		Timestamp: int64(binary.BigEndian.Uint64(key[tail:])),
		Type:      Type(key[len(key)-1]),
	}, nil
}
