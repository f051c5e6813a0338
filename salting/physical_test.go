package salting

import (
	"bytes"
	"testing"
)

// AppendPhysicalBucket agrees with Bucket and AppendPhysical for every kind of salter, and no salter's
// prefix is longer than MaxPrefixLen.
func TestAppendPhysicalBucket(t *testing.T) {
	specs := []string{"hash:16", "hash:65536", "hash:8:prefix=2", "md5hex:4", "md5hex:1", "mod:10:offset=0,width=8",
		"phoenix:7", "opentsdb:20:width=4", "reverse", "none"}
	keys := [][]byte{[]byte("abcdefgh"), []byte("user42/order7"), {0, 0, 0, 0, 0, 0, 0, 1}, bytes.Repeat([]byte{0xff}, 40)}
	for _, spec := range specs {
		s, err := ParseSpec(spec)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		for _, k := range keys {
			wantB, err := s.Bucket(k)
			if err != nil {
				t.Fatalf("%s: Bucket(%x): %v", spec, k, err)
			}
			wantPK, err := s.AppendPhysical(nil, k)
			if err != nil {
				t.Fatalf("%s: AppendPhysical(%x): %v", spec, k, err)
			}
			pk, b, err := AppendPhysicalBucket(s, []byte("dst"), k)
			if err != nil || b != wantB || !bytes.Equal(pk, append([]byte("dst"), wantPK...)) {
				t.Errorf("%s: AppendPhysicalBucket(%x) = %x, %d, %v; want %x, %d", spec, k, pk, b, err, wantPK, wantB)
			}
			if len(wantPK)-len(k) > MaxPrefixLen {
				t.Errorf("%s: prefix of %d bytes, MaxPrefixLen is %d", spec, len(wantPK)-len(k), MaxPrefixLen)
			}
		}
	}
	if _, _, err := AppendPhysicalBucket(mustParse(t, "hash:4"), nil, nil); err == nil {
		t.Error("AppendPhysicalBucket of an empty key: no error")
	}
}
