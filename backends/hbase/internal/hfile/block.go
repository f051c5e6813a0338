package hfile

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// blockType is a block's 8-byte magic (BlockType in HBase).
type blockType [8]byte

var (
	magicData         = blockType{'D', 'A', 'T', 'A', 'B', 'L', 'K', '*'}
	magicLeafIndex    = blockType{'I', 'D', 'X', 'L', 'E', 'A', 'F', '2'}
	magicInterIndex   = blockType{'I', 'D', 'X', 'I', 'N', 'T', 'E', '2'}
	magicRootIndex    = blockType{'I', 'D', 'X', 'R', 'O', 'O', 'T', '2'}
	magicFileInfo     = blockType{'F', 'I', 'L', 'E', 'I', 'N', 'F', '2'}
	magicTrailer      = blockType{'T', 'R', 'A', 'B', 'L', 'K', '"', '$'}
	knownBlockTypes   = []blockType{magicData, magicLeafIndex, magicInterIndex, magicRootIndex, magicFileInfo}
	castagnoliTable   = crc32.MakeTable(crc32.Castagnoli)
	errChecksum       = errors.New("hfile: block checksum mismatch")
	errBlockTooShort  = errors.New("hfile: block shorter than its header")
	errUnknownCodec   = errors.New("hfile: unknown compression codec")
	errUnknownBlockTy = errors.New("hfile: unknown block type")
)

func (t blockType) String() string { return string(t[:]) }

const (
	// headerSize is HFileBlock's header with checksums (minor version 1 on): magic(8)
	// onDiskSizeWithoutHeader(4) uncompressedSizeWithoutHeader(4) prevBlockOffset(8)
	// checksumType(1) bytesPerChecksum(4) onDiskDataSizeWithHeader(4).
	headerSize = 33
	// checksumCRC32C is ChecksumType.CRC32C's code, HBase's default checksum.
	checksumCRC32C = 2
	checksumSize   = 4
	// DefaultBytesPerChecksum is hbase.bytes.per.checksum's default.
	DefaultBytesPerChecksum = 16 * 1024
)

// Compression is a block codec, numbered as HBase's Compression.Algorithm enum (the trailer stores
// the ordinal).
type Compression int

// The codecs this package writes: those HBase reads without native libraries and that the tests
// check with HBase's own reader.
const (
	CompressionGzip Compression = 1
	CompressionNone Compression = 2
)

func (c Compression) String() string {
	switch c {
	case CompressionGzip:
		return "GZ"
	case CompressionNone:
		return "NONE"
	}
	return fmt.Sprintf("Compression(%d)", int(c))
}

// compressor returns data as a codec stores it, reusing its buffers from block to block (a
// gzip.Writer costs hundreds of KiB to set up). The result is valid until the next call.
type compressor struct {
	codec Compression
	buf   bytes.Buffer
	zw    *gzip.Writer
}

// compress returns data as the codec stores it. GZ is a whole gzip stream per block: HBase's
// ReusableStreamGzipCodec writes one and Hadoop's built-in gzip decompressor reads it.
func (c *compressor) compress(data []byte) ([]byte, error) {
	switch c.codec {
	case CompressionNone:
		return data, nil
	case CompressionGzip:
		c.buf.Reset()
		if c.zw == nil {
			c.zw = gzip.NewWriter(&c.buf)
		} else {
			c.zw.Reset(&c.buf)
		}
		if _, err := c.zw.Write(data); err != nil {
			return nil, err
		}
		if err := c.zw.Close(); err != nil {
			return nil, err
		}
		return c.buf.Bytes(), nil
	}
	return nil, fmt.Errorf("%w: %v", errUnknownCodec, c.codec)
}

