package hfile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// Defaults, HBase's own: hbase.mapreduce.hfileoutputformat.blocksize (the family's BLOCKSIZE),
// hfile.index.block.max.size and hfile.index.block.min.entries.
const (
	DefaultBlockSize       = 64 * 1024
	DefaultIndexBlockSize  = 128 * 1024
	DefaultMinIndexEntries = 16
)

// Options shape a file. Family is required; zero values take HBase's defaults.
type Options struct {
	// Family is the column family of every cell: a store file belongs to one family.
	Family []byte
	// BlockSize is the uncompressed size at which a data block is closed (the next cell of a
	// different key starts a new one). Default 64 KiB.
	BlockSize int
	// IndexBlockSize is the size at which an index block is closed, and above which the root index
	// gets another level below it. Default 128 KiB; tests use small ones to force three levels.
	IndexBlockSize int
	// MinIndexEntries is the fewest entries of an intermediate index block, so that big keys
	// cannot make a level per entry. Default 16.
	MinIndexEntries int
	// BytesPerChecksum is the chunk each CRC32C covers. Default 16 KiB.
	BytesPerChecksum int
	// Compression is the codec of every block; zero means CompressionNone.
	Compression Compression
	// CreateTime is stored as CREATE_TIME_TS; zero means the time NewWriter is called.
	CreateTime time.Time
	// BulkLoadTime is stored as BULKLOAD_TIMESTAMP, which marks the file as bulk-loaded; zero means
	// CreateTime.
	BulkLoadTime time.Time
	// SourceTask, if set, is stored as BULKLOAD_SOURCE_TASK (HFileOutputFormat2 names its task
	// attempt there).
	SourceTask string
}

func (o Options) withDefaults() Options {
	if o.BlockSize <= 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.IndexBlockSize <= 0 {
		o.IndexBlockSize = DefaultIndexBlockSize
	}
	if o.MinIndexEntries <= 0 {
		o.MinIndexEntries = DefaultMinIndexEntries
	}
	if o.BytesPerChecksum <= 0 {
		o.BytesPerChecksum = DefaultBytesPerChecksum
	}
	if o.Compression == 0 {
		o.Compression = CompressionNone
	}
	if o.CreateTime.IsZero() {
		o.CreateTime = time.Now()
	}
	if o.BulkLoadTime.IsZero() {
		o.BulkLoadTime = o.CreateTime
	}
	return o
}

// Errors of Append a caller can branch on. Neither spoils the writer: the cell is not written and
// the next may be.
var (
	// ErrOutOfOrder is returned for a cell that sorts before the previous one (Compare).
	ErrOutOfOrder = errors.New("hfile: cell out of order")
	// ErrFamily is returned for a cell of another family than Options.Family.
	ErrFamily = errors.New("hfile: cell of another family")
	// ErrClosed is returned by Append and Close after Close.
	ErrClosed = errors.New("hfile: writer closed")
)

// cellOverhead is what a cell costs in a data block beyond its key and value: keyLen(4)
// valueLen(4) tagsLen(2) and the memstore timestamp, a one-byte vlong 0.
const cellOverhead = 4 + 4 + 2 + 1

// Writer writes one HFile v3 to an io.Writer, cells in Compare order. It is not safe for
// concurrent use. After an error from the underlying writer, every call returns that error.
type Writer struct {
	opts  Options
	bw    blockWriter
	index indexWriter

	block     []byte // the data block being filled
	blockKey  []byte // its first key
	lastKey   []byte // the previous cell's key
	lastCell  Cell   // lastKey parsed
	hasLast   bool
	entries   int64
	keyBytes  int64
	valBytes  int64
	biggest   int64
	bigKey    []byte
	minTS     int64
	maxTS     int64
	earliest  int64 // smallest timestamp of a put
	delFamily int64
	firstData int64
	lastData  int64
	err       error
	closed    bool
}

