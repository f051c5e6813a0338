package hfile

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// IndexEntry points at one block from an index: the first key of the block (or, above the leaf
// level, of the index block's first entry), its offset and its size on disk with header and
// checksums.
type IndexEntry struct {
	Key        []byte
	Offset     int64
	OnDiskSize int
}

// indexChunk is one index block in the making (BlockIndexChunk). subEntries[i] counts the
// leaf-level entries (data blocks) up to and including entry i; only the chunk of leaf blocks
// needs it, for the mid-key metadata.
type indexChunk struct {
	entries    []IndexEntry
	subEntries []int64
	keyBytes   int
}

func (c *indexChunk) add(e IndexEntry, subEntries int64) {
	c.entries = append(c.entries, e)
	c.subEntries = append(c.subEntries, subEntries)
	c.keyBytes += len(e.Key)
}

// nonRootSize is the chunk's size as a leaf or intermediate block: entry count, a secondary index
// of one offset per entry plus the end, then per entry offset(8) size(4) key.
func (c *indexChunk) nonRootSize() int {
	return 4 + 4*(len(c.entries)+1) + 12*len(c.entries) + c.keyBytes
}

// rootSize is the chunk's size as a root block: per entry offset(8) size(4) vint(key length) key.
func (c *indexChunk) rootSize() int {
	n := 12 * len(c.entries)
	for _, e := range c.entries {
		n += vintSize(int64(len(e.Key))) + len(e.Key)
	}
	return n
}

// appendNonRoot appends the chunk in the non-root format, which a reader binary-searches through
// its secondary index without parsing every key.
func (c *indexChunk) appendNonRoot(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(c.entries)))
	pos := 0
	for _, e := range c.entries {
		b = binary.BigEndian.AppendUint32(b, uint32(pos))
		pos += 12 + len(e.Key)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(pos))
	for _, e := range c.entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.Offset))
		b = binary.BigEndian.AppendUint32(b, uint32(e.OnDiskSize))
		b = append(b, e.Key...)
	}
	return b
}

func (c *indexChunk) appendRoot(b []byte) []byte {
	for _, e := range c.entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.Offset))
		b = binary.BigEndian.AppendUint32(b, uint32(e.OnDiskSize))
		b = appendVint(b, int64(len(e.Key)))
		b = append(b, e.Key...)
	}
	return b
}

// midKeyMetadata locates the middle data block entry for HBase's region split point: the leaf
// block holding it (offset, size) and its position in that block. It is appended to a root index
// of two levels or more, whose reader takes it from the 16 bytes after the entries.
func (c *indexChunk) midKeyMetadata() []byte {
	total := c.subEntries[len(c.subEntries)-1]
	mid := (total - 1) / 2
	i := sort.Search(len(c.subEntries), func(i int) bool { return c.subEntries[i] > mid })
	before := int64(0)
	if i > 0 {
		before = c.subEntries[i-1]
	}
	b := binary.BigEndian.AppendUint64(nil, uint64(c.entries[i].Offset))
	b = binary.BigEndian.AppendUint32(b, uint32(c.entries[i].OnDiskSize))
	return binary.BigEndian.AppendUint32(b, uint32(mid-before))
}

// maxIndexLevels bounds the levels of a data index, as BlockIndexWriter does.
const maxIndexLevels = 16

// indexWriter builds the data block index as BlockIndexWriter does: entries for data blocks
// gather in a leaf chunk, written inline among the data blocks once it reaches maxChunk bytes;
// at close, the root holds the leaf blocks (or the data blocks themselves if no leaf block was
// written), and while the root is too big, levels of intermediate blocks go between.
type indexWriter struct {
	maxChunk   int
	minEntries int
	leaf       indexChunk
	root       indexChunk
	dataBlocks int64 // leaf-level entries so far
	levels     int
	// uncompressedSize sums what FileTrailer's uncompressed_data_index_size counts.
	uncompressedSize int64
}

func (iw *indexWriter) addDataBlock(e IndexEntry) {
	iw.dataBlocks++
	iw.leaf.add(e, iw.dataBlocks)
}

// leafFull says whether the leaf chunk is due to be written after the data block just added.
func (iw *indexWriter) leafFull() bool {
	return len(iw.leaf.entries) > 0 && iw.leaf.nonRootSize() >= iw.maxChunk
}

// writeLeaf writes the leaf chunk as a block and points the root at it.
func (iw *indexWriter) writeLeaf(bw *blockWriter) error {
	info, err := bw.write(magicLeafIndex, iw.leaf.appendNonRoot(nil))
	if err != nil {
		return err
	}
	iw.uncompressedSize += int64(info.uncompressedSize)
	iw.root.add(IndexEntry{Key: iw.leaf.entries[0].Key, Offset: info.offset, OnDiskSize: info.onDiskSize}, iw.dataBlocks)
	iw.leaf = indexChunk{}
	return nil
}

