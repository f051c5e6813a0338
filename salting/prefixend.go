package salting

import (
	"bytes"

	"github.com/brine-kv/brine/keys"
)

// endWithin reports whether a range ending at end (empty: unbounded) stays inside the keys that start
// with prefix, given that its start does.
func endWithin(prefix, end []byte) bool {
	pe := keys.PrefixEnd(prefix)
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