// NewWriter returns a writer of one file to w with opts. Options.Family must be set.
func NewWriter(w io.Writer, opts Options) (*Writer, error) {
	if len(opts.Family) == 0 || len(opts.Family) > MaxFamilyLen {
		return nil, fmt.Errorf("hfile: Options.Family of %d bytes: want 1 to %d", len(opts.Family), MaxFamilyLen)
	}
	if opts.Compression != 0 && opts.Compression != CompressionNone && opts.Compression != CompressionGzip {
		return nil, fmt.Errorf("%w: %v", errUnknownCodec, opts.Compression)
	}
	opts = opts.withDefaults()
	return &Writer{
		opts:      opts,
		bw:        blockWriter{w: w, codec: compressor{codec: opts.Compression}, bytesPerChecksum: opts.BytesPerChecksum, prev: map[blockType]int64{}},
		index:     indexWriter{maxChunk: opts.IndexBlockSize, minEntries: opts.MinIndexEntries},
		minTS:     math.MaxInt64, // TimeRangeTracker's initial range, kept for an empty file
		maxTS:     -1,
		earliest:  math.MaxInt64, // HConstants.LATEST_TIMESTAMP when the file holds no put
		firstData: -1,
		lastData:  -1,
	}, nil
}

// Append adds c, which must not sort before the previous cell and must be of Options.Family.
// Cells of equal keys (Compare 0) are kept in the order given, in one data block.
func (w *Writer) Append(c Cell) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if err := c.check(); err != nil {
		return err
	}
	if !bytes.Equal(c.Family, w.opts.Family) {
		return fmt.Errorf("%w: %q in a file of %q", ErrFamily, c.Family, w.opts.Family)
	}
	order := 1
	if w.hasLast {
		order = Compare(w.lastCell, c)
		if order > 0 {
			return fmt.Errorf("%w: %s after %s", ErrOutOfOrder, describe(c), describe(w.lastCell))
		}
	}
	// A block ends only between different keys, as in HBase: a reader seeking a key then finds
	// all its cells from one index entry.
	if order != 0 && len(w.block) >= w.opts.BlockSize {
		if err := w.finishBlock(); err != nil {
			return err
		}
	}
	start := len(w.block)
	kl := keyLen(c)
	w.block = binary.BigEndian.AppendUint32(w.block, uint32(kl))
	w.block = binary.BigEndian.AppendUint32(w.block, uint32(len(c.Value)))
	w.block = appendKey(w.block, c)
	key := w.block[start+8 : start+8+kl]
	w.block = append(w.block, c.Value...)
	w.block = append(w.block, 0, 0) // tags length: no tags
	w.block = append(w.block, 0)    // memstore timestamp 0, as a vlong
	if w.blockKey == nil {
		w.blockKey = append([]byte(nil), key...)
	}
	w.lastKey = append(w.lastKey[:0], key...)
	w.lastCell, _ = ParseKey(w.lastKey)
	w.hasLast = true
	w.track(c, key, len(w.block)-start)
	return nil
}

// track keeps what the file info reports: sizes, the biggest cell, the time range (which, as
// TimeRangeTracker has it, reaches down to 0 for a marker deleting every older version), the
// earliest put and the family delete markers.
func (w *Writer) track(c Cell, key []byte, size int) {
	w.entries++
	w.keyBytes += int64(len(key)) + 4 // HBase counts a KeyValue's key with its length field
	w.valBytes += int64(len(c.Value))
	if int64(size) > w.biggest {
		w.biggest = int64(size)
		w.bigKey = append(w.bigKey[:0], key...)
	}
	w.minTS, w.maxTS = min(w.minTS, c.Timestamp), max(w.maxTS, c.Timestamp)
	switch c.typ() {
	case TypePut:
		w.earliest = min(w.earliest, c.Timestamp)
	case TypeDeleteColumn:
		w.minTS = 0
	case TypeDeleteFamily:
		w.minTS = 0
		w.delFamily++
	}
}

