package driverkit

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
)

// The codec and bloom filter names HBase takes. Package client checks them whatever the store, so
// that every store refuses the same table definition.
var (
	compressions = []string{"NONE", "GZ", "SNAPPY", "LZ4", "LZO", "ZSTD", "BZIP2", "LZMA"}
	blooms       = []string{"NONE", "ROW", "ROWCOL"}
)

// CheckFamilyOptions refuses settings for a family not in families and values no store could take:
// negative or out-of-range numbers, a TTL that is not whole seconds, unknown codec or bloom names.
func CheckFamilyOptions(families []string, opts map[string]backends.FamilyOptions) error {
	for f, o := range opts {
		what := fmt.Sprintf("family %q", f)
		switch {
		case !slices.Contains(families, f):
			return fmt.Errorf("%w: settings for %s, which is not one of the families %q", backends.ErrInvalidArgument, what, families)
		case o.MaxVersions < 0 || o.MaxVersions > math.MaxInt32:
			return fmt.Errorf("%w: %s: MaxVersions %d out of range", backends.ErrInvalidArgument, what, o.MaxVersions)
		case o.TTL < 0 || o.TTL%time.Second != 0 || o.TTL/time.Second > math.MaxInt32:
			return fmt.Errorf("%w: %s: TTL %v is not a whole number of seconds in [0, 2^31)", backends.ErrInvalidArgument, what, o.TTL)
		case o.Compression != "" && !slices.Contains(compressions, strings.ToUpper(o.Compression)):
			return fmt.Errorf("%w: %s: unknown compression %q (want one of %s)", backends.ErrInvalidArgument, what, o.Compression, strings.Join(compressions, ", "))
		case o.BloomFilter != "" && !slices.Contains(blooms, strings.ToUpper(o.BloomFilter)):
			return fmt.Errorf("%w: %s: unknown bloom filter %q (want one of %s)", backends.ErrInvalidArgument, what, o.BloomFilter, strings.Join(blooms, ", "))
		}
	}
	return nil
}
