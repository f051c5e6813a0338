package hfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// pbMagic prefixes HBase's protobuf-serialized metadata (ProtobufMagic.PB_MAGIC).
var pbMagic = []byte("PBUF")

// File info keys: HFileInfo's reserved "hfile." ones, HFileWriterImpl's and HStoreFile's.
const (
	InfoLastKey             = "hfile.LASTKEY"
	InfoAvgKeyLen           = "hfile.AVG_KEY_LEN"
	InfoAvgValueLen         = "hfile.AVG_VALUE_LEN"
	InfoCreateTime          = "hfile.CREATE_TIME_TS"
	InfoKeyOfBiggestCell    = "hfile.KEY_OF_BIGGEST_CELL"
	InfoLenOfBiggestCell    = "hfile.LEN_OF_BIGGEST_CELL"
	InfoMaxTagsLen          = "hfile.MAX_TAGS_LEN"
	InfoTagsCompressed      = "hfile.TAGS_COMPRESSED"
	InfoMaxMemstoreTS       = "MAX_MEMSTORE_TS_KEY"
	InfoKeyValueVersion     = "KEY_VALUE_VERSION"
	InfoTimeRange           = "TIMERANGE"
	InfoEarliestPutTS       = "EARLIEST_PUT_TS"
	InfoBulkLoadTime        = "BULKLOAD_TIMESTAMP"
	InfoBulkLoadTask        = "BULKLOAD_SOURCE_TASK"
	InfoMajorCompaction     = "MAJOR_COMPACTION_KEY"
	InfoExcludeFromMinor    = "EXCLUDE_FROM_MINOR_COMPACTION"
	InfoDeleteFamilyCount   = "DELETE_FAMILY_COUNT"
	keyValueVerWithMemstore = 1 // KEY_VALUE_VERSION: cells carry a memstore timestamp
)

// FileInfo is a file's name/value metadata. HBase keeps it in a map sorted bytewise by name.
type FileInfo map[string][]byte

// Int64 reads a value HBase stores as Bytes.toBytes(long).
func (fi FileInfo) Int64(name string) (int64, bool) {
	v, ok := fi[name]
	if !ok || len(v) != 8 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(v)), true
}

// Int32 reads a value HBase stores as Bytes.toBytes(int).
func (fi FileInfo) Int32(name string) (int32, bool) {
	v, ok := fi[name]
	if !ok || len(v) != 4 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(v)), true
}

// TimeRange reads TIMERANGE: the smallest and largest timestamp the file's cells cover.
func (fi FileInfo) TimeRange() (from, to int64, err error) {
	v, ok := fi[InfoTimeRange]
	if !ok {
		return 0, 0, errors.New("hfile: no TIMERANGE in file info")
	}
	return decodeTimeRange(v)
}

func int64Bytes(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }
func int32Bytes(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func boolBytes(v bool) []byte {
	if v {
		return []byte{0xff} // Bytes.toBytes(true)
	}
	return []byte{0}
}

// marshal encodes the file info block: PBUF, then a length-delimited FileInfoProto whose
// map_entry (1) fields are BytesBytesPairs (first = 1, second = 2), names in byte order.
func (fi FileInfo) marshal() []byte {
	names := make([]string, 0, len(fi))
	for n := range fi {
		names = append(names, n)
	}
	slices.Sort(names) // Go compares strings bytewise, as Bytes.BYTES_COMPARATOR does
	var msg []byte
	for _, n := range names {
		var pair []byte
		pair = protowire.AppendTag(pair, 1, protowire.BytesType)
		pair = protowire.AppendString(pair, n)
		pair = protowire.AppendTag(pair, 2, protowire.BytesType)
		pair = protowire.AppendBytes(pair, fi[n])
		msg = protowire.AppendTag(msg, 1, protowire.BytesType)
		msg = protowire.AppendBytes(msg, pair)
	}
	out := append([]byte(nil), pbMagic...)
	out = protowire.AppendVarint(out, uint64(len(msg)))
	return append(out, msg...)
}

func parseFileInfo(data []byte) (FileInfo, error) {
	if !bytes.HasPrefix(data, pbMagic) {
		return nil, errors.New("hfile: file info lacks the PBUF magic")
	}
	msg, n := protowire.ConsumeBytes(data[len(pbMagic):])
	if n < 0 {
		return nil, fmt.Errorf("hfile: file info: %w", protowire.ParseError(n))
	}
	fi := FileInfo{}
	err := eachField(msg, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if num != 1 || typ != protowire.BytesType {
			return nil
		}
		var name, value []byte
		var seen int
		err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
			switch {
			case num == 1 && typ == protowire.BytesType:
				name, seen = v, seen|1
			case num == 2 && typ == protowire.BytesType:
				value, seen = v, seen|2
			}
			return nil
		})
		if err != nil {
			return err
		}
		if seen != 3 {
			return errors.New("hfile: file info entry without a name or a value")
		}
		fi[string(name)] = append([]byte(nil), value...)
		return nil
	})
	return fi, err
}

// eachField calls fn for each field of a protobuf message: v holds a bytes field's content, u a
// varint's value; other wire types are skipped.
func eachField(msg []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, u uint64) error) error {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return fmt.Errorf("hfile: protobuf: %w", protowire.ParseError(n))
		}
		msg = msg[n:]
		var v []byte
		var u uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(msg)
		case protowire.VarintType:
			u, n = protowire.ConsumeVarint(msg)
		default:
			n = protowire.ConsumeFieldValue(num, typ, msg)
		}
		if n < 0 {
			return fmt.Errorf("hfile: protobuf field %d: %w", num, protowire.ParseError(n))
		}
		msg = msg[n:]
		if err := fn(num, typ, v, u); err != nil {
			return err
		}
	}
	return nil
}

// encodeTimeRange is TimeRangeTracker.toByteArray: PBUF, then a TimeRangeTracker message
// (from = 1, to = 2), not length-delimited.
func encodeTimeRange(from, to int64) []byte {
	b := append([]byte(nil), pbMagic...)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(from))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(to))
}

func decodeTimeRange(v []byte) (from, to int64, err error) {
	if !bytes.HasPrefix(v, pbMagic) {
		return 0, 0, errors.New("hfile: TIMERANGE lacks the PBUF magic")
	}
	err = eachField(v[len(pbMagic):], func(num protowire.Number, typ protowire.Type, _ []byte, u uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			from = int64(u)
		case num == 2 && typ == protowire.VarintType:
			to = int64(u)
		}
		return nil
	})
	return from, to, err
}

// Hadoop's WritableUtils variable-length integers: one byte for -112..127, else a byte giving the
// sign and length (-113..-120 positive, -121..-128 negative) and the magnitude big-endian.
func appendVint(b []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(b, byte(v))
	}
	l := int64(-112)
	if v < 0 {
		v, l = ^v, -120
	}
	n := 0
	for t := v; t != 0; t >>= 8 {
		n++
	}
	b = append(b, byte(l-int64(n)))
	for i := n - 1; i >= 0; i-- {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func vintSize(v int64) int { return len(appendVint(nil, v)) }

// readVint returns the value and the bytes it took, or n <= 0 if b is too short.
func readVint(b []byte) (v int64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	first := int8(b[0])
	if first >= -112 {
		return int64(first), 1
	}
	neg := first < -120
	size := int(-111 - int(first))
	if neg {
		size = int(-119 - int(first))
	}
	if len(b) < size {
		return 0, 0
	}
	for _, c := range b[1:size] {
		v = v<<8 | int64(c)
	}
	if neg {
		v = ^v
	}
	return v, size
}
