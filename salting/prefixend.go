package salting

import "bytes"

// PrefixEnd returns the smallest key greater than every key that starts with prefix: prefix with its
// trailing 0xff bytes dropped and its last byte incremented. It returns nil (no upper bound) when
// there is none, i.e. prefix is empty or all 0xff. The result never aliases prefix.
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := append([]byte(nil), prefix[:i+1]...)
			end[i]++
			return end
		}
	}
	return nil
}

// endWithin reports whether a range ending at end (empty: unbounded) stays inside the keys that start
// with prefix, given that its start does.
func endWithin(prefix, end []byte) bool {
	pe := PrefixEnd(prefix)
	if pe == nil {
		return true
	}
	return len(end) > 0 && bytes.Compare(end, pe) <= 0
}

// isPoint reports whether the non-empty range [start, end) holds the single key start, i.e. end is
// start+"\x00" (no key lies strictly between the two).
func isPoint(start, end []byte) bool {
	return len(end) == len(start)+1 && end[len(start)] == 0 && bytes.HasPrefix(end, start)
}
