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
