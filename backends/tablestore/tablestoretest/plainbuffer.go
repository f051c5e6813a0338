package tablestoretest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
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

// pbCell is one decoded cell; optional parts have has* flags because their
// absence is meaningful (no value = delete, no timestamp = server-assigned).
type pbCell struct {
	name     string
	val      value
	hasValue bool
	cellType byte
	hasType  bool
	ts       int64
	hasTS    bool
}

type pbRow struct {
	pk           []pbCell
	cells        []pbCell
	deleteMarker bool
}

// pbDecoder reads one request row strictly: every tag in its place, lengths in
// bounds and every checksum verified, so a client-side encoding bug surfaces here
// instead of as silently stored garbage.
type pbDecoder struct {
	b   []byte
	off int
}

func errFormat(format string, args ...any) *otsError {
	return errParam(format, args...)
}

func (d *pbDecoder) left() int { return len(d.b) - d.off }

func (d *pbDecoder) peek() (byte, bool) {
	if d.off >= len(d.b) {
		return 0, false
	}
	return d.b[d.off], true
}

func (d *pbDecoder) byte1() (byte, *otsError) {
	if d.off >= len(d.b) {
		return 0, errFormat("Cell data broken, length is shorter than expect.")
	}
	c := d.b[d.off]
	d.off++
	return c, nil
}

