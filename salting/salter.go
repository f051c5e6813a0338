// Package salting maps logical row keys to physical (salted) keys and back, and a logical key range to
// the physical ranges, one per bucket, that may hold its rows. It is pure: keys in, keys out, no I/O.
package salting

// Salter places logical keys into buckets. Implementations are immutable and safe for concurrent use.
//
// Within one bucket, physical keys sort in the same order as their logical keys, which is what lets
// the fan-out merge per-bucket scans back into logical order.
type Salter interface {
	// Spec is the canonical spec string that ParseSpec turns back into an equal Salter
	// (e.g. "hash:16", "md5hex:4", "none"). It is stored with the table. Two salters place every
	// key alike exactly when their Specs are equal.
	Spec() string
	// Buckets is the number of buckets (1 for salters that do not spread keys).
	Buckets() int
	// Bucket returns the bucket of a logical key.
	Bucket(logical []byte) (int, error)
	// AppendPhysical appends the physical key of logical to dst. It allocates only when dst lacks room.
	AppendPhysical(dst, logical []byte) ([]byte, error)
	// AppendLogical appends the logical key carried by a physical key to dst; an error wrapping
	// ErrInvalidPhysicalKey if physical was not produced by this Salter.
	AppendLogical(dst, physical []byte) ([]byte, error)
	// BucketRanges returns, for the logical range [start, end) (empty = unbounded), the physical range of
	// every bucket that may hold keys of it, in bucket order. Buckets that cannot hold any key of the
	// range are left out (bucket pruning).
	BucketRanges(start, end []byte) ([]BucketRange, error)
	// SplitKeys returns region boundaries aligned with bucket boundaries for a table pre-split into
	// about `regions` regions (<= 0: one region per bucket). The first region's empty start key is not
	// included.
	SplitKeys(regions int) [][]byte
}

// BucketRange is the physical key range [Start, End) of one bucket (empty End: to the end of the table).
type BucketRange struct {
	Bucket int
	Start  []byte
	End    []byte
}

// MaxPrefixLen is the longest prefix any salter puts before a logical key (md5hex:4's four hex
// digits): a buffer of len(key)+MaxPrefixLen holds a physical key without growing.
const MaxPrefixLen = 4

// AppendPhysicalBucket is AppendPhysical that also returns the key's bucket. Calling Bucket and then
// AppendPhysical hashes the key twice; this hashes it once.
func AppendPhysicalBucket(s Salter, dst, logical []byte) ([]byte, int, error) {
	if p, ok := s.(*prefixed); ok {
		return p.appendPhysicalBucket(dst, logical)
	}
	b, err := s.Bucket(logical)
	if err != nil {
		return dst, 0, err
	}
	dst, err = s.AppendPhysical(dst, logical)
	return dst, b, err
}

// BucketPrefix is the prefix s writes before every logical key of bucket b, for the salters whose
// physical key is a bucket prefix followed by the logical key (hash, md5hex, mod, phoenix, opentsdb).
// ok is false for the others (none, reverse), whose physical keys do not keep a logical key's
// prefixes, and for a bucket out of range.
func BucketPrefix(s Salter, b int) (prefix []byte, ok bool) {
	p, isPrefixed := s.(*prefixed)
	if !isPrefixed || b < 0 || b >= p.n {
		return nil, false
	}
	return p.appendPrefix(nil, b), true
}
