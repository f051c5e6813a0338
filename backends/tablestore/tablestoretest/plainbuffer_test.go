package tablestoretest

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

// bitwiseCRC8 is CRC-8 (poly 0x07, init 0) computed bit by bit, independent of the
// table-driven implementation under test.
func bitwiseCRC8(crc byte, data ...byte) byte {
	for _, b := range data {
		crc ^= b
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x07
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

func le32(v int) []byte   { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
func le64(v int64) []byte { return binary.LittleEndian.AppendUint64(nil, uint64(v)) }

// semanticCellCRC recomputes a cell checksum from its meaning rather than from
// wire bytes: name, then type tag and payload (string/blob length first), then the
// timestamp.
func semanticCellCRC(name string, v any, ts *int64) byte {
	crc := bitwiseCRC8(0, []byte(name)...)
	switch x := v.(type) {
	case int64:
		crc = bitwiseCRC8(crc, append([]byte{vtInteger}, le64(x)...)...)
	case string:
		crc = bitwiseCRC8(crc, vtString)
		crc = bitwiseCRC8(crc, le32(len(x))...)
		crc = bitwiseCRC8(crc, []byte(x)...)
	case []byte:
		crc = bitwiseCRC8(crc, vtBlob)
		crc = bitwiseCRC8(crc, le32(len(x))...)
		crc = bitwiseCRC8(crc, x...)
	case float64:
		crc = bitwiseCRC8(crc, append([]byte{vtDouble}, le64(int64(math.Float64bits(x)))...)...)
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		crc = bitwiseCRC8(crc, vtBoolean, b)
	}
	if ts != nil {
		crc = bitwiseCRC8(crc, le64(*ts)...)
	}
	return crc
}

func toValue(v any) value {
	switch x := v.(type) {
	case int64:
		return intValue(x)
	case string:
		return stringValue(x)
	case []byte:
		return blobValue(x)
	case float64:
		return value{typ: vtDouble, i: int64(math.Float64bits(x))}
	case bool:
		if x {
			return value{typ: vtBoolean, i: 1}
		}
		return value{typ: vtBoolean}
	}
	panic("unsupported")
}

type testCell struct {
	name string
	v    any
	ts   int64
}

func TestEncoderChecksumsIndependent(t *testing.T) {
	tests := []struct {
		name  string
		pk    []testCell
		cells []testCell
	}{
		{"int pk only", []testCell{{name: "id", v: int64(-42)}}, nil},
		{"mixed pk", []testCell{{name: "a", v: "héllo"}, {name: "b", v: []byte{0, 1, 0xff}}, {name: "c", v: int64(math.MaxInt64)}}, nil},
		{"all attribute types", []testCell{{name: "k", v: "x"}}, []testCell{
			{"s", "value", 1700000000000}, {"i", int64(7), 1}, {"d", 3.25, 2}, {"t", true, 3}, {"f", false, 4},
			{"b", []byte("bin"), 5}, {"empty", "", 6},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pk []pkCol
			for _, c := range tc.pk {
				pk = append(pk, pkCol{name: c.name, val: toValue(c.v)})
			}
			var cells []outCell
			for _, c := range tc.cells {
				cells = append(cells, outCell{name: c.name, val: toValue(c.v), ts: c.ts})
			}
			e := newEncoder()
			e.writeRow(pk, cells)
			got := e.bytes()

			// Walk the encoding and compare every checksum with the semantic one.
			want := make([]byte, 0)
			var rowCRC byte
			for _, c := range tc.pk {
				crc := semanticCellCRC(c.name, c.v, nil)
				want = append(want, crc)
				rowCRC = bitwiseCRC8(rowCRC, crc)
			}
			for _, c := range tc.cells {
				crc := semanticCellCRC(c.name, c.v, &c.ts)
				want = append(want, crc)
				rowCRC = bitwiseCRC8(rowCRC, crc)
			}
			rowCRC = bitwiseCRC8(rowCRC, 0)
			if gotCRCs := cellChecksums(t, got); !bytes.Equal(gotCRCs, want) {
				t.Errorf("cell checksums = %x, want %x", gotCRCs, want)
			}
			if last := got[len(got)-2:]; last[0] != tagRowChecksum || last[1] != rowCRC {
				t.Errorf("row checksum = %x, want %02x %02x", last, tagRowChecksum, rowCRC)
			}
			// And our strict decoder (which verifies checksums) accepts it.
			if _, err := decodeRow(got); err != nil {
				t.Fatalf("decodeRow: %v", err)
			}
		})
	}
}

// cellChecksums extracts the byte after every TAG_CELL_CHECKSUM by parsing the
// buffer structurally.
func cellChecksums(t *testing.T, b []byte) []byte {
	t.Helper()
	off := 4
	var out []byte
	next := func() byte { off++; return b[off-1] }
	if next() != tagRowPK {
		t.Fatal("no pk tag")
	}
	for off < len(b) && b[off] == tagCell || off < len(b) && b[off] == tagRowData {
		if next() == tagRowData {
			continue
		}
		if next() != tagCellName {
			t.Fatal("no cell name")
		}
		n := int(binary.LittleEndian.Uint32(b[off:]))
		off += 4 + n
		if b[off] == tagCellValue {
			off++
			n := int(binary.LittleEndian.Uint32(b[off:]))
			off += 4 + n
		}
		if b[off] == tagCellTimestamp {
			off += 9
		}
		if next() != tagCellChecksum {
			t.Fatal("no cell checksum")
		}
		out = append(out, next())
	}
	return out
}

// TestEncoderMatchesSDK compares our encoder byte for byte with the SDK's own
// encoders for the same rows: the SDK computes its checksums independently.
func TestEncoderMatchesSDK(t *testing.T) {
	sdkPK := &tablestore.PrimaryKey{}
	sdkPK.AddPrimaryKeyColumn("p1", "abc")
	sdkPK.AddPrimaryKeyColumn("p2", int64(-5))
	sdkPK.AddPrimaryKeyColumn("p3", []byte{9, 8, 7})
	pk := []pkCol{{"p1", stringValue("abc")}, {"p2", intValue(-5)}, {"p3", blobValue([]byte{9, 8, 7})}}

	if got, want := encodePK(pk), sdkPK.Build(false); !bytes.Equal(got, want) {
		t.Errorf("encodePK = %x\nSDK Build  = %x", got, want)
	}

	put := &tablestore.PutRowChange{TableName: "t", PrimaryKey: sdkPK}
	put.AddColumnWithTimestamp("a", "text", 1000)
	put.AddColumnWithTimestamp("b", int64(12), 2000)
	put.AddColumnWithTimestamp("c", 1.5, 3000)
	put.AddColumnWithTimestamp("d", true, 4000)
	put.AddColumnWithTimestamp("e", []byte("raw"), 5000)
	e := newEncoder()
	e.writeRow(pk, []outCell{
		{"a", stringValue("text"), 1000}, {"b", intValue(12), 2000},
		{"c", value{typ: vtDouble, i: int64(math.Float64bits(1.5))}, 3000},
		{"d", value{typ: vtBoolean, i: 1}, 4000}, {"e", blobValue([]byte("raw")), 5000},
	})
	if got, want := e.bytes(), put.Serialize(); !bytes.Equal(got, want) {
		t.Errorf("writeRow = %x\nSDK       = %x", got, want)
	}
}

func TestDecodeSDKRows(t *testing.T) {
	pk := &tablestore.PrimaryKey{}
	pk.AddPrimaryKeyColumn("id", int64(1))
	upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk}
	upd.PutColumn("a", "x")
	upd.DeleteColumn("b")
	upd.DeleteColumnWithTimestamp("c", 77)
	upd.IncrementColumn("n", 3)
	row, err := decodeRow(upd.Serialize())
	if err != nil {
		t.Fatalf("decode update: %v", err)
	}
	if len(row.pk) != 1 || len(row.cells) != 4 || row.deleteMarker {
		t.Fatalf("decoded %+v", row)
	}
	if c := row.cells[1]; !c.hasType || c.cellType != cellDeleteAllVersions || c.hasValue {
		t.Errorf("delete-all cell = %+v", c)
	}
	if c := row.cells[2]; c.cellType != cellDeleteOneVersion || !c.hasTS || c.ts != 77 {
		t.Errorf("delete-one cell = %+v", c)
	}
	if c := row.cells[3]; c.cellType != cellIncrement || c.val.i != 3 {
		t.Errorf("increment cell = %+v", c)
	}

	del, err := decodeRow(pk.Build(true))
	if err != nil || !del.deleteMarker {
		t.Fatalf("decode delete: %+v, %v", del, err)
	}

	rng := &tablestore.PrimaryKey{}
	rng.AddPrimaryKeyColumnWithMinValue("a")
	rng.AddPrimaryKeyColumnWithMaxValue("b")
	r, err := decodeRow(rng.Build(false))
	if err != nil || r.pk[0].val.typ != vtInfMin || r.pk[1].val.typ != vtInfMax {
		t.Fatalf("decode range key: %+v, %v", r, err)
	}
}

func TestDecodeRejectsCorruption(t *testing.T) {
	put := &tablestore.PutRowChange{TableName: "t", PrimaryKey: &tablestore.PrimaryKey{}}
	put.PrimaryKey.AddPrimaryKeyColumn("id", "key")
	put.AddColumn("col", "value")
	good := put.Serialize()
	if _, err := decodeRow(good); err != nil {
		t.Fatalf("good row rejected: %v", err)
	}
	flipAt := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 0x01
		return b
	}
	nameAt := bytes.Index(good, []byte("key"))
	valueAt := bytes.Index(good, []byte("value"))
	tests := []struct {
		name string
		in   []byte
	}{
		{"pk value byte", flipAt(nameAt)},
		{"attribute value byte", flipAt(valueAt + 2)},
		{"row checksum", flipAt(len(good) - 1)},
		{"cell checksum", flipAt(len(good) - 3)},
		{"header", flipAt(0)},
		{"truncated", good[:len(good)-2]},
		{"trailing data", append(bytes.Clone(good), 0)},
		{"empty", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeRow(tc.in)
			if err == nil {
				t.Fatal("corrupt row accepted")
			}
			if err.code != CodeParameterInvalid || err.status != 400 {
				t.Errorf("error = %v (status %d)", err, err.status)
			}
		})
	}
}

