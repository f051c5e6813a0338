package keys

// PrefixEnd returns the smallest key greater than every key that starts with prefix: prefix with its
// trailing 0xff bytes dropped and its last byte incremented. It returns nil (no upper bound) when
// there is none, i.e. prefix is empty or all 0xff. The result never aliases prefix.
//
// It lives here, the one package every other imports without cycles, so the stores, the salters and
// the codecs all bound a prefix scan the same way.
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

// Successor returns the smallest key greater than key: key followed by a zero byte (for an empty key,
// the single byte 0x00). The result never aliases key.
func Successor(key []byte) []byte {
	return append(append(make([]byte, 0, len(key)+1), key...), 0)
}