// finish writes what is left of the index: the last leaf block, intermediate levels, the root. It
// returns the root block's offset (where the load-on-open section begins), the root's entry count
// and the number of levels.
func (iw *indexWriter) finish(bw *blockWriter) (rootOffset int64, rootEntries, levels int, err error) {
	iw.levels = 1
	if len(iw.root.entries) == 0 {
		// No leaf block was written: the data block entries are the root, one level.
		iw.root, iw.leaf = iw.leaf, indexChunk{}
	} else {
		if len(iw.leaf.entries) > 0 {
			if err := iw.writeLeaf(bw); err != nil {
				return 0, 0, 0, err
			}
		}
		iw.levels = 2
	}
	var mid []byte
	if iw.levels > 1 {
		// Taken before intermediate levels replace the root: it points into the leaf level.
		mid = iw.root.midKeyMetadata()
	}
	for iw.levels > 1 && iw.root.rootSize() > iw.maxChunk && len(iw.root.entries) > iw.minEntries && iw.levels < maxIndexLevels {
		if err := iw.writeIntermediate(bw); err != nil {
			return 0, 0, 0, err
		}
		iw.levels++
	}
	info, err := bw.write(magicRootIndex, append(iw.root.appendRoot(nil), mid...))
	if err != nil {
		return 0, 0, 0, err
	}
	iw.uncompressedSize += int64(info.uncompressedHeader)
	return info.offset, len(iw.root.entries), iw.levels, nil
}

// writeIntermediate replaces the root by a level of intermediate blocks over it, each at least
// minEntries entries and about maxChunk bytes (the minimum keeps huge keys from making a level per
// entry).
func (iw *indexWriter) writeIntermediate(bw *blockWriter) error {
	var parent, cur indexChunk
	flush := func() error {
		info, err := bw.write(magicInterIndex, cur.appendNonRoot(nil))
		if err != nil {
			return err
		}
		iw.uncompressedSize += int64(info.uncompressedSize)
		parent.add(IndexEntry{Key: cur.entries[0].Key, Offset: info.offset, OnDiskSize: info.onDiskSize}, 0)
		cur = indexChunk{}
		return nil
	}
	for i, e := range iw.root.entries {
		cur.add(e, 0)
		if i >= iw.minEntries && cur.rootSize() >= iw.maxChunk {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if len(cur.entries) > 0 {
		if err := flush(); err != nil {
			return err
		}
	}
	iw.root = parent
	return nil
}

// parseRootIndex reads n entries of a root index block, and the mid-key metadata if present.
func parseRootIndex(data []byte, n int) ([]IndexEntry, []byte, error) {
	entries := make([]IndexEntry, 0, min(n, len(data)/13))
	for i := 0; i < n; i++ {
		if len(data) < 12 {
			return nil, nil, fmt.Errorf("hfile: root index entry %d of %d: block ends", i, n)
		}
		e := IndexEntry{Offset: int64(binary.BigEndian.Uint64(data)), OnDiskSize: int(binary.BigEndian.Uint32(data[8:]))}
		kl, m := readVint(data[12:])
		if m <= 0 || kl < 0 || int64(len(data)-12-m) < kl {
			return nil, nil, fmt.Errorf("hfile: root index entry %d of %d: bad key length", i, n)
		}
		e.Key = data[12+m : 12+m+int(kl)]
		data = data[12+m+int(kl):]
		entries = append(entries, e)
	}
	return entries, data, nil
}

// parseNonRootIndex reads a leaf or intermediate index block.
func parseNonRootIndex(data []byte) ([]IndexEntry, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("hfile: index block of %d bytes", len(data))
	}
	n := int(binary.BigEndian.Uint32(data))
	if n < 0 || 4+4*(n+1) > len(data) {
		return nil, fmt.Errorf("hfile: index block of %d bytes claims %d entries", len(data), n)
	}
	secondary := data[4 : 4+4*(n+1)]
	body := data[4+4*(n+1):]
	entries := make([]IndexEntry, n)
	for i := range entries {
		start, end := int(binary.BigEndian.Uint32(secondary[4*i:])), int(binary.BigEndian.Uint32(secondary[4*i+4:]))
		if start < 0 || end < start+12 || end > len(body) {
			return nil, fmt.Errorf("hfile: index block entry %d spans %d-%d of %d bytes", i, start, end, len(body))
		}
		entries[i] = IndexEntry{
			Offset:     int64(binary.BigEndian.Uint64(body[start:])),
			OnDiskSize: int(binary.BigEndian.Uint32(body[start+8:])),
			Key:        body[start+12 : end],
		}
	}
	return entries, nil
}
