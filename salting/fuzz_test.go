package salting

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/brine-kv/brine/keys"
)

// One spec per strategy and lead mode, with 1- and 2-byte prefixes.
var fuzzSpecs = []string{
	"hash:16", "hash:300", "hash:8:prefix=3", "hash:12:digits=2", "mod:300:offset=0,width=8,digits=3", "hash:16:fields=1", "hash:5:fields=2", "hash:4:sep=0x2c",
	"md5hex:1", "md5hex:2:prefix=2", "md5hex:2:fields=2", "md5hex:1:sep=0x2c",
	"mod:7:offset=1,width=2", "mod:300:offset=0,width=8", "mod:5:field=k1",
	"reverse", "reverse:prefix=3", "reverse:fields=1", "reverse:fields=2", "reverse:sep=0x2c",
	"phoenix:8", "phoenix:256", "opentsdb:20:width=1", "opentsdb:300:width=2,metric=2", "none",
}

var fuzzSchema = mustSchemaFuzz("a,b:int64,c:bytes:desc")

func mustSchemaFuzz(spec string) *keys.Schema {
	s, err := keys.ParseSchema(spec)
	if err != nil {
		panic(err)
	}
	return s
}

// encoded builds a keys-encoded key from fuzz bytes (a short string, an int near base, bytes).
func encoded(d []byte, base int64) []byte {
	var a, c []byte
	var delta int64
	if len(d) > 0 {
		n := min(int(d[0]%4), len(d)-1)
		a, d = d[1:1+n], d[1+n:]
	}
	if len(d) > 0 {
		delta, d = int64(int8(d[0])), d[1:]
	}
	c = d
	k, err := fuzzSchema.Encode(string(a), base+delta, c)
	if err != nil {
		panic(err)
	}
	return k
}

func inLogical(k, start, end []byte) bool {
	return bytes.Compare(k, start) >= 0 && (len(end) == 0 || bytes.Compare(k, end) < 0)
}

// FuzzSalters checks, for every strategy: AppendLogical(AppendPhysical(k)) == k; Bucket agrees with
// the prefix; the physical key lies in BucketRanges(nil, nil)[bucket] and in exactly the ranges of a
// logical range that holds k; keys keep their order within a bucket; split keys start buckets.
func FuzzSalters(f *testing.F) {
	f.Add(byte(0), byte(0), []byte("user1"), []byte("user12"), []byte("user"), []byte("usez"))
	f.Add(byte(1), byte(3), []byte{2, 'u', '1', 5, 9}, []byte{2, 'u', '1', 7}, []byte{1}, []byte{2})
	f.Add(byte(2), byte(0x22), []byte{1, 'x', 0xfe, 1}, []byte{1, 'x', 2}, []byte{3}, []byte{8})
	f.Add(byte(4), byte(0x13), []byte("u1,o1"), []byte("u1,o2"), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, mode, cut byte, d1, d2, d3, d4 []byte) {
		var k1, k2, start, end []byte
		switch mode % 5 {
		case 0: // raw keys and range
			k1, k2, start, end = d1, d2, d3, d4
		case 1: // encoded keys; the range of k1's leading fields
			k1, k2 = encoded(d1, 1000), encoded(d2, 1000)
			vals, _ := fuzzSchema.Decode(k1)
			start, end, _ = fuzzSchema.PrefixRange(vals[:int(cut)%4]...)
		case 2: // encoded keys; a range around k1's int field
			k1, k2 = encoded(d1, 1000), encoded(d2, 1000)
			start, end = encoded(d3, 1000), encoded(d4, 1000)
		case 3: // encoded keys; raw range
			k1, k2 = encoded(d1, -3), encoded(d2, -3)
			start, end = d3, d4
		case 4: // raw keys; a range from a prefix of k1 to past another prefix of it
			k1, k2 = d1, d2
			start = d1[:int(cut&0x0f)%(len(d1)+1)]
			end = keys.PrefixEnd(d1[:int(cut>>4)%(len(d1)+1)])
		}
		for _, spec := range fuzzSpecs {
			s, err := ParseSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			checkSalter(t, s, k1, k2, start, end)
		}
	})
}