func TestComparePK(t *testing.T) {
	ordered := [][]value{
		{{typ: vtInfMin}},
		{intValue(math.MinInt64)},
		{intValue(-1)},
		{intValue(0)},
		{intValue(math.MaxInt64)},
		{{typ: vtInfMax}},
	}
	for i := 1; i < len(ordered); i++ {
		if compareKeys(ordered[i-1], ordered[i]) >= 0 {
			t.Errorf("%v !< %v", ordered[i-1], ordered[i])
		}
	}
	strs := []string{"", "A", "B", "a", "a\x00", "ab", "\xff"}
	for i := 1; i < len(strs); i++ {
		if comparePK(stringValue(strs[i-1]), stringValue(strs[i])) >= 0 {
			t.Errorf("%q !< %q", strs[i-1], strs[i])
		}
	}
}

func FuzzDecodeRow(f *testing.F) {
	put := &tablestore.PutRowChange{TableName: "t", PrimaryKey: &tablestore.PrimaryKey{}}
	put.PrimaryKey.AddPrimaryKeyColumn("id", int64(1))
	put.AddColumn("c", "v")
	f.Add(put.Serialize())
	f.Add(put.PrimaryKey.Build(true))
	f.Fuzz(func(t *testing.T, b []byte) {
		row, err := decodeRow(b)
		if err != nil {
			return
		}
		// Anything accepted must round-trip through our encoder when it is a
		// plain response-shaped row.
		if row.deleteMarker {
			return
		}
		var pk []pkCol
		for _, c := range row.pk {
			if !c.hasValue || c.hasType || c.hasTS || c.val.isInf() || c.val.typ == vtAutoIncrement {
				return
			}
			pk = append(pk, pkCol{c.name, c.val})
		}
		var cells []outCell
		for _, c := range row.cells {
			if !c.hasValue || c.hasType || !c.hasTS {
				return
			}
			cells = append(cells, outCell{c.name, c.val, c.ts})
		}
		e := newEncoder()
		e.writeRow(pk, cells)
		if _, err := decodeRow(e.bytes()); err != nil {
			t.Fatalf("re-encoded row rejected: %v", err)
		}
	})
}
