package salting

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"fmt"

	"github.com/brine-kv/brine/keys"
)

// ---- hash:N ----

// The bucket of hash:N is fmix32(fnv1a32(part)) % N, where part is the key's leading part (the whole
// key by default). It is persisted through the physical keys of every table, so it must never change.
//
//   - fnv1a32 is 32-bit FNV-1a: h = 2166136261; for each byte c: h ^= c; h *= 16777619 (mod 2^32).
//   - fmix32 is MurmurHash3's 32-bit finalizer: h ^= h>>16; h *= 0x85ebca6b; h ^= h>>13;
//     h *= 0xc2b2ae35; h ^= h>>16.
//
// The finalizer is there because FNV-1a's low k bits depend only on the low k bits of the input bytes
// (multiplication carries upward only): with plain FNV-1a, "% 16" would put all keys whose bytes differ
// only in their high nibbles into one bucket.
type hashStrategy struct {
	n    uint32
	lead lead
}

const (
	fnvOffset32 = 2166136261
	fnvPrime32  = 16777619
)

func fnv1a32(b []byte) uint32 {
	h := uint32(fnvOffset32)
	for _, c := range b {
		h ^= uint32(c)
		h *= fnvPrime32
	}
	return h
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

func (h hashStrategy) bucket(logical []byte) (int, error) {
	part, err := h.lead.part(logical)
	if err != nil {
		return 0, err
	}
	return int(fmix32(fnv1a32(part)) % h.n), nil
}

func (h hashStrategy) prune(start, end []byte) ([]int, bool) {
	return pruneByLead(h.lead, h, start, end)
}

// pruneByLead returns the one bucket of a range that stays within one leading value.
func pruneByLead(l lead, st strategy, start, end []byte) ([]int, bool) {
	if g, ok := l.group(start); ok && endWithin(g, end) {
		if b, err := st.bucket(start); err == nil {
			return []int{b}, false
		}
	}
	return nil, true
}

// ---- md5hex:C ----

// md5Strategy is the guides' [md5(userid)[0:C]][userid][orderid]: the prefix is the first C lower-case
// hex digits of the MD5 of the leading part, so the bucket is the top 4*C bits of the digest.
type md5Strategy struct {
	digits int
	lead   lead
}

func (m md5Strategy) bucket(logical []byte) (int, error) {
	part, err := m.lead.part(logical)
	if err != nil {
		return 0, err
	}
	sum := md5.Sum(part) // an array on the stack: no allocation
	return int(binary.BigEndian.Uint16(sum[:2]) >> (16 - 4*m.digits)), nil
}

func (m md5Strategy) prune(start, end []byte) ([]int, bool) {
	return pruneByLead(m.lead, m, start, end)
}

// ---- mod:N ----

// modStrategy is the guides' "bucket = timestamp % numBuckets": the bucket is an unsigned big-endian
// integer read from the key (offset/width), or an Int64/Uint64 field of a keys-encoded key (field,
// counted from 0), modulo N. A negative Int64 uses the mathematical modulo (always 0..N-1), which keeps consecutive values
// in consecutive buckets across zero.
type modStrategy struct {
	n       int
	offset  int
	width   int  // 1..8 (offset mode)
	byField bool // field mode
	field   int  // field mode: the field read, counted from 0 (spec field=kF)
}

func (m modStrategy) bucket(logical []byte) (int, error) {
	if !m.byField {
		if len(logical) < m.offset+m.width {
			return 0, fmt.Errorf("%w: %d bytes, mod reads bytes %d..%d", ErrInvalidKey, len(logical), m.offset, m.offset+m.width-1)
		}
		return int(beUint(logical[m.offset:m.offset+m.width]) % uint64(m.n)), nil
	}
	// One scan of the key for an Int64 field (the usual timestamp), a second for a Uint64 one.
	if v, err := keys.Int64At(logical, m.field); err == nil {
		return m.signedBucket(v), nil
	}
	v, err := keys.Uint64At(logical, m.field)
	if err != nil {
		return 0, fmt.Errorf("%w: mod reads field k%d as an integer: %w", ErrInvalidKey, m.field, err)
	}
	return int(v % uint64(m.n)), nil
}

func (m modStrategy) signedBucket(v int64) int {
	r := v % int64(m.n)
	if r < 0 {
		r += int64(m.n)
	}
	return int(r)
}

func beUint(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

// prune handles ranges whose start and end agree on everything before the integer and carry the
// integer in full: then the range's integers lie between the two, and if there are fewer than N of
// them, only their residues are scanned (e.g. a one-hour window of a table bucketed by hour).
func (m modStrategy) prune(start, end []byte) ([]int, bool) {
	if len(end) == 0 {
		return nil, true
	}
	if !m.byField {
		hi := m.offset + m.width
		if len(start) < hi || len(end) < hi || !bytes.Equal(start[:m.offset], end[:m.offset]) {
			return nil, true
		}
		lo, up := beUint(start[m.offset:hi]), beUint(end[m.offset:hi])
		if up-lo >= uint64(m.n-1) { // lo <= up as start < end share the bytes before
			return nil, true
		}
		return residues(m.n, func(yield func(int)) {
			for v := lo; ; v++ {
				yield(int(v % uint64(m.n)))
				if v == up {
					return
				}
			}
		}), false
	}
	s, err1 := keys.FieldSpan(start, m.field)
	e, err2 := keys.FieldSpan(end, m.field)
	if err1 != nil || err2 != nil || s.Kind != e.Kind || s.Desc != e.Desc || s.Start != e.Start ||
		!bytes.Equal(start[:s.Start], end[:e.Start]) {
		return nil, true
	}
	// Values, not bytes, so a descending field works too: take them in numeric order.
	switch s.Kind {
	case keys.KindInt64:
		a, _ := keys.Int64At(start, m.field)
		b, _ := keys.Int64At(end, m.field)
		a, b = min(a, b), max(a, b)
		if uint64(b)-uint64(a) >= uint64(m.n-1) {
			return nil, true
		}
		return residues(m.n, func(yield func(int)) {
			for v := a; ; v++ {
				yield(m.signedBucket(v))
				if v == b {
					return
				}
			}
		}), false
	case keys.KindUint64:
		a, _ := keys.Uint64At(start, m.field)
		b, _ := keys.Uint64At(end, m.field)
		a, b = min(a, b), max(a, b)
		if b-a >= uint64(m.n-1) {
			return nil, true
		}
		return residues(m.n, func(yield func(int)) {
			for v := a; ; v++ {
				yield(int(v % uint64(m.n)))
				if v == b {
					return
				}
			}
		}), false
	}
	return nil, true
}

// residues collects the distinct buckets produced by gen, in increasing order.
func residues(n int, gen func(yield func(int))) []int {
	seen := make([]bool, n)
	gen(func(b int) { seen[b] = true })
	var out []int
	for b, ok := range seen {
		if ok {
			out = append(out, b)
		}
	}
	return out
}

// ---- phoenix:N ----

// phoenixStrategy computes Apache Phoenix's salt byte for a table created with SALT_BUCKETS = N, as
// in Phoenix's SaltingUtil (getSaltingByte / calculateHashCode), from memory of that code:
//
//	int result = 1;
//	for each byte b of the row key after the salt byte: result = 31 * result + b;   // b signed, int overflow wraps
//	salt = (byte) Math.abs(result % N);
//
// That is java.util.Arrays.hashCode(byte[]) of the row key without its salt byte. The logical key here
// must be the row key Phoenix would build from the primary key columns (Phoenix's own column
// encoding); brine does not re-encode columns.
type phoenixStrategy struct{ n int32 }

// javaHash continues java.util.Arrays.hashCode over b from h (start with 1): Java's byte is signed and
// int arithmetic wraps, as Go's int32 does.
func javaHash(h int32, b []byte) int32 {
	for _, c := range b {
		h = 31*h + int32(int8(c))
	}
	return h
}

func (p phoenixStrategy) bucket(logical []byte) (int, error) {
	r := javaHash(1, logical) % p.n // Go's % truncates toward zero like Java's
	if r < 0 {
		r = -r
	}
	return int(r), nil
}

func (p phoenixStrategy) prune(start, end []byte) ([]int, bool) { return nil, true }

// ---- opentsdb:N ----

// opentsdbStrategy computes OpenTSDB 2.2+'s salt (RowKey.prefixKeyWithSalt), as remembered from that
// code. The logical key is an OpenTSDB row key without salt: metric UID (metric bytes, default 3),
// base timestamp (4 bytes), then the tagk/tagv UID pairs. The salt is
//
//	int m = java.util.Arrays.hashCode(metric UID ++ tag pairs) % N;   // the timestamp is skipped
//	if (m < 0) m = -m;
//
// written big-endian in width bytes. A metric UID of all zero bytes (OpenTSDB's global annotation
// rows) is left in bucket 0, as OpenTSDB leaves those rows unsalted (salt bytes zero).
type opentsdbStrategy struct {
	n      int32
	metric int
}

const opentsdbTimestampBytes = 4

func (o opentsdbStrategy) bucket(logical []byte) (int, error) {
	tags := o.metric + opentsdbTimestampBytes
	if len(logical) < tags {
		return 0, fmt.Errorf("%w: %d bytes, an OpenTSDB row key has at least %d (metric UID and timestamp)", ErrInvalidKey, len(logical), tags)
	}
	metric := logical[:o.metric]
	allZero := true
	for _, c := range metric {
		allZero = allZero && c == 0
	}
	if allZero {
		return 0, nil
	}
	r := javaHash(javaHash(1, metric), logical[tags:]) % o.n
	if r < 0 {
		r = -r
	}
	return int(r), nil
}

func (o opentsdbStrategy) prune(start, end []byte) ([]int, bool) { return nil, true }
