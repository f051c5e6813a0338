package backends

import (
	"time"
)

// FamilyOptions are the settings of one column family, as HBase's column family descriptor has them.
// A zero field means the driver's default.
type FamilyOptions struct {
	// MaxVersions is how many versions of each cell the family keeps; 0 means 1 (brine reads only the
	// newest). gohbase's own CreateTable keeps 3.
	MaxVersions int
	// TTL is how long a cell lives after its timestamp; 0 means forever. HBase counts whole seconds.
	TTL time.Duration
	// Compression is the store-file codec by HBase's name (NONE, GZ, SNAPPY, LZ4, LZO, ZSTD, BZIP2,
	// LZMA); "" means NONE. The server refuses a codec it has no library for.
	Compression string
	// BlockCache, when set, says whether reads keep the family's blocks in the block cache; nil means
	// yes (HBase's default).
	BlockCache *bool
	// BloomFilter is NONE, ROW or ROWCOL; "" means ROW (HBase's default).
	BloomFilter string
}
