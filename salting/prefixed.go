package salting

import (
	"bytes"
	"fmt"

	"github.com/brine-kv/brine/keys"
)

// strategy is what differs between the bucket-prefix salters: how a logical key maps to a bucket,
// and which buckets a range can touch.
type strategy interface {
	// bucket returns the bucket of a non-empty logical key, without allocating.
	bucket(logical []byte) (int, error)
	// prune returns, in increasing order, the buckets that may hold keys of the non-empty range
	// [start, end), or all=true when it cannot tell.
	prune(start, end []byte) (buckets []int, all bool)
}

// prefixed is a Salter whose physical key is a bucket prefix followed by the logical key: hash,
// md5hex, mod, phoenix and opentsdb.
type prefixed struct {
	spec   string
	n      int
	hexLen int // > 0 (md5hex): the prefix is the bucket as hexLen lower-case hex digits
	decLen int // > 0 (digits=D): the prefix is the bucket as decLen decimal digits, zero-padded
	width  int // otherwise: the prefix is the bucket big-endian in width bytes
	st     strategy
}

// prefixWidth is the 1- or 2-byte prefix width that holds n buckets.
func prefixWidth(n int) int {
	if n <= 256 {
		return 1
	}
	return 2
}

func (p *prefixed) Spec() string { return p.spec }
func (p *prefixed) Buckets() int { return p.n }

func (p *prefixed) prefixLen() int {
	switch {
	case p.hexLen > 0:
		return p.hexLen
	case p.decLen > 0:
		return p.decLen
	}
	return p.width
}

const hexDigits = "0123456789abcdef"

func (p *prefixed) appendPrefix(dst []byte, b int) []byte {
	if p.decLen > 0 {
		for i := p.decLen - 1; i >= 0; i-- {
			dst = append(dst, '0'+byte(b/pow10(i)%10))
		}
		return dst
	}
	if p.hexLen > 0 {
		for i := p.hexLen - 1; i >= 0; i-- {
			dst = append(dst, hexDigits[(b>>(4*i))&0xf])
		}
		return dst
	}
	for i := p.width - 1; i >= 0; i-- {
		dst = append(dst, byte(b>>(8*i)))
	}
	return dst
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// parsePrefix reads the bucket from the prefix of a physical key; ok is false if it is not one.
func (p *prefixed) parsePrefix(physical []byte) (b int, ok bool) {
	l := p.prefixLen()
	if len(physical) < l {
		return 0, false
	}
	for _, c := range physical[:l] {
		switch {
		case p.decLen > 0:
			if c < '0' || c > '9' {
				return 0, false
			}
			b = b*10 + int(c-'0')
			continue
		case p.hexLen == 0:
			b = b<<8 | int(c)
			continue
		}
		switch {
		case c >= '0' && c <= '9':
			b = b<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			b = b<<4 | int(c-'a'+10)
		default:
			return 0, false
		}
	}
	return b, b < p.n
}

func (p *prefixed) Bucket(logical []byte) (int, error) {
	if len(logical) == 0 {
		return 0, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	return p.st.bucket(logical)
}

func (p *prefixed) AppendPhysical(dst, logical []byte) ([]byte, error) {
	dst, _, err := p.appendPhysicalBucket(dst, logical)
	return dst, err
}

func (p *prefixed) appendPhysicalBucket(dst, logical []byte) ([]byte, int, error) {
	b, err := p.Bucket(logical)
	if err != nil {
		return dst, 0, err
	}
	dst = p.appendPrefix(dst, b)
	return append(dst, logical...), b, nil
}

// AppendLogical strips the prefix after checking it is the one AppendPhysical would have written, so
// a row written unsalted or with another spec is reported rather than silently misplaced.
func (p *prefixed) AppendLogical(dst, physical []byte) ([]byte, error) {
	b, ok := p.parsePrefix(physical)
	logical := physical[min(p.prefixLen(), len(physical)):]
	if !ok || len(logical) == 0 {
		return dst, fmt.Errorf("%w: no %s bucket prefix", ErrInvalidPhysicalKey, p.spec)
	}
	want, err := p.st.bucket(logical)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrInvalidPhysicalKey, err)
	}
	if want != b {
		return dst, fmt.Errorf("%w: prefix says bucket %d, %s puts the key in bucket %d", ErrInvalidPhysicalKey, b, p.spec, want)
	}
	return append(dst, logical...), nil
}

func (p *prefixed) BucketRanges(start, end []byte) ([]BucketRange, error) {
	if len(end) > 0 && bytes.Compare(start, end) >= 0 {
		return []BucketRange{}, nil
	}
	var buckets []int
	all := true
	if isPoint(start, end) {
		if b, err := p.Bucket(start); err == nil {
			buckets, all = []int{b}, false
		}
	} else {
		buckets, all = p.st.prune(start, end)
	}
	if all {
		buckets = make([]int, p.n)
		for i := range buckets {
			buckets[i] = i
		}
	}
	out := make([]BucketRange, len(buckets))
	for i, b := range buckets {
		pfx := p.appendPrefix(nil, b)
		r := BucketRange{Bucket: b, Start: append(pfx[:len(pfx):len(pfx)], start...)}
		if len(end) > 0 {
			r.End = append(pfx[:len(pfx):len(pfx)], end...)
		} else {
			r.End = keys.PrefixEnd(pfx)
		}
		out[i] = r
	}
	return out, nil
}

// SplitKeys puts region i (1..regions-1) at bucket i*n/regions, which spreads the buckets as evenly
// as whole buckets allow when regions does not divide n.
func (p *prefixed) SplitKeys(regions int) [][]byte {
	if regions <= 0 || regions > p.n {
		regions = p.n
	}
	var out [][]byte
	for i := 1; i < regions; i++ {
		out = append(out, p.appendPrefix(nil, i*p.n/regions))
	}
	return out
}
