package keys

import (
	"bytes"
	"testing"
)

func TestPrefixEnd(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{nil, nil},
		{[]byte{}, nil},
		{[]byte{0xff}, nil},
		{[]byte{0xff, 0xff}, nil},
		{[]byte("a"), []byte("b")},
		{[]byte{'a', 0xff}, []byte("b")},
		{[]byte{'a', 0xfe}, []byte{'a', 0xff}},
		{[]byte{0x00}, []byte{0x01}},
		{[]byte("a\xff\xff"), []byte("b")},
		{[]byte{0xfe, 0xff}, []byte{0xff}},
	} {
		in := bytes.Clone(tc.in)
		got := PrefixEnd(in)
		if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
			t.Errorf("PrefixEnd(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if len(got) > 0 && len(in) > 0 {
			got[0]++
			if !bytes.Equal(in, tc.in) {
				t.Errorf("PrefixEnd(%q)'s result aliases its input", tc.in)
			}
		}
	}
}

func TestSuccessor(t *testing.T) {
	for _, tc := range []struct{ in, want []byte }{
		{nil, []byte{0}},
		{[]byte("a"), []byte{'a', 0}},
		{[]byte{0xff}, []byte{0xff, 0}},
	} {
		in := bytes.Clone(tc.in)
		got := Successor(in)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("Successor(%q) = %q, want %q", tc.in, got, tc.want)
		}
		got[0]++
		if !bytes.Equal(in, tc.in) {
			t.Errorf("Successor(%q)'s result aliases its input", tc.in)
		}
	}
}
