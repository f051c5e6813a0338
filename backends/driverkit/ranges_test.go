package driverkit_test

import (
	"bytes"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

func TestClampRange(t *testing.T) {
	const maxLen = 3
	tests := []struct {
		name string
		r    backends.Range
		want backends.Range
		ok   bool
	}{
		{"short bounds unchanged", backends.Range{Start: []byte("ab"), End: []byte("abc")}, backends.Range{Start: []byte("ab"), End: []byte("abc")}, true},
		{"unbounded", backends.Range{}, backends.Range{}, true},
		{"single row of the longest key", backends.Range{Start: []byte("abc"), End: []byte("abc\x00")}, backends.Range{Start: []byte("abc"), End: []byte("abd")}, true},
		{"long start", backends.Range{Start: []byte("abcd")}, backends.Range{Start: []byte("abd")}, true},
		{"long start with 0xFF", backends.Range{Start: []byte("a\xff\xffz")}, backends.Range{Start: []byte("b")}, true},
		{"long start past every key", backends.Range{Start: []byte("\xff\xff\xff\x00")}, backends.Range{}, false},
		{"long end all 0xFF", backends.Range{Start: []byte("a"), End: []byte("\xff\xff\xff\x01")}, backends.Range{Start: []byte("a")}, true},
		{"only keys over the limit", backends.Range{Start: []byte("abcd"), End: []byte("abce")}, backends.Range{}, false},
	}
	for _, tt := range tests {
		got, ok := driverkit.ClampRange(tt.r, maxLen)
		if ok != tt.ok || (ok && (!bytes.Equal(got.Start, tt.want.Start) || !bytes.Equal(got.End, tt.want.End))) {
			t.Errorf("%s: ClampRange(%q, %q) = [%q, %q), %v; want [%q, %q), %v", tt.name, tt.r.Start, tt.r.End, got.Start, got.End, ok, tt.want.Start, tt.want.End, tt.ok)
		}
		if !ok {
			continue
		}
		// Every key of at most maxLen bytes is in the clamped range exactly when it is in r.
		for _, k := range [][]byte{[]byte("a"), []byte("ab"), []byte("abc"), []byte("abd"), []byte("a\xff\xff"), []byte("b"), []byte("\xff\xff\xff"), []byte("zz")} {
			if got.Contains(k) != tt.r.Contains(k) {
				t.Errorf("%s: key %q: in clamped range %v, in original %v", tt.name, k, got.Contains(k), tt.r.Contains(k))
			}
		}
	}
}
