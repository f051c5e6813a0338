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

// BucketPrefix is what a bucket-prefix salter writes before a key of that bucket: the physical key of
// every test key is its bucket's prefix followed by the key. Salters of no such layout say so.
func TestBucketPrefix(t *testing.T) {
	keys := [][]byte{[]byte("abcdefgh"), []byte("user42/order7"), {0, 0, 0, 0, 0, 0, 0, 1}, bytes.Repeat([]byte{0xff}, 40)}
	specs := []struct {
		spec     string
		prefixed bool
	}{
		{"hash:16", true}, {"hash:65536", true}, {"hash:8:prefix=2", true}, {"md5hex:4", true}, {"md5hex:1", true},
		{"mod:10:offset=0,width=8", true}, {"phoenix:7", true}, {"opentsdb:20:width=4", true},
		{"reverse", false}, {"none", false},
	}
	for _, tc := range specs {
		s, err := ParseSpec(tc.spec)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		for _, b := range []int{-1, s.Buckets()} {
			if _, ok := BucketPrefix(s, b); ok {
				t.Errorf("%s: BucketPrefix(%d) ok, out of range", tc.spec, b)
			}
		}
		for _, k := range keys {
			b, err := s.Bucket(k)
			if err != nil {
				t.Fatalf("%s: Bucket(%x): %v", tc.spec, k, err)
			}
			pfx, ok := BucketPrefix(s, b)
			if ok != tc.prefixed {
				t.Fatalf("%s: BucketPrefix ok = %v, want %v", tc.spec, ok, tc.prefixed)
			}
			if !ok {
				continue
			}
			pk, err := s.AppendPhysical(nil, k)
			if err != nil {
				t.Fatalf("%s: AppendPhysical(%x): %v", tc.spec, k, err)
			}
			if !bytes.Equal(pk, append(pfx, k...)) {
				t.Errorf("%s: physical key %x is not BucketPrefix(%d) %x + key %x", tc.spec, pk, b, pfx, k)
			}
		}
	}
}