func (c Compression) decompress(data []byte, size int) ([]byte, error) {
	switch c {
	case CompressionNone:
		if len(data) != size {
			return nil, fmt.Errorf("hfile: uncompressed block of %d bytes, header says %d", len(data), size)
		}
		return data, nil
	case CompressionGzip:
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("hfile: gzip block: %w", err)
		}
		// Grown as it is read, not sized by the header: a corrupt size must not allocate.
		out, err := io.ReadAll(io.LimitReader(zr, int64(size)+1))
		if err != nil {
			return nil, fmt.Errorf("hfile: gzip block: %w", err)
		}
		if len(out) != size {
			return nil, fmt.Errorf("hfile: gzip block of %d bytes, header says %d", len(out), size)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: %v", errUnknownCodec, c)
}

// blockWriter writes blocks one after another and remembers, per type, where the last one began
// (each header names the previous block of its type).
type blockWriter struct {
	w                io.Writer
	off              int64
	codec            compressor
	bytesPerChecksum int
	prev             map[blockType]int64
	buf              []byte
	uncompressed     int64 // every block's header and data before compression
}

// blockInfo is what an index entry and the trailer need of a written block.
type blockInfo struct {
	offset             int64
	onDiskSize         int // header, data as stored, checksums: what an index entry records
	uncompressedSize   int // data only, before compression
	uncompressedHeader int // header and data before compression: what totalUncompressedBytes sums
}

func (bw *blockWriter) write(t blockType, data []byte) (blockInfo, error) {
	stored, err := bw.codec.compress(data)
	if err != nil {
		return blockInfo{}, fmt.Errorf("hfile: compressing a %v block: %w", t, err)
	}
	dataWithHeader := headerSize + len(stored)
	chunks := (dataWithHeader + bw.bytesPerChecksum - 1) / bw.bytesPerChecksum
	onDisk := dataWithHeader + chunks*checksumSize
	prev, ok := bw.prev[t]
	if !ok {
		prev = -1
	}
	b := bw.buf[:0]
	b = append(b, t[:]...)
	b = binary.BigEndian.AppendUint32(b, uint32(onDisk-headerSize))
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	b = binary.BigEndian.AppendUint64(b, uint64(prev))
	b = append(b, checksumCRC32C)
	b = binary.BigEndian.AppendUint32(b, uint32(bw.bytesPerChecksum))
	b = binary.BigEndian.AppendUint32(b, uint32(dataWithHeader))
	b = append(b, stored...)
	// One CRC32C per bytesPerChecksum bytes of header and stored data, the last chunk shorter.
	for i := 0; i < dataWithHeader; i += bw.bytesPerChecksum {
		end := min(i+bw.bytesPerChecksum, dataWithHeader)
		b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b[i:end], castagnoliTable))
	}
	bw.buf = b
	if _, err := bw.w.Write(b); err != nil {
		return blockInfo{}, fmt.Errorf("hfile: writing a %v block: %w", t, err)
	}
	info := blockInfo{offset: bw.off, onDiskSize: onDisk, uncompressedSize: len(data), uncompressedHeader: headerSize + len(data)}
	bw.prev[t] = bw.off
	bw.off += int64(onDisk)
	bw.uncompressed += int64(info.uncompressedHeader)
	return info, nil
}

// block is one block read back: its type, its data uncompressed, and where the next one begins.
type block struct {
	typ        blockType
	data       []byte
	offset     int64
	onDiskSize int
	prevOffset int64
}

// readBlock reads and checks the block at off: its header, every checksum, and its data.
func readBlock(r io.ReaderAt, off, limit int64, codec Compression) (block, error) {
	if off < 0 || off+headerSize > limit {
		return block{}, fmt.Errorf("%w: block at %d, section ends at %d", errBlockTooShort, off, limit)
	}
	var h [headerSize]byte
	if _, err := r.ReadAt(h[:], off); err != nil {
		return block{}, fmt.Errorf("hfile: block header at %d: %w", off, err)
	}
	var t blockType
	copy(t[:], h[:8])
	onDisk := int64(binary.BigEndian.Uint32(h[8:])) + headerSize
	size := int(binary.BigEndian.Uint32(h[12:]))
	prev := int64(binary.BigEndian.Uint64(h[16:]))
	perChecksum := int64(binary.BigEndian.Uint32(h[25:]))
	dataWithHeader := int64(binary.BigEndian.Uint32(h[29:]))
	if !knownType(t) {
		return block{}, fmt.Errorf("%w %q at %d", errUnknownBlockTy, t[:], off)
	}
	if h[24] != checksumCRC32C || perChecksum <= 0 || dataWithHeader < headerSize || dataWithHeader > onDisk ||
		off+onDisk > limit || size < 0 || size > 1<<30 {
		return block{}, fmt.Errorf("hfile: %v block at %d has a bad header (checksum type %d, %d bytes per checksum, %d/%d bytes)",
			t, off, h[24], perChecksum, dataWithHeader, onDisk)
	}
	chunks := (dataWithHeader + perChecksum - 1) / perChecksum
	if dataWithHeader+chunks*checksumSize != onDisk {
		return block{}, fmt.Errorf("hfile: %v block at %d: %d bytes of data and %d checksums do not make %d", t, off, dataWithHeader, chunks, onDisk)
	}
	buf := make([]byte, onDisk)
	if _, err := r.ReadAt(buf, off); err != nil {
		return block{}, fmt.Errorf("hfile: %v block at %d: %w", t, off, err)
	}
	sums := buf[dataWithHeader:]
	for i := int64(0); i < dataWithHeader; i += perChecksum {
		end := min(i+perChecksum, dataWithHeader)
		want := binary.BigEndian.Uint32(sums[i/perChecksum*checksumSize:])
		if got := crc32.Checksum(buf[i:end], castagnoliTable); got != want {
			return block{}, fmt.Errorf("%w: %v block at %d, bytes %d-%d", errChecksum, t, off, i, end)
		}
	}
	data, err := codec.decompress(buf[headerSize:dataWithHeader], size)
	if err != nil {
		return block{}, fmt.Errorf("hfile: %v block at %d: %w", t, off, err)
	}
	return block{typ: t, data: data, offset: off, onDiskSize: int(onDisk), prevOffset: prev}, nil
}

func knownType(t blockType) bool {
	for _, k := range knownBlockTypes {
		if t == k {
			return true
		}
	}
	return false
}
