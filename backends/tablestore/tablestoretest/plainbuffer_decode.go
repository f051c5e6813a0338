package tablestoretest

import (
	"bytes"
	"encoding/binary"
	"math"
)

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