func checkSalter(t *testing.T, s Salter, k1, k2, start, end []byte) {
	spec := s.Spec()
	_, isReverse := s.(reverser)
	full, fullErr := s.BucketRanges(nil, nil)
	if isReverse {
		if !errors.Is(fullErr, ErrUnorderedRange) {
			t.Fatalf("%s: full range: %v, want ErrUnorderedRange", spec, fullErr)
		}
	} else if fullErr != nil || len(full) != s.Buckets() {
		t.Fatalf("%s: full range: %d ranges, %v", spec, len(full), fullErr)
	}
	pruned, prunedErr := s.BucketRanges(start, end)
	if prunedErr != nil && !(isReverse && errors.Is(prunedErr, ErrUnorderedRange)) {
		t.Fatalf("%s: BucketRanges(%q, %q): %v", spec, start, end, prunedErr)
	}
	for i := 1; i < len(pruned); i++ {
		if pruned[i-1].Bucket >= pruned[i].Bucket {
			t.Fatalf("%s: BucketRanges(%q, %q) not in bucket order", spec, start, end)
		}
	}

	type placed struct {
		k, p []byte
		b    int
	}
	var ok []placed
	for _, k := range [][]byte{k1, k2} {
		buf := make([]byte, 0, len(k)+8)
		p, err := s.AppendPhysical(buf, k)
		b, berr := s.Bucket(k)
		if err != nil {
			if !errors.Is(err, ErrInvalidKey) || berr == nil {
				t.Fatalf("%s: AppendPhysical(%q): %v; Bucket: %v", spec, k, err, berr)
			}
			continue
		}
		if berr != nil || b < 0 || b >= s.Buckets() {
			t.Fatalf("%s: Bucket(%q) = %d, %v", spec, k, b, berr)
		}
		l, err := s.AppendLogical(make([]byte, 0, len(p)), p)
		if err != nil || !bytes.Equal(l, k) {
			t.Fatalf("%s: AppendLogical(AppendPhysical(%q) = %q) = %q, %v", spec, k, p, l, err)
		}
		if !isReverse {
			for _, r := range full {
				if contains(r, p) != (r.Bucket == b) {
					t.Fatalf("%s: key %q (bucket %d, physical %q): full range of bucket %d = [%q, %q)", spec, k, b, p, r.Bucket, r.Start, r.End)
				}
			}
		}
		if prunedErr == nil {
			want := inLogical(k, start, end)
			hits := 0
			for _, r := range pruned {
				if contains(r, p) {
					hits++
					if r.Bucket != b {
						t.Fatalf("%s: physical %q of bucket %d in the range of bucket %d", spec, p, b, r.Bucket)
					}
				}
			}
			if (hits == 1) != want || hits > 1 {
				t.Fatalf("%s: key %q in [%q, %q): %v, but its physical %q is in %d of the ranges %+v", spec, k, start, end, want, p, hits, pruned)
			}
		}
		ok = append(ok, placed{k, p, b})
	}
	// Order within a bucket (for reverse: when both keys fall in one mappable range).
	if len(ok) == 2 && ok[0].b == ok[1].b {
		sameOrder := true
		if isReverse {
			lo, hi := ok[0].k, ok[1].k
			if bytes.Compare(lo, hi) > 0 {
				lo, hi = hi, lo
			}
			_, err := s.BucketRanges(lo, append(bytes.Clone(hi), 0))
			sameOrder = err == nil
		}
		if sameOrder && bytes.Compare(ok[0].k, ok[1].k) != bytes.Compare(ok[0].p, ok[1].p) {
			t.Fatalf("%s: %q vs %q compare differently as %q vs %q", spec, ok[0].k, ok[1].k, ok[0].p, ok[1].p)
		}
	}
	// Split keys: increasing, each the start of a bucket.
	starts := make(map[string]bool, len(full))
	for _, r := range full {
		starts[string(r.Start)] = true
	}
	for _, regions := range []int{0, 3} {
		splits := s.SplitKeys(regions)
		for i, sk := range splits {
			if i > 0 && bytes.Compare(splits[i-1], sk) >= 0 {
				t.Fatalf("%s: split keys not increasing: %q", spec, splits)
			}
			if !starts[string(sk)] {
				t.Fatalf("%s: split key %q starts no bucket", spec, sk)
			}
		}
	}
}

