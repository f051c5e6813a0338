package salting

import (
	"bytes"
	"fmt"

	"github.com/brine-kv/brine/keys"
)

// reverser is the guides' [reverse(userid)][orderid]: one bucket, and the leading part of the key
// written backwards so that ids sharing a prefix (sequential ids) spread over the key space. The
// transform is its own inverse. It keeps key order only among keys with the same leading part.
type reverser struct {
	lead lead
}

func (r reverser) Spec() string { return "reverse" + r.lead.suffix() }
func (r reverser) Buckets() int { return 1 }

func (r reverser) Bucket(logical []byte) (int, error) {
	if len(logical) == 0 {
		return 0, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if r.lead.mode == leadFields {
		if _, err := r.lead.part(logical); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// transform appends key with its leading part reversed.
func (r reverser) transform(dst, key []byte) ([]byte, error) {
	if r.lead.mode == leadFields {
		out, err := keys.AppendReversedFields(dst, key, r.lead.n)
		if err != nil {
			return dst, fmt.Errorf("%w: want a keys-encoded key with at least %d fields: %w", ErrInvalidKey, r.lead.n, err)
		}
		return out, nil
	}
	part, _ := r.lead.part(key) // cannot fail outside fields mode
	n := len(dst)
	dst = append(dst, key...)
	reverseBytes(dst[n : n+len(part)])
	return dst, nil
}

func reverseBytes(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}

func (r reverser) AppendPhysical(dst, logical []byte) ([]byte, error) {
	if len(logical) == 0 {
		return dst, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	return r.transform(dst, logical)
}

func (r reverser) AppendLogical(dst, physical []byte) ([]byte, error) {
	if len(physical) == 0 {
		return dst, fmt.Errorf("%w: empty key", ErrInvalidPhysicalKey)
	}
	out, err := r.transform(dst, physical)
	if err != nil {
		return dst, fmt.Errorf("%w: %w", ErrInvalidPhysicalKey, err)
	}
	return out, nil
}

// BucketRanges maps a range that stays within one leading value (or holds a single key) to its one
// physical range; any other range would come back out of order, so it is ErrUnorderedRange.
func (r reverser) BucketRanges(start, end []byte) ([]BucketRange, error) {
	if len(end) > 0 && bytes.Compare(start, end) >= 0 {
		return []BucketRange{}, nil
	}
	if isPoint(start, end) && len(start) > 0 {
		if ps, err := r.transform(nil, start); err == nil {
			return []BucketRange{{Bucket: 0, Start: ps, End: append(ps[:len(ps):len(ps)], 0)}}, nil
		}
	}
	g, ok := r.lead.group(start)
	if !ok || !endWithin(g, end) {
		return nil, fmt.Errorf("%w: %s keeps key order only within one leading value; [%q, %q) spans several", ErrUnorderedRange, r.Spec(), start, end)
	}
	// Every key in the range starts with g, and the transform maps "g + rest" to "T(g) + rest".
	pg, err1 := r.transform(nil, g)
	ps, err2 := r.transform(nil, start)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%w: %s: [%q, %q)", ErrUnorderedRange, r.Spec(), start, end)
	}
	br := BucketRange{Bucket: 0, Start: ps}
	if len(end) > 0 && bytes.HasPrefix(end, g) {
		pe, err := r.transform(nil, end)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: end %q", ErrUnorderedRange, r.Spec(), end)
		}
		br.End = pe
	} else {
		br.End = keys.PrefixEnd(pg) // end is at or past the last key starting with g
	}
	return []BucketRange{br}, nil
}

func (r reverser) SplitKeys(regions int) [][]byte { return nil }

// identity is "none": physical key = logical key, one bucket.
type identity struct{}

func (identity) Spec() string { return "none" }
func (identity) Buckets() int { return 1 }

func (identity) Bucket(logical []byte) (int, error) {
	if len(logical) == 0 {
		return 0, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	return 0, nil
}

func (identity) AppendPhysical(dst, logical []byte) ([]byte, error) {
	if len(logical) == 0 {
		return dst, fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	return append(dst, logical...), nil
}

func (identity) AppendLogical(dst, physical []byte) ([]byte, error) {
	if len(physical) == 0 {
		return dst, fmt.Errorf("%w: empty key", ErrInvalidPhysicalKey)
	}
	return append(dst, physical...), nil
}

func (identity) BucketRanges(start, end []byte) ([]BucketRange, error) {
	if len(end) > 0 && bytes.Compare(start, end) >= 0 {
		return []BucketRange{}, nil
	}
	br := BucketRange{Bucket: 0}
	if len(start) > 0 {
		br.Start = bytes.Clone(start)
	}
	if len(end) > 0 {
		br.End = bytes.Clone(end)
	}
	return []BucketRange{br}, nil
}

func (identity) SplitKeys(regions int) [][]byte { return nil }