func (w *Writer) finishBlock() error {
	if len(w.block) == 0 {
		return nil
	}
	info, err := w.bw.write(magicData, w.block)
	if err != nil {
		w.err = err
		return err
	}
	if w.firstData < 0 {
		w.firstData = info.offset
	}
	w.lastData = info.offset
	// The index names a block by its first key; HBase may store a shorter key between the last
	// key of the previous block and this one, an optimisation a reader does not rely on.
	w.index.addDataBlock(IndexEntry{Key: w.blockKey, Offset: info.offset, OnDiskSize: info.onDiskSize})
	w.block, w.blockKey = w.block[:0], nil
	if w.index.leafFull() {
		if err := w.index.writeLeaf(&w.bw); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}

// Close writes the last data block, the index, the file info and the trailer. It does not close
// the underlying writer.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	if w.err != nil {
		return w.err
	}
	if err := w.close(); err != nil {
		w.err = err
		return err
	}
	return nil
}

func (w *Writer) close() error {
	if err := w.finishBlock(); err != nil {
		return err
	}
	rootOffset, rootEntries, levels, err := w.index.finish(&w.bw)
	if err != nil {
		return err
	}
	if _, err := w.bw.write(magicRootIndex, nil); err != nil { // the meta block index: no meta blocks
		return err
	}
	fileInfoOffset := w.bw.off
	if _, err := w.bw.write(magicFileInfo, w.fileInfo().marshal()); err != nil {
		return err
	}
	t := &Trailer{
		FileInfoOffset:            fileInfoOffset,
		LoadOnOpenOffset:          rootOffset,
		UncompressedDataIndexSize: w.index.uncompressedSize,
		TotalUncompressedBytes:    w.bw.uncompressed + trailerSize,
		DataIndexCount:            rootEntries,
		EntryCount:                w.entries,
		NumDataIndexLevels:        levels,
		FirstDataBlockOffset:      w.firstData,
		LastDataBlockOffset:       w.lastData,
		ComparatorClassName:       comparatorName,
		Compression:               w.opts.Compression,
		MajorVersion:              majorVersion,
		MinorVersion:              minorVersion,
	}
	b, err := t.marshal()
	if err != nil {
		return err
	}
	if _, err := w.bw.w.Write(b); err != nil {
		return fmt.Errorf("hfile: writing the trailer: %w", err)
	}
	return nil
}

// fileInfo is what HFileWriterImpl, StoreFileWriter and HFileOutputFormat2 store for a bulk-load
// file: HBase reads BULKLOAD_TIMESTAMP to treat the file as bulk-loaded, TIMERANGE and
// EARLIEST_PUT_TS to skip it in scans and compactions, KEY_VALUE_VERSION to expect a memstore
// timestamp after each cell.
func (w *Writer) fileInfo() FileInfo {
	fi := FileInfo{
		InfoAvgKeyLen:         int32Bytes(avg(w.keyBytes, w.entries)),
		InfoAvgValueLen:       int32Bytes(avg(w.valBytes, w.entries)),
		InfoCreateTime:        int64Bytes(w.opts.CreateTime.UnixMilli()),
		InfoMaxTagsLen:        int32Bytes(0),
		InfoTagsCompressed:    boolBytes(false),
		InfoMaxMemstoreTS:     int64Bytes(0),
		InfoKeyValueVersion:   int32Bytes(keyValueVerWithMemstore),
		InfoTimeRange:         encodeTimeRange(w.minTS, w.maxTS),
		InfoEarliestPutTS:     int64Bytes(w.earliest),
		InfoBulkLoadTime:      int64Bytes(w.opts.BulkLoadTime.UnixMilli()),
		InfoMajorCompaction:   boolBytes(true),
		InfoExcludeFromMinor:  boolBytes(false),
		InfoDeleteFamilyCount: int64Bytes(w.delFamily),
	}
	if w.hasLast {
		fi[InfoLastKey] = append([]byte(nil), w.lastKey...)
		fi[InfoKeyOfBiggestCell] = append([]byte(nil), w.bigKey...)
		fi[InfoLenOfBiggestCell] = int64Bytes(w.biggest)
	}
	if w.opts.SourceTask != "" {
		fi[InfoBulkLoadTask] = []byte(w.opts.SourceTask)
	}
	return fi
}

func avg(total, n int64) int32 {
	if n == 0 {
		return 0
	}
	return int32(total / n)
}

func describe(c Cell) string {
	return fmt.Sprintf("%q/%q:%q/%d/%v", c.Row, c.Family, c.Qualifier, c.Timestamp, c.typ())
}
