package keys

import (
	"bytes"
	"testing"
)

// TestAppendMatchesSchema: the single-field encoders write exactly what a Schema writes, which is what
// lets other key layouts (Tablestore's) share this wire format.
func TestAppendMatchesSchema(t *testing.T) {
	s, err := NewSchema(String("s"), Bytes("b"), Int64("i"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		str string
		b   []byte
		i   int64
	}{
		{"", nil, 0},
		{"host\x00\xff1", []byte{0xff, 0x00, 'x'}, -1},
		{"ünïcode", []byte("plain"), 1 << 62},
	} {
		want, err := s.Encode(tc.str, tc.b, tc.i)
		if err != nil {
			t.Fatal(err)
		}
		got := AppendText(nil, KindString, tc.str)
		got = AppendText(got, KindBytes, tc.b)
		got = AppendInt64(got, tc.i)
		if !bytes.Equal(got, want) {
			t.Errorf("(%q, %q, %d): fields %x, schema %x", tc.str, tc.b, tc.i, got, want)
		}
		if body := AppendEscaped(nil, tc.b); !bytes.Equal(append([]byte{KindBytes.Tag(false)}, body...), AppendText(nil, KindBytes, tc.b)) {
			t.Errorf("AppendEscaped(%q) = %x: not the Bytes field's body", tc.b, body)
		}
	}
}

// TestDecodeEscaped: whole bodies round-trip; a cut or malformed body yields the value read before
// the cut and where it stopped.
func TestDecodeEscaped(t *testing.T) {
	for _, v := range [][]byte{{}, []byte("abc"), {0x00}, {0xff}, {'a', 0x00, 0xff, 'b', 0xff, 0x00}} {
		body := AppendEscaped(nil, v)
		got, n, complete := DecodeEscaped(append(body, "rest"...))
		if !bytes.Equal(got, v) || n != len(body) || !complete {
			t.Errorf("DecodeEscaped(%q+rest) = %q, %d, %v; want %q, %d, true", body, got, n, complete, v, len(body))
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want []byte
		n    int
	}{
		{"empty", nil, []byte{}, 0},
		{"no terminator", []byte("ab"), []byte("ab"), 2},
		{"cut in an escape", []byte{'a', 0x00}, []byte("a"), 1},
		{"cut after an escaped 0xff", []byte{'a', 0xff, 0x00, 'b'}, []byte{'a', 0xff, 'b'}, 4},
		{"bad escape", []byte{'a', 0x00, 0x02, 0x00, 0x01}, []byte("a"), 1},
		{"0xff not escaped", []byte{'a', 0xff, 'b'}, []byte("a"), 1},
	} {
		got, n, complete := DecodeEscaped(tc.b)
		if !bytes.Equal(got, tc.want) || n != tc.n || complete {
			t.Errorf("%s: DecodeEscaped(%q) = %q, %d, %v; want %q, %d, false", tc.name, tc.b, got, n, complete, tc.want, tc.n)
		}
	}
}

// TestDecodeInt64: a whole body round-trips; a short one pads with zeros.
func TestDecodeInt64(t *testing.T) {
	for _, v := range []int64{0, -1, 1, -1 << 63, 1<<63 - 1} {
		body := AppendInt64(nil, v)[1:]
		if got, n, complete := DecodeInt64(body); got != v || n != 8 || !complete {
			t.Errorf("DecodeInt64(%x) = %d, %d, %v; want %d, 8, true", body, got, n, complete, v)
		}
	}
	got, n, complete := DecodeInt64([]byte{0x80, 0x00, 0x01})
	if want := int64(1) << 40; got != want || n != 3 || complete {
		t.Errorf("DecodeInt64(3 bytes) = %d, %d, %v; want %d, 3, false", got, n, complete, want)
	}
}
