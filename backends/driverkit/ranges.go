package driverkit

import "github.com/brine-kv/brine/backends"

// ClampRange returns the range of keys of at most maxLen bytes that r holds, with bounds of at most
// maxLen bytes, for a store that takes no longer keys (HBase): a range that holds a key can then
// always be scanned, even when a bound is past the limit (the single-row range of the longest key
// ends one byte beyond it). ok is false when r holds no such key.
func ClampRange(r backends.Range, maxLen int) (_ backends.Range, ok bool) {
	// A key k of at most maxLen bytes lies at or above a longer bound b exactly when it lies above
	// p = b[:maxLen], that is at or above the first key after every key starting with p.
	after := func(b []byte) []byte {
		p := b[:maxLen]
		for i := len(p) - 1; i >= 0; i-- {
			if p[i] != 0xFF {
				next := append([]byte(nil), p[:i+1]...)
				next[i]++
				return next
			}
		}
		return nil // p is all 0xFF: no key of at most maxLen bytes comes after it
	}
	if len(r.Start) > maxLen {
		if r.Start = after(r.Start); r.Start == nil {
			return backends.Range{}, false
		}
	}
	if len(r.End) > maxLen {
		r.End = after(r.End) // nil: every key up to the limit lies below End
	}
	return r, len(r.End) == 0 || string(r.Start) < string(r.End)
}
