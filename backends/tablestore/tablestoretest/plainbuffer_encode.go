package tablestoretest

import (
	"encoding/binary"
)

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
