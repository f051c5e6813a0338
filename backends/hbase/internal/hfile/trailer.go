package hfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

const (
	// trailerSize is the fixed size of a version 3 trailer (FixedFileTrailer: 4 KiB from v3 on).
	trailerSize  = 4096
	majorVersion = 3
	// minorVersion is HFileReaderImpl.MAX_MINOR_VERSION, what HBase 2.x writes.
	minorVersion = 3
	// comparatorName is the comparator HBase 2.x names in the trailer for CellComparatorImpl: the
	// HBase 1 class name, kept so that HBase 1 can still read the file.
	comparatorName = "org.apache.hadoop.hbase.KeyValue$KeyComparator"
)

// Trailer is the fixed-size end of a file: where its sections begin and what they hold.
type Trailer struct {
	FileInfoOffset             int64
	LoadOnOpenOffset           int64
	UncompressedDataIndexSize  int64
	TotalUncompressedBytes     int64
	DataIndexCount             int // entries of the root data index
	MetaIndexCount             int
	EntryCount                 int64 // cells
	NumDataIndexLevels         int
	FirstDataBlockOffset       int64
	LastDataBlockOffset        int64
	ComparatorClassName        string
	Compression                Compression
	MajorVersion, MinorVersion int
}

// marshal encodes the trailer: magic, a length-delimited FileTrailerProto, zeros up to the fixed
// size, and the version (minor in the top byte, major in the other three) as the last 4 bytes.
func (t *Trailer) marshal() ([]byte, error) {
	var m []byte
	u := func(num protowire.Number, v uint64) {
		m = protowire.AppendTag(m, num, protowire.VarintType)
		m = protowire.AppendVarint(m, v)
	}
	u(1, uint64(t.FileInfoOffset))
	u(2, uint64(t.LoadOnOpenOffset))
	u(3, uint64(t.UncompressedDataIndexSize))
	u(4, uint64(t.TotalUncompressedBytes))
	u(5, uint64(t.DataIndexCount))
	u(6, uint64(t.MetaIndexCount))
	u(7, uint64(t.EntryCount))
	u(8, uint64(t.NumDataIndexLevels))
	u(9, uint64(t.FirstDataBlockOffset))
	u(10, uint64(t.LastDataBlockOffset))
	m = protowire.AppendTag(m, 11, protowire.BytesType)
	m = protowire.AppendString(m, t.ComparatorClassName)
	u(12, uint64(t.Compression))
	b := make([]byte, 0, trailerSize)
	b = append(b, magicTrailer[:]...)
	b = protowire.AppendVarint(b, uint64(len(m)))
	b = append(b, m...)
	if len(b) > trailerSize-4 {
		return nil, fmt.Errorf("hfile: trailer of %d bytes exceeds %d", len(b), trailerSize)
	}
	b = b[:trailerSize-4]
	return binary.BigEndian.AppendUint32(b, uint32(t.MinorVersion)<<24|uint32(t.MajorVersion)&0xffffff), nil
}

// ErrNotHFile is returned by Open for a file that does not end in a version 3 trailer.
var ErrNotHFile = errors.New("hfile: not an HFile v3")

func readTrailer(r io.ReaderAt, size int64) (*Trailer, error) {
	if size < trailerSize {
		return nil, fmt.Errorf("%w: %d bytes is shorter than a trailer", ErrNotHFile, size)
	}
	b := make([]byte, trailerSize)
	if _, err := r.ReadAt(b, size-trailerSize); err != nil {
		return nil, fmt.Errorf("hfile: reading the trailer: %w", err)
	}
	version := binary.BigEndian.Uint32(b[trailerSize-4:])
	t := &Trailer{MajorVersion: int(version & 0xffffff), MinorVersion: int(version >> 24), Compression: CompressionNone}
	if t.MajorVersion != majorVersion || blockType(b[:8]) != magicTrailer {
		return nil, fmt.Errorf("%w: version %d.%d, magic %q", ErrNotHFile, t.MajorVersion, t.MinorVersion, b[:8])
	}
	msg, n := protowire.ConsumeBytes(b[8 : trailerSize-4])
	if n < 0 {
		return nil, fmt.Errorf("hfile: trailer: %w", protowire.ParseError(n))
	}
	err := eachField(msg, func(num protowire.Number, typ protowire.Type, v []byte, u uint64) error {
		if typ == protowire.BytesType {
			if num == 11 {
				t.ComparatorClassName = string(v)
			}
			return nil
		}
		switch num {
		case 1:
			t.FileInfoOffset = int64(u)
		case 2:
			t.LoadOnOpenOffset = int64(u)
		case 3:
			t.UncompressedDataIndexSize = int64(u)
		case 4:
			t.TotalUncompressedBytes = int64(u)
		case 5:
			t.DataIndexCount = int(u)
		case 6:
			t.MetaIndexCount = int(u)
		case 7:
			t.EntryCount = int64(u)
		case 8:
			t.NumDataIndexLevels = int(u)
		case 9:
			t.FirstDataBlockOffset = int64(u)
		case 10:
			t.LastDataBlockOffset = int64(u)
		case 12:
			t.Compression = Compression(u)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}