func (d *pbDecoder) uint32() (uint32, *otsError) {
	if d.left() < 4 {
		return 0, errFormat("Cell data broken, length is shorter than expect.")
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v, nil
}

func (d *pbDecoder) int64() (int64, *otsError) {
	if d.left() < 8 {
		return 0, errFormat("Cell data broken, length is shorter than expect.")
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return int64(v), nil
}

func (d *pbDecoder) bytesN(n uint32) ([]byte, *otsError) {
	if uint64(n) > uint64(d.left()) {
		return nil, errFormat("Cell data broken, wrong string format, size: %d.", n)
	}
	p := d.b[d.off : d.off+int(n)]
	d.off += int(n)
	return p, nil
}

func (d *pbDecoder) expectTag(tag byte) *otsError {
	got, err := d.byte1()
	if err != nil {
		return err
	}
	if got != tag {
		return errFormat("Cell data broken, mismatch tag, actual tag(%d), expect(%d).", got, tag)
	}
	return nil
}

// decodeRow parses a PlainBuffer holding exactly one row (every request field that
// carries a row or a primary key holds one).
func decodeRow(b []byte) (*pbRow, *otsError) {
	d := &pbDecoder{b: b}
	h, err := d.uint32()
	if err != nil {
		return nil, errFormat("Input encoded PK broken, length is shorter than expect.")
	}
	if h != pbHeader {
		return nil, errFormat("Cell data broken, mismatch header, actual: %d, expect: %d.", h, pbHeader)
	}
	row, err := d.row()
	if err != nil {
		return nil, err
	}
	if d.left() != 0 {
		return nil, errFormat("Cell data broken, has more data in row, but they can't be parsed.")
	}
	return row, nil
}

func (d *pbDecoder) row() (*pbRow, *otsError) {
	if err := d.expectTag(tagRowPK); err != nil {
		return nil, err
	}
	row := &pbRow{}
	var rowCRC byte
	for t, ok := d.peek(); ok && t == tagCell; t, ok = d.peek() {
		d.off++
		c, crc, err := d.cell()
		if err != nil {
			return nil, err
		}
		row.pk = append(row.pk, c)
		rowCRC = crc8Byte(rowCRC, crc)
	}
	if len(row.pk) == 0 {
		return nil, errFormat("Cell data broken, PK is empty.")
	}
	if t, ok := d.peek(); ok && t == tagRowData {
		d.off++
		for t, ok := d.peek(); ok && t == tagCell; t, ok = d.peek() {
			d.off++
			c, crc, err := d.cell()
			if err != nil {
				return nil, err
			}
			row.cells = append(row.cells, c)
			rowCRC = crc8Byte(rowCRC, crc)
		}
	}
	if t, ok := d.peek(); ok && t == tagDeleteRowMarker {
		d.off++
		row.deleteMarker = true
	}
	if t, ok := d.peek(); ok && t == tagExtension {
		return nil, errFormat("Cell data broken, row extension is not allowed in requests.")
	}
	if t, ok := d.peek(); !ok || t != tagRowChecksum {
		return nil, errFormat("Invalid row: missing checksum.")
	}
	d.off++
	got, err := d.byte1()
	if err != nil {
		return nil, err
	}
	if row.deleteMarker {
		rowCRC = crc8Byte(rowCRC, 1)
	} else {
		rowCRC = crc8Byte(rowCRC, 0)
	}
	if got != rowCRC {
		return nil, errFormat("Cell data broken, checksum is mismatch, %d:%d", got, rowCRC)
	}
	return row, nil
}

// cell parses one cell after its TAG_CELL and returns it with its checksum. The
// checksum covers name, value payload, timestamp, then cell type — not the wire
// order (type precedes timestamp on the wire).
func (d *pbDecoder) cell() (pbCell, byte, *otsError) {
	var c pbCell
	if err := d.expectTag(tagCellName); err != nil {
		return c, 0, err
	}
	n, err := d.uint32()
	if err != nil {
		return c, 0, err
	}
	name, err := d.bytesN(n)
	if err != nil {
		return c, 0, err
	}
	c.name = string(name)
	crc := crc8(0, name)
	if t, ok := d.peek(); ok && t == tagCellValue {
		d.off++
		n, err := d.uint32()
		if err != nil {
			return c, 0, err
		}
		payload, err := d.bytesN(n)
		if err != nil {
			return c, 0, err
		}
		v, err := parsePayload(payload)
		if err != nil {
			return c, 0, err
		}
		c.val, c.hasValue = v, true
		crc = crc8(crc, payload)
	}
	if t, ok := d.peek(); ok && t == tagCellType {
		d.off++
		ct, err := d.byte1()
		if err != nil {
			return c, 0, err
		}
		c.cellType, c.hasType = ct, true
	}
	if t, ok := d.peek(); ok && t == tagCellTimestamp {
		d.off++
		ts, err := d.int64()
		if err != nil {
			return c, 0, err
		}
		c.ts, c.hasTS = ts, true
		crc = crc8Int64(crc, ts)
	}
	if c.hasType {
		crc = crc8Byte(crc, c.cellType)
	}
	if t, ok := d.peek(); !ok || t != tagCellChecksum {
		return c, 0, errFormat("Invalid Column(%s): missing checksum.", c.name)
	}
	d.off++
	got, err := d.byte1()
	if err != nil {
		return c, 0, err
	}
	if got != crc {
		return c, 0, errFormat("Cell data broken, checksum is mismatch, %d:%d", got, crc)
	}
	return c, crc, nil
}

// parsePayload decodes a value's type byte and payload, insisting that the length
// prefix matched the type exactly.
func parsePayload(p []byte) (value, *otsError) {
	if len(p) == 0 {
		return value{}, errFormat("data format is invalid.")
	}
	v := value{typ: p[0]}
	rest := p[1:]
	switch v.typ {
	case vtInteger, vtDouble:
		if len(rest) != 8 {
			return value{}, errFormat("data format is invalid.")
		}
		v.i = int64(binary.LittleEndian.Uint64(rest))
		if v.typ == vtDouble {
			f := math.Float64frombits(uint64(v.i))
			if math.IsNaN(f) {
				return value{}, errParam("NaN can't be set to double value.")
			}
			if math.IsInf(f, 0) {
				return value{}, errParam("Infinity can't be set to double value.")
			}
		}
	case vtBoolean:
		if len(rest) != 1 {
			return value{}, errParam("Invalid boolean real value, value length: %d.", len(rest))
		}
		if rest[0] != 0 {
			v.i = 1
		}
	case vtString, vtBlob:
		if len(rest) < 4 || int(binary.LittleEndian.Uint32(rest)) != len(rest)-4 {
			return value{}, errFormat("Cell data broken, wrong string format, size: %d.", len(rest))
		}
		v.b = bytes.Clone(rest[4:])
	case vtInfMin, vtInfMax, vtAutoIncrement:
		if len(rest) != 0 {
			return value{}, errFormat("data format is invalid.")
		}
	default:
		return value{}, errFormat("data format is invalid, unknown variant type occured.")
	}
	return v, nil
}

// outCell is an attribute cell of a response row: responses always carry a value
// and a timestamp (the SDK dereferences the value unconditionally).
type outCell struct {
	name string
	val  value
	ts   int64
}

// pkCol is a named primary-key column of a response row.
type pkCol struct {
	name string
	val  value
}

// pbEncoder builds a PlainBuffer response: one header, then any number of rows.
type pbEncoder struct {
	buf []byte
}

func newEncoder() *pbEncoder {
	return &pbEncoder{buf: binary.LittleEndian.AppendUint32(nil, pbHeader)}
}

func (e *pbEncoder) bytes() []byte { return e.buf }

// writeRow appends one row. Rows without data cells omit the data section, like
// the SDK's own encoder.
func (e *pbEncoder) writeRow(pk []pkCol, cells []outCell) {
	e.buf = append(e.buf, tagRowPK)
	var rowCRC byte
	for _, c := range pk {
		rowCRC = crc8Byte(rowCRC, e.writeCell(c.name, c.val, false, 0))
	}
	if len(cells) > 0 {
		e.buf = append(e.buf, tagRowData)
		for _, c := range cells {
			rowCRC = crc8Byte(rowCRC, e.writeCell(c.name, c.val, true, c.ts))
		}
	}
	rowCRC = crc8Byte(rowCRC, 0) // no delete marker in responses
	e.buf = append(e.buf, tagRowChecksum, rowCRC)
}

func (e *pbEncoder) writeCell(name string, v value, hasTS bool, ts int64) byte {
	e.buf = append(e.buf, tagCell, tagCellName)
	e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(name)))
	e.buf = append(e.buf, name...)
	crc := crc8(0, []byte(name))
	e.buf = append(e.buf, tagCellValue)
	lenAt := len(e.buf)
	e.buf = append(e.buf, 0, 0, 0, 0)
	start := len(e.buf)
	e.buf = v.appendPayload(e.buf)
	binary.LittleEndian.PutUint32(e.buf[lenAt:], uint32(len(e.buf)-start))
	crc = crc8(crc, e.buf[start:])
	if hasTS {
		e.buf = append(e.buf, tagCellTimestamp)
		e.buf = binary.LittleEndian.AppendUint64(e.buf, uint64(ts))
		crc = crc8Int64(crc, ts)
	}
	e.buf = append(e.buf, tagCellChecksum, crc)
	return crc
}

// encodePK encodes a primary key alone (next_start_primary_key, RT_PK returns).
func encodePK(pk []pkCol) []byte {
	e := newEncoder()
	e.writeRow(pk, nil)
	return e.bytes()
}
