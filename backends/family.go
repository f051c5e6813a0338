package backends

import (
	"fmt"
	"math"
	"slices"
	"strings"
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

var (
	compressions = []string{"NONE", "GZ", "SNAPPY", "LZ4", "LZO", "ZSTD", "BZIP2", "LZMA"}
	blooms       = []string{"NONE", "ROW", "ROWCOL"}
)

// CheckFamilyOptions refuses settings for a family not in families and values no store could take:
// negative or out-of-range numbers, a TTL that is not whole seconds, unknown codec or bloom names.
func CheckFamilyOptions(families []string, opts map[string]FamilyOptions) error {
	for f, o := range opts {
		what := fmt.Sprintf("family %q", f)
		switch {
		case !slices.Contains(families, f):
			return fmt.Errorf("%w: settings for %s, which is not one of the families %q", ErrInvalidArgument, what, families)
		case o.MaxVersions < 0 || o.MaxVersions > math.MaxInt32:
			return fmt.Errorf("%w: %s: MaxVersions %d out of range", ErrInvalidArgument, what, o.MaxVersions)
		case o.TTL < 0 || o.TTL%time.Second != 0 || o.TTL/time.Second > math.MaxInt32:
			return fmt.Errorf("%w: %s: TTL %v is not a whole number of seconds in [0, 2^31)", ErrInvalidArgument, what, o.TTL)
		case o.Compression != "" && !slices.Contains(compressions, strings.ToUpper(o.Compression)):
			return fmt.Errorf("%w: %s: unknown compression %q (want one of %s)", ErrInvalidArgument, what, o.Compression, strings.Join(compressions, ", "))
		case o.BloomFilter != "" && !slices.Contains(blooms, strings.ToUpper(o.BloomFilter)):
			return fmt.Errorf("%w: %s: unknown bloom filter %q (want one of %s)", ErrInvalidArgument, what, o.BloomFilter, strings.Join(blooms, ", "))
		}
	}
	return nil
}
