package tablestoretest

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// PlainBuffer is the row format Tablestore embeds in protobuf bytes fields: a
// little-endian int32 header, then per row a primary-key section, an optional data
// section, an optional delete marker and a row checksum; every cell carries a CRC-8.
const (
	pbHeader = 0x75

	tagRowPK           = 0x1
	tagRowData         = 0x2
	tagCell            = 0x3
	tagCellName        = 0x4
	tagCellValue       = 0x5
	tagCellType        = 0x6
	tagCellTimestamp   = 0x7
	tagDeleteRowMarker = 0x8
	tagRowChecksum     = 0x9
	tagCellChecksum    = 0xA
	tagExtension       = 0xB

	vtInteger       = 0x0
	vtDouble        = 0x1
	vtBoolean       = 0x2
	vtString        = 0x3
	vtBlob          = 0x7
	vtInfMin        = 0x9
	vtInfMax        = 0xA
	vtAutoIncrement = 0xB

	cellDeleteAllVersions = 0x1
	cellDeleteOneVersion  = 0x3
	cellIncrement         = 0x4
)

// crc8Table is the CRC-8 lookup table for polynomial 0x07 (init 0, no reflection,
// no final xor) — the checksum the SDK and the service put on cells and rows.
var crc8Table = func() (t [256]byte) {
	for i := range t {
		c := byte(i)
		for range 8 {
			if c&0x80 != 0 {
				c = c<<1 ^ 0x07
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

func crc8(crc byte, p []byte) byte {
	for _, b := range p {
		crc = crc8Table[crc^b]
	}
	return crc
}

func crc8Byte(crc, b byte) byte { return crc8Table[crc^b] }

func crc8Int64(crc byte, v int64) byte {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(v))
	return crc8(crc, b[:])
}

// value is one PlainBuffer variant: a primary-key or attribute value, or one of the
// INF_MIN / INF_MAX / AUTO_INCREMENT placeholders that only requests carry.
type value struct {
	typ byte
	i   int64  // INTEGER; DOUBLE as IEEE bits; BOOLEAN as 0/1
	b   []byte // STRING and BLOB
}

func intValue(i int64) value     { return value{typ: vtInteger, i: i} }
func stringValue(s string) value { return value{typ: vtString, b: []byte(s)} }
func blobValue(b []byte) value   { return value{typ: vtBlob, b: b} }

func (v value) isInf() bool { return v.typ == vtInfMin || v.typ == vtInfMax }

// size is the value's data size as the service counts it for limits: the payload
// bytes without type tags and length prefixes.
func (v value) size() int {
	switch v.typ {
	case vtInteger, vtDouble:
		return 8
	case vtBoolean:
		return 1
	case vtString, vtBlob:
		return len(v.b)
	}
	return 0
}

// appendPayload appends the value as it appears after a cell-value length prefix:
// the type byte, then the payload (string/blob with their own length prefix). The
// cell checksum covers exactly these bytes.
func (v value) appendPayload(dst []byte) []byte {
	dst = append(dst, v.typ)
	switch v.typ {
	case vtInteger, vtDouble:
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v.i))
	case vtBoolean:
		dst = append(dst, byte(v.i))
	case vtString, vtBlob:
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v.b)))
		dst = append(dst, v.b...)
	}
	return dst
}

func typeName(t byte) string {
	switch t {
	case vtInteger:
		return "VT_INTEGER"
	case vtDouble:
		return "VT_DOUBLE"
	case vtBoolean:
		return "VT_BOOLEAN"
	case vtString:
		return "VT_STRING"
	case vtBlob:
		return "VT_BLOB"
	case vtInfMin:
		return "VT_INF_MIN"
	case vtInfMax:
		return "VT_INF_MAX"
	case vtAutoIncrement:
		return "VT_AUTO_INCREMENT"
	}
	return fmt.Sprintf("VT_UNKNOWN(%d)", t)
}

// comparePK orders primary-key values the way the service does: INF_MIN first,
// INF_MAX last, INTEGER as signed int64, STRING and BINARY bytewise.
func comparePK(a, b value) int {
	rank := func(v value) int {
		switch v.typ {
		case vtInfMin:
			return 0
		case vtInfMax:
			return 2
		}
		return 1
	}
	if ra, rb := rank(a), rank(b); ra != rb || ra != 1 {
		return ra - rb
	}
	if a.typ == vtInteger && b.typ == vtInteger {
		switch {
		case a.i < b.i:
			return -1
		case a.i > b.i:
			return 1
		}
		return 0
	}
	return bytes.Compare(a.b, b.b)
}
