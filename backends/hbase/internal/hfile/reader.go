package hfile

import (
	"encoding/binary"
	"fmt"
	"io"
	"iter"
)

// Reader reads a file this package (or HBase, for unencoded files of one family without tags)
// wrote: trailer, file info, the data block index through all its levels, and the cells. Every
// block's checksums are verified as it is read.
type Reader struct {
	r       io.ReaderAt
	size    int64
	Trailer *Trailer
	Info    FileInfo
	// Root is the root data index; with NumDataIndexLevels > 1 it points at index blocks.
	Root []IndexEntry
	// MidKey is the root index's mid-key metadata (leaf block offset, size, entry within it);
	// empty for a one-level index.
	MidKey []byte
}

// Open reads the trailer and the load-on-open section (root index, meta index, file info) of the
// size bytes of r.
func Open(r io.ReaderAt, size int64) (*Reader, error) {
	t, err := readTrailer(r, size)
	if err != nil {
		return nil, err
	}
	if t.NumDataIndexLevels < 1 || t.NumDataIndexLevels > maxIndexLevels {
		return nil, fmt.Errorf("hfile: trailer says %d data index levels (1 to %d)", t.NumDataIndexLevels, maxIndexLevels)
	}
	end := size - trailerSize
	// The sections' offsets bound every read below: a corrupt one must not size a buffer.
	if t.LoadOnOpenOffset < 0 || t.LoadOnOpenOffset > end || t.FirstDataBlockOffset > t.LoadOnOpenOffset ||
		t.LastDataBlockOffset > t.LoadOnOpenOffset {
		return nil, fmt.Errorf("hfile: trailer offsets (data %d-%d, load-on-open %d) outside the %d bytes before it",
			t.FirstDataBlockOffset, t.LastDataBlockOffset, t.LoadOnOpenOffset, end)
	}
	rd := &Reader{r: r, size: size, Trailer: t}
	root, err := rd.readBlockOf(t.LoadOnOpenOffset, end, magicRootIndex)
	if err != nil {
		return nil, fmt.Errorf("hfile: root data index: %w", err)
	}
	if rd.Root, rd.MidKey, err = parseRootIndex(root.data, t.DataIndexCount); err != nil {
		return nil, err
	}
	meta, err := rd.readBlockOf(root.offset+int64(root.onDiskSize), end, magicRootIndex)
	if err != nil {
		return nil, fmt.Errorf("hfile: meta index: %w", err)
	}
	info, err := rd.readBlockOf(meta.offset+int64(meta.onDiskSize), end, magicFileInfo)
	if err != nil {
		return nil, fmt.Errorf("hfile: file info: %w", err)
	}
	if info.offset != t.FileInfoOffset {
		return nil, fmt.Errorf("hfile: file info at %d, trailer says %d", info.offset, t.FileInfoOffset)
	}
	if rd.Info, err = parseFileInfo(info.data); err != nil {
		return nil, err
	}
	return rd, nil
}

func (rd *Reader) readBlockOf(off, limit int64, want blockType) (block, error) {
	b, err := readBlock(rd.r, off, limit, rd.Trailer.Compression)
	if err != nil {
		return block{}, err
	}
	if b.typ != want {
		return block{}, fmt.Errorf("hfile: %v block at %d, want %v", b.typ, off, want)
	}
	return b, nil
}

// DataIndex walks the index from the root down through every level and returns the entries of
// the leaf level, one per data block in file order.
func (rd *Reader) DataIndex() ([]IndexEntry, error) {
	level := rd.Root
	for depth := rd.Trailer.NumDataIndexLevels; depth > 1; depth-- {
		want := magicInterIndex
		if depth == 2 {
			want = magicLeafIndex
		}
		var next []IndexEntry
		for _, e := range level {
			b, err := rd.readBlockOf(e.Offset, rd.Trailer.LoadOnOpenOffset, want)
			if err != nil {
				return nil, fmt.Errorf("hfile: index level %d: %w", depth, err)
			}
			if b.onDiskSize != e.OnDiskSize {
				return nil, fmt.Errorf("hfile: index block at %d is %d bytes, its parent says %d", e.Offset, b.onDiskSize, e.OnDiskSize)
			}
			entries, err := parseNonRootIndex(b.data)
			if err != nil {
				return nil, err
			}
			next = append(next, entries...)
		}
		level = next
	}
	return level, nil
}

// Cells returns the cells of every data block from the first to the last, in file order,
// skipping the index blocks between them. It stops at the first error, which it yields.
func (rd *Reader) Cells() iter.Seq2[Cell, error] {
	return func(yield func(Cell, error) bool) {
		t := rd.Trailer
		v, _ := rd.Info.Int32(InfoKeyValueVersion)
		mvcc := v == keyValueVerWithMemstore
		if t.FirstDataBlockOffset < 0 || t.EntryCount == 0 {
			return
		}
		for off := t.FirstDataBlockOffset; off <= t.LastDataBlockOffset; {
			b, err := readBlock(rd.r, off, t.LoadOnOpenOffset, t.Compression)
			if err != nil {
				yield(Cell{}, err)
				return
			}
			off += int64(b.onDiskSize)
			if b.typ != magicData {
				continue
			}
			for data := b.data; len(data) > 0; {
				c, n, err := parseCell(data, mvcc)
				if err != nil {
					yield(Cell{}, fmt.Errorf("hfile: data block at %d: %w", b.offset, err))
					return
				}
				data = data[n:]
				if !yield(c, nil) {
					return
				}
			}
		}
	}
}

// parseCell reads one cell of a data block: keyLen valueLen key value tagsLen tags, then the
// memstore timestamp if the file has them.
func parseCell(data []byte, mvcc bool) (Cell, int, error) {
	if len(data) < 8 {
		return Cell{}, 0, fmt.Errorf("cell header: %d bytes left", len(data))
	}
	kl, vl := int64(binary.BigEndian.Uint32(data)), int64(binary.BigEndian.Uint32(data[4:]))
	n := 8 + kl + vl
	if n+2 > int64(len(data)) {
		return Cell{}, 0, fmt.Errorf("cell of key %d and value %d bytes: %d bytes left", kl, vl, len(data))
	}
	c, err := ParseKey(data[8 : 8+kl])
	if err != nil {
		return Cell{}, 0, err
	}
	c.Value = data[8+kl : n]
	tl := int64(binary.BigEndian.Uint16(data[n:]))
	n += 2 + tl
	if n > int64(len(data)) {
		return Cell{}, 0, fmt.Errorf("cell tags of %d bytes: %d bytes left", tl, int64(len(data))-n+tl)
	}
	if !mvcc {
		return c, int(n), nil
	}
	_, m := readVint(data[n:])
	if m <= 0 {
		return Cell{}, 0, fmt.Errorf("cell memstore timestamp: %d bytes left", int64(len(data))-n)
	}
	return c, int(n) + m, nil
}