// FuzzParseSpec: ParseSpec and ParseStoredSpec never panic, reject with ErrInvalidSpec, and Spec()
// round-trips through both; ParseStoredSpec reads every spec ParseSpec reads as the same salter, and a
// spelling only storage reads (an earlier brine's field=K) has a Spec() that ParseSpec reads, placing
// keys alike.
func FuzzParseSpec(f *testing.F) {
	for _, s := range fuzzSpecs {
		f.Add(s)
	}
	for _, s := range []string{"hash:16:prefix=4", "mod:16:width=4:offset=2", "opentsdb:20:metric=4,width=1", "hash:16,sep=_", "hash::", ":", "md5hex:4:sep=0xff",
		"mod:8:field=2", "mod:16:field=1,digits=2", "mod:8:field=255", "mod:8:field=0", "mod:8:field=k", "mod:8:field=k01", "mod:8:field=k254",
		"mod:8:field=k255", "mod:8:field=kk1", "mod:8:field=2,width=1"} {
		f.Add(s)
	}
	key := encoded([]byte{2, 'h', 'x', 9, 1, 2}, 1700000000123)
	f.Fuzz(func(t *testing.T, spec string) {
		stored, serr := ParseStoredSpec(spec)
		if serr != nil && !errors.Is(serr, ErrInvalidSpec) {
			t.Fatalf("ParseStoredSpec(%q): %v is not ErrInvalidSpec", spec, serr)
		}
		s, uerr := ParseSpec(spec)
		if uerr != nil {
			if !errors.Is(uerr, ErrInvalidSpec) {
				t.Fatalf("ParseSpec(%q): %v is not ErrInvalidSpec", spec, uerr)
			}
			if serr != nil {
				return
			}
			// Only storage reads it: its current spelling is one a user may write, with the same
			// buckets, and the user's error says to write it.
			var err error
			if s, err = ParseSpec(stored.Spec()); err != nil || s.Spec() != stored.Spec() {
				t.Fatalf("ParseStoredSpec(%q).Spec() = %q, which ParseSpec reads as %v, %v", spec, stored.Spec(), s, err)
			}
			b1, err1 := stored.Bucket(key)
			b2, err2 := s.Bucket(key)
			if b1 != b2 || (err1 == nil) != (err2 == nil) {
				t.Fatalf("%q and %q place a key apart: %d, %v and %d, %v", spec, s.Spec(), b1, err1, b2, err2)
			}
			if !strings.Contains(uerr.Error(), "; write "+s.Spec()+": ") {
				t.Fatalf("ParseSpec(%q) = %v: it does not say to write %q", spec, uerr, s.Spec())
			}
		}
		canon := s.Spec()
		if serr != nil || stored.Spec() != canon || CanonicalSpec(spec) != canon {
			t.Fatalf("ParseStoredSpec(%q) = %v, %v; CanonicalSpec %q; ParseSpec's Spec %q", spec, stored, serr, CanonicalSpec(spec), canon)
		}
		again, err := ParseSpec(canon)
		if err != nil || again.Spec() != canon {
			t.Fatalf("ParseSpec(%q).Spec() = %q does not round-trip: %v", spec, canon, err)
		}
		if s.Buckets() < 1 || s.Buckets() > maxBuckets || strings.ContainsAny(canon, " \t") {
			t.Fatalf("%q: %d buckets, spec %q", spec, s.Buckets(), canon)
		}
		// The salter works on an ordinary key (no panic; errors are ErrInvalidKey).
		if _, err := s.AppendPhysical(nil, []byte("key0123456789")); err != nil && !errors.Is(err, ErrInvalidKey) {
			t.Fatalf("%s: %v", canon, err)
		}
	})
}
