package hbasetest

import (
	"bytes"
	"strings"
	"testing"
)

func TestBinaryRoundTrip(t *testing.T) {
	tests := [][]byte{
		nil, []byte("row010"), {0x00}, {0xff, 0xff}, []byte(`a\x`), []byte("a b,c:d\\"), {0x5c, 0x78, 0x34, 0x31},
	}
	for _, k := range tests {
		enc := EncodeBinary(k)
		dec, err := DecodeBinary(enc)
		if err != nil || !bytes.Equal(dec, k) {
			t.Errorf("round trip of %q via %q = %q, %v", k, enc, dec, err)
		}
	}
	// What HBase's Bytes.toStringBinary prints: printable punctuation stays as is.
	if got, err := DecodeBinary(`row\x00,\xFF`); err != nil || string(got) != "row\x00,\xff" {
		t.Errorf("DecodeBinary = %q, %v", got, err)
	}
	if _, err := DecodeBinary(`\xZZ`); err == nil {
		t.Error(`DecodeBinary(\xZZ): no error`)
	}
}

func TestTableNamesAreUnique(t *testing.T) {
	a, b := Table("t"), Table("t")
	if a == b || !strings.HasPrefix(a, "t_") {
		t.Errorf("Table: %q, %q", a, b)
	}
}

func TestZKSkipsWithoutServer(t *testing.T) {
	t.Setenv(EnvZK, "")
	t.Setenv("CI", "")
	ran := false
	t.Run("inner", func(t *testing.T) {
		ZK(t)
		ran = true
	})
	if ran {
		t.Error("ZK did not skip without a server")
	}
}
