package tablestore

import (
	"math"
	"unicode/utf8"

	"github.com/brine-kv/brine/keys"
)

// Range bounds. Tablestore bounds are primary-key tuples while brine's are byte strings; for the keys a
// schema accepts, tuple order equals byte order, so each byte bound maps to a tuple that is exact where
// that is cheap and otherwise errs on the inclusive side. The scan drops the few extra rows by comparing
// physical keys with the brine range, so a loose bound costs reads, never correctness.

// lowerBound returns T with tuple(K) >= T (strict: > T) for every valid key K >= b.
func (s *keySchema) lowerBound(b []byte, strict bool) []pkVal {
	n := len(s.cols)
	out := make([]pkVal, 0, n)
	pad := func() []pkVal {
		for len(out) < n {
			out = append(out, infMin)
		}
		return out
	}
	if len(b) == 0 {
		return pad()
	}
	if n == 1 {
		return []pkVal{s.lowerBytes(0, b, strict)}
	}
	rest, start := b, 0
	if w := s.cols[0].Width; w > 0 {
		if len(b) < w || (s.cols[0].Type == KeyString && !utf8.Valid(b[:w])) {
			// A shorter bound compares with the fixed-width first column alone; the MIN padding below
			// makes the bound strict as well (and lowerBytes' shorter valid prefix sorts lower still).
			out = append(out, s.lowerBytes(0, b[:min(w, len(b))], false))
			return pad()
		}
		out = append(out, s.valueOf(0, b[:w:w]))
		if rest, start = b[w:], 1; len(rest) == 0 {
			return pad()
		}
	}
	for i := start; i < n; i++ {
		last := i == n-1
		v, used, complete := s.field(i, rest)
		rest = rest[used:]
		if !complete {
			if used == 0 && i > 0 {
				return pad() // tag missing or wrong: INF_MIN is always low enough
			}
			if s.cols[i].Type != KeyInteger {
				v = s.lowerBytes(i, bytesOf(v), strict && last)
			} else if strict && last {
				v = predInt(v)
			}
			out = append(out, v)
			return pad()
		}
		if last && strict && len(rest) == 0 {
			// b is exactly a key: step below its last column.
			if s.cols[i].Type == KeyInteger {
				v = predInt(v)
			} else {
				v = s.lowerBytes(i, bytesOf(v), true)
			}
		}
		out = append(out, v)
		if len(rest) == 0 {
			return pad()
		}
	}
	// b is a key followed by more bytes: every K >= b is > that key, so its tuple is a strict bound too.
	return out
}

// lowerBytes is the lower bound for a STRING/BINARY column whose bytes must be >= b (strict: the bound
// itself must be < b).
func (s *keySchema) lowerBytes(i int, b []byte, strict bool) pkVal {
	if len(b) > maxPKValueLen {
		b = b[:maxPKValueLen] // a prefix sorts before b: still a lower bound
	}
	if len(b) == 0 {
		return infMin
	}
	if strict {
		switch {
		case len(b) == 0:
			return infMin
		case b[len(b)-1] == 0x00:
			b = b[:len(b)-1] // the immediate predecessor
		case s.cols[i].Type == KeyBinary:
			// Just below b: b[:-1], last byte - 1, then 0xFF bytes; rows between it and b are few.
			p := append([]byte(nil), b[:len(b)-1]...)
			p = append(p, b[len(b)-1]-1)
			for len(p) < maxPKValueLen && len(p) < len(b)+16 {
				p = append(p, 0xFF)
			}
			b = p
		default:
			b = b[:len(b)-1]
		}
	}
	if s.cols[i].Type == KeyString {
		b = validPrefix(b) // shorter still sorts lower
	}
	if len(b) == 0 && strict {
		return infMin
	}
	return s.valueOf(i, b)
}

// upperBound returns T with tuple(K) < T for every valid key K < b: an exclusive upper bound, and an
// inclusive one for BACKWARD scans.
func (s *keySchema) upperBound(b []byte) []pkVal {
	n := len(s.cols)
	if len(b) == 0 {
		out := make([]pkVal, n)
		for i := range out {
			out[i] = infMax
		}
		return out
	}
	out := make([]pkVal, 0, n)
	pad := func(p pkVal) []pkVal {
		for len(out) < n {
			out = append(out, p)
		}
		return out
	}
	if n == 1 {
		return []pkVal{s.upperBytes(0, b)}
	}
	rest, start := b, 0
	if w := s.cols[0].Width; w > 0 {
		first := b[:min(w, len(b))]
		if s.cols[0].Type == KeyString && !utf8.Valid(first) {
			return pad(infMax) // loose: every row
		}
		if out = append(out, s.valueOf(0, first)); len(b) <= w {
			return pad(infMin)
		}
		rest, start = b[w:], 1
	}
	for i := start; i < n; i++ {
		v, used, complete := s.field(i, rest)
		junk := rest[used:]
		rest = junk
		if !complete {
			if used == 0 && i > 0 {
				// The field's tag is missing or wrong: every row sharing the columns before sorts above b
				// (no byte left, or a smaller one) or below it (a larger one).
				if len(junk) > 0 && junk[0] > fieldTag(s.cols[i].Type) {
					return pad(infMax)
				}
				return pad(infMin)
			}
			if s.cols[i].Type == KeyInteger {
				out = append(out, v) // enc(x) < prefix p exactly when x < p padded with zeros
				return pad(infMin)
			}
			p := bytesOf(v)
			switch {
			case len(junk) > 0 && junk[0] == 0xFF:
				// b continues past p with 0xFF and no valid escape after it: every value with prefix p
				// may sort below b.
				if p = keys.PrefixEnd(p); p == nil {
					return pad(infMax)
				}
			case len(junk) > 1 && junk[1] != 0x00:
				// b continues past p with 0x00 y, y neither escape nor terminator: p itself sorts below b.
				p = append(append([]byte(nil), p...), 0x00)
			}
			if len(p) > maxPKValueLen || (s.cols[i].Type == KeyString && !utf8.Valid(p)) {
				return pad(infMax) // loose: every row sharing the columns before
			}
			out = append(out, s.valueOf(i, p))
			return pad(infMin)
		}
		out = append(out, v)
		if len(rest) == 0 {
			return pad(infMin)
		}
	}
	// b is a key followed by more bytes: K < b means K <= that key, so step past its last column.
	last := out[n-1]
	if s.cols[n-1].Type == KeyInteger {
		x := last.v.(int64)
		if x == math.MaxInt64 {
			out[n-1] = infMax
		} else {
			out[n-1] = pkVal{v: x + 1}
		}
		return out
	}
	p := append(append([]byte(nil), bytesOf(last)...), 0x00)
	if len(p) > maxPKValueLen {
		out[n-1] = infMax
	} else {
		out[n-1] = s.valueOf(n-1, p)
	}
	return out
}

// upperBytes is the exclusive upper bound of a single key column.
func (s *keySchema) upperBytes(i int, b []byte) pkVal {
	if len(b) > maxPKValueLen {
		// Keys have at most maxPKValueLen bytes: those below b are at most its prefix, and all of them
		// sort before the prefix incremented.
		inc := keys.PrefixEnd(b[:maxPKValueLen])
		if inc == nil {
			return infMax
		}
		b = inc
	}
	if s.cols[i].Type == KeyString && !utf8.Valid(b) {
		return infMax
	}
	return s.valueOf(i, b)
}

func predInt(v pkVal) pkVal {
	x := v.v.(int64)
	if x == math.MinInt64 {
		return infMin
	}
	return pkVal{v: x - 1}
}

func bytesOf(v pkVal) []byte {
	switch x := v.v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return nil
}

// validPrefix returns the longest prefix of b that is valid UTF-8.
func validPrefix(b []byte) []byte {
	for !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return b
}
