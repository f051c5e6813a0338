package salting

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/brine-kv/brine/keys"
)

func mustParse(t testing.TB, spec string) Salter {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatalf("ParseSpec(%q): %v", spec, err)
	}
	return s
}

func physical(t testing.TB, s Salter, k []byte) []byte {
	t.Helper()
	p, err := s.AppendPhysical(nil, k)
	if err != nil {
		t.Fatalf("%s: AppendPhysical(%q): %v", s.Spec(), k, err)
	}
	return p
}

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in, canon string
		buckets   int
	}{
		{"hash:16", "hash:16", 16},
		{"hash:1", "hash:1", 1},
		{"hash:65536", "hash:65536", 65536},
		{"hash:16:prefix=4", "hash:16:prefix=4", 16},
		{"hash:16,prefix=4", "hash:16:prefix=4", 16},
		{"hash:16:fields=2", "hash:16:fields=2", 16},
		{"hash:16:sep=0x2c", "hash:16:sep=0x2c", 16},
		{"hash:16:sep=_", "hash:16:sep=_", 16},
		{"hash:16:sep=0x5f", "hash:16:sep=_", 16},
		{"hash:16:digits=2", "hash:16:digits=2", 16},
		{"hash:16:sep=0x00:digits=3", "hash:16:digits=3:sep=0x00", 16},
		{"hash:100,digits=2", "hash:100:digits=2", 100},
		{"mod:10:width=8,digits=1", "mod:10:offset=0,width=8,digits=1", 10},
		{"mod:16:digits=2:field=k0", "mod:16:field=k0,digits=2", 16},
		{"md5hex:4", "md5hex:4", 65536},
		{"md5hex:1:prefix=6", "md5hex:1:prefix=6", 16},
		{"md5hex:2:fields=1", "md5hex:2:fields=1", 256},
		{"mod:16:offset=0,width=8", "mod:16:offset=0,width=8", 16},
		{"mod:16:width=8", "mod:16:offset=0,width=8", 16},
		{"mod:16:width=4:offset=2", "mod:16:offset=2,width=4", 16},
		{"mod:1000:field=k2", "mod:1000:field=k2", 1000},
		{"reverse", "reverse", 1},
		{"reverse:prefix=8", "reverse:prefix=8", 1},
		{"reverse:fields=1", "reverse:fields=1", 1},
		{"reverse:sep=0x00", "reverse:sep=0x00", 1},
		{"phoenix:8", "phoenix:8", 8},
		{"phoenix:256", "phoenix:256", 256},
		{"opentsdb:20", "opentsdb:20:width=1", 20},
		{"opentsdb:20:width=2", "opentsdb:20:width=2", 20},
		{"opentsdb:20:metric=4,width=1", "opentsdb:20:width=1,metric=4", 20},
		{"opentsdb:20:width=1,metric=3", "opentsdb:20:width=1", 20},
		{"none", "none", 1},
	}
	for _, tc := range tests {
		s, err := ParseSpec(tc.in)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tc.in, err)
			continue
		}
		if s.Spec() != tc.canon || s.Buckets() != tc.buckets {
			t.Errorf("ParseSpec(%q): Spec %q Buckets %d; want %q %d", tc.in, s.Spec(), s.Buckets(), tc.canon, tc.buckets)
		}
		if again, err := ParseSpec(s.Spec()); err != nil || again.Spec() != s.Spec() {
			t.Errorf("round trip of %q: %v", s.Spec(), err)
		}
	}
	bad := []string{"", "hash", "hash:", "hash:0", "hash:65537", "hash:016", "hash:+16", "hash:-1", "hash::16",
		"hash:16:", "hash:16,", "hash:16:prefix=0", "hash:16:prefix=4:fields=1", "hash:16:prefix=4:prefix=4",
		"hash:16:bogus=1", "hash:16:prefix", "hash:16:sep=", "hash:16:sep=ab", "hash:16:sep=,", "HASH:16",
		"md5hex:0", "md5hex:5", "mod:16", "mod:16:offset=0", "mod:16:width=9", "mod:16:width=0",
		"mod:16:field=0", "mod:16:field=k0,width=2", "mod:16:offset=01,width=2", "reverse:16", "reverse:",
		"phoenix:257", "phoenix:8:prefix=1", "opentsdb:257:width=1", "opentsdb:20:width=5", "opentsdb:20:metric=0",
		"none:", "none:1", "hash:16:digits=1", "hash:101:digits=2", "hash:16:digits=0", "hash:16:digits=6",
		"md5hex:2:digits=3", "mod:100:width=1,digits=1", "hash:16:digits=02", "hash 16", "hash:16 ", "hash:1e3", "hash:99999999999999999999"}
	for _, in := range bad {
		if s, err := ParseSpec(in); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("ParseSpec(%q) = %v, %v; want ErrInvalidSpec", in, s, err)
		}
	}
}

func TestPrefixWidth(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		width int
	}{{"hash:256", 1}, {"hash:257", 2}, {"mod:256:width=1", 1}, {"mod:300:width=1", 2}, {"md5hex:3", 3}, {"phoenix:256", 1}, {"opentsdb:4:width=3", 3}} {
		s := mustParse(t, tc.spec)
		p := physical(t, s, []byte("\x00\x00\x00\x01xyzw"))
		if len(p) != 8+tc.width {
			t.Errorf("%s: prefix of %d bytes, want %d", tc.spec, len(p)-8, tc.width)
		}
	}
}

var roundTripSpecs = []string{"hash:16", "hash:1", "hash:300", "hash:16:digits=2", "hash:300:digits=3:prefix=2",
	"mod:7:offset=1,width=2,digits=1", "mod:300:field=k1,digits=4", "hash:8:prefix=3", "hash:16:fields=1", "hash:4:sep=0x2c",
	"md5hex:1", "md5hex:4", "md5hex:2:prefix=3", "md5hex:2:fields=2", "md5hex:2:sep=_",
	"mod:7:offset=1,width=2", "mod:300:offset=0,width=8", "mod:5:field=k1",
	"reverse", "reverse:prefix=3", "reverse:fields=1", "reverse:sep=0x2c",
	"phoenix:8", "phoenix:256", "opentsdb:20:width=1", "opentsdb:300:width=2,metric=2", "none"}

// testKeys returns raw keys and keys encoded with "a,b:int64,c:bytes".
func testKeys(t testing.TB) [][]byte {
	out := [][]byte{[]byte("a"), []byte("abc"), []byte("user42,order9"), []byte("\xff\xff\xff\xff\xff\xff\xff\xff\xff"),
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x00"), []byte("0123456789")}
	sch, _ := keys.ParseSchema("a,b:int64,c:bytes")
	for i, v := range []any{"user1", "user12", "", "x\x00\xffy"} {
		k, err := sch.Encode(v, int64(i*1000-1), []byte{byte(i)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	for _, spec := range roundTripSpecs {
		s := mustParse(t, spec)
		for _, k := range testKeys(t) {
			p, err := s.AppendPhysical([]byte("dst:"), k)
			if err != nil {
				if !errors.Is(err, ErrInvalidKey) {
					t.Errorf("%s: AppendPhysical(%q): %v", spec, k, err)
				}
				if _, berr := s.Bucket(k); berr == nil {
					t.Errorf("%s: Bucket accepts %q that AppendPhysical rejects", spec, k)
				}
				continue
			}
			if !bytes.HasPrefix(p, []byte("dst:")) {
				t.Fatalf("%s: dst not kept", spec)
			}
			l, err := s.AppendLogical(nil, p[4:])
			if err != nil || !bytes.Equal(l, k) {
				t.Errorf("%s: AppendLogical(AppendPhysical(%q)) = %q, %v", spec, k, l, err)
			}
		}
		for _, k := range [][]byte{nil, {}} {
			if _, err := s.AppendPhysical(nil, k); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("%s: empty key: %v", spec, err)
			}
			if _, err := s.Bucket(k); !errors.Is(err, ErrInvalidKey) {
				t.Errorf("%s: Bucket(empty): %v", spec, err)
			}
		}
	}
}

func TestAppendLogicalRejects(t *testing.T) {
	tests := []struct {
		spec     string
		physical []byte
	}{
		{"hash:16", nil},
		{"hash:16", []byte{3}},                              // prefix only
		{"hash:16", []byte{200, 'a'}},                       // bucket out of range
		{"hash:16", append([]byte{0x1a80b1b3%16 + 1}, 'a')}, // wrong bucket for "a"
		{"hash:300", []byte{0}},                             // shorter than the 2-byte prefix
		{"md5hex:4", []byte("EE8F200001")},                  // upper-case hex
		{"md5hex:4", []byte("ee8g200001")},
		{"md5hex:4", []byte("ee8e200001")}, // hex, but not md5 of the rest
		{"mod:16:offset=0,width=8", []byte{0, 1, 2}},
		{"reverse:fields=1", []byte("not keys")},
		{"none", []byte{}},
		{"reverse", nil},
	}
	for _, tc := range tests {
		s := mustParse(t, tc.spec)
		if l, err := s.AppendLogical([]byte("x"), tc.physical); !errors.Is(err, ErrInvalidPhysicalKey) || string(l) != "x" {
			t.Errorf("%s: AppendLogical(%q) = %q, %v; want ErrInvalidPhysicalKey", tc.spec, tc.physical, l, err)
		}
	}
}

func bucketsOf(rs []BucketRange) []int {
	var out []int
	for _, r := range rs {
		out = append(out, r.Bucket)
	}
	return out
}

func contains(r BucketRange, p []byte) bool {
	return bytes.Compare(p, r.Start) >= 0 && (len(r.End) == 0 || bytes.Compare(p, r.End) < 0)
}

func TestBucketRangesPruning(t *testing.T) {
	sch, _ := keys.ParseSchema("user,order:uint64")
	u1, u1end, _ := sch.PrefixRange("u1")
	k1, _ := sch.Encode("u1", uint64(5))
	ts := func(v uint64, tail string) []byte { return append(binary.BigEndian.AppendUint64(nil, v), tail...) }
	tests := []struct {
		spec       string
		start, end []byte
		buckets    int // number of bucket ranges expected
	}{
		{"hash:16", nil, nil, 16},
		{"hash:16", []byte("a"), []byte("b"), 16},
		{"hash:16", []byte("a"), []byte("a\x00"), 1}, // a single key
		{"hash:16", []byte("b"), []byte("a"), 0},     // empty range
		{"hash:16", []byte("a"), []byte("a"), 0},
		{"hash:16:prefix=4", []byte("user"), []byte("usez"), 16},  // end past the prefix
		{"hash:16:prefix=4", []byte("user"), []byte("uses"), 1},   // end = PrefixEnd("user")
		{"hash:16:prefix=4", []byte("user1"), []byte("user9"), 1}, // within
		{"hash:16:prefix=4", []byte("use"), []byte("user"), 16},   // start shorter than L
		{"hash:16:prefix=4", []byte("user"), nil, 16},             // unbounded end
		{"hash:16:prefix=2", []byte("\xff\xff\x01"), nil, 1},      // ... unless nothing follows the prefix
		{"hash:16:prefix=2", []byte("\xff\xff"), []byte("\xff\xff\x05"), 1},
		{"hash:16:fields=1", u1, u1end, 1},
		{"hash:16:fields=1", k1, u1end, 1},
		{"hash:16:fields=2", u1, u1end, 16},
		{"hash:16:fields=1", []byte("r"), []byte("r001"), 16}, // a Raw first field grows with the key
		{"hash:16:sep=0x2c", []byte("u1,"), []byte("u1-"), 1},
		{"hash:16:sep=0x2c", []byte("u1,a"), []byte("u1,b"), 1},
		{"hash:16:sep=0x2c", []byte("u1"), []byte("u1-"), 16},
		{"md5hex:2:prefix=6", []byte("user42"), []byte("user43"), 1},
		{"md5hex:2", []byte("user42"), []byte("user43"), 256},
		{"mod:16:offset=0,width=8", ts(100, ""), ts(103, ""), 4},
		{"mod:16:offset=0,width=8", ts(100, "x"), ts(100, "y"), 1},
		{"mod:16:offset=0,width=8", ts(14, ""), ts(17, "a"), 4}, // wraps: 14 15 0 1
		{"mod:16:offset=0,width=8", ts(100, ""), ts(115, ""), 16},
		{"mod:16:offset=0,width=8", ts(100, ""), ts(114, ""), 15},
		{"mod:16:offset=0,width=8", ts(100, ""), nil, 16},
		{"mod:16:offset=1,width=1", []byte("ab"), []byte("bb"), 16}, // differ before the integer
		{"phoenix:8", []byte("a"), []byte("b"), 8},
		{"opentsdb:20", []byte("abcdefgh"), []byte("abcdefgh\x00"), 1},
		{"opentsdb:20", []byte("a"), []byte("a\x00"), 20}, // no such key: no pruning
		{"none", []byte("a"), []byte("b"), 1},
		{"none", nil, nil, 1},
	}
	for _, tc := range tests {
		s := mustParse(t, tc.spec)
		rs, err := s.BucketRanges(tc.start, tc.end)
		if err != nil {
			t.Errorf("%s [%q, %q): %v", tc.spec, tc.start, tc.end, err)
			continue
		}
		if len(rs) != tc.buckets {
			t.Errorf("%s [%q, %q): %d ranges %v, want %d", tc.spec, tc.start, tc.end, len(rs), bucketsOf(rs), tc.buckets)
		}
		if !slices.IsSorted(bucketsOf(rs)) {
			t.Errorf("%s: ranges not in bucket order", tc.spec)
		}
	}
	// The pruned bucket is the key's, and the key's physical form lies in its range.
	s := mustParse(t, "hash:16:fields=1")
	rs, _ := s.BucketRanges(u1, u1end)
	b, _ := s.Bucket(k1)
	if rs[0].Bucket != b || !contains(rs[0], physical(t, s, k1)) {
		t.Errorf("pruned range %+v misses %q (bucket %d)", rs[0], k1, b)
	}
	// mod residues: 14, 15, 0, 1 in bucket order.
	m := mustParse(t, "mod:16:offset=0,width=8")
	rs, _ = m.BucketRanges(ts(14, ""), ts(17, "a"))
	if got := bucketsOf(rs); !slices.Equal(got, []int{0, 1, 14, 15}) {
		t.Errorf("mod residues %v", got)
	}
	// mod on an Int64 field, descending or not, and across zero.
	sch2, _ := keys.ParseSchema("h,ts:int64:desc")
	lo, _ := sch2.Encode("h", int64(1))
	hi, _ := sch2.Encode("h", int64(-2)) // descending: -2 sorts after 1
	rs, err := mustParse(t, "mod:5:field=k1").BucketRanges(lo, hi)
	if err != nil || !slices.Equal(bucketsOf(rs), []int{0, 1, 3, 4}) { // -2..1 -> 3 4 0 1
		t.Errorf("mod field residues %v, %v", bucketsOf(rs), err)
	}
}

// Full-table ranges: one per bucket, back to back, covering every physical key of the salter.
func TestFullRanges(t *testing.T) {
	for _, spec := range []string{"hash:4", "hash:300", "md5hex:1", "opentsdb:3:width=2", "phoenix:2"} {
		s := mustParse(t, spec)
		rs, err := s.BucketRanges(nil, nil)
		if err != nil || len(rs) != s.Buckets() {
			t.Fatalf("%s: %d ranges, %v", spec, len(rs), err)
		}
		for i, r := range rs {
			if r.Bucket != i || len(r.Start) == 0 {
				t.Errorf("%s: range %d = %+v", spec, i, r)
			}
			if i > 0 && bytes.Compare(rs[i-1].End, r.Start) > 0 {
				t.Errorf("%s: ranges %d and %d overlap", spec, i-1, i)
			}
		}
	}
	rs, _ := mustParse(t, "hash:256").BucketRanges(nil, nil)
	if rs[255].End != nil || !bytes.Equal(rs[254].End, []byte{255}) || !bytes.Equal(rs[0].Start, []byte{0}) {
		t.Errorf("hash:256 ends: %+v %+v", rs[254], rs[255])
	}
	rs, _ = mustParse(t, "md5hex:2").BucketRanges(nil, []byte("k"))
	if string(rs[255].Start) != "ff" || string(rs[255].End) != "ffk" {
		t.Errorf("md5hex:2 last range %+v", rs[255])
	}
	rs, _ = mustParse(t, "md5hex:2").BucketRanges(nil, nil)
	if string(rs[10].Start) != "0a" || string(rs[10].End) != "0b" || string(rs[15].End) != "0g" {
		t.Errorf("md5hex:2 ranges %+v %+v", rs[10], rs[15])
	}
}

func TestReverse(t *testing.T) {
	s := mustParse(t, "reverse")
	if p := physical(t, s, []byte("user123")); string(p) != "321resu" {
		t.Errorf("reverse: %q", p)
	}
	pre := mustParse(t, "reverse:prefix=6")
	if p := physical(t, pre, []byte("000123order9")); string(p) != "321000order9" {
		t.Errorf("reverse:prefix=6: %q", p)
	}
	if p := physical(t, pre, []byte("123")); string(p) != "321" {
		t.Errorf("reverse:prefix=6 short key: %q", p)
	}
	sep := mustParse(t, "reverse:sep=0x2c")
	if p := physical(t, sep, []byte("user12,o1,x")); string(p) != "21resu,o1,x" {
		t.Errorf("reverse:sep: %q", p)
	}
	sch, _ := keys.ParseSchema("user,order:uint64")
	k, _ := sch.Encode("user12", uint64(3))
	f := mustParse(t, "reverse:fields=1")
	p := physical(t, f, k)
	if v, err := sch.Decode(p); err != nil || v[0] != "21resu" || v[1] != uint64(3) {
		t.Errorf("reverse:fields=1 decodes to %v, %v", v, err)
	}
	if _, err := f.AppendPhysical(nil, []byte("plain")); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("reverse:fields=1 on a plain key: %v", err)
	}

	// Ranges: the full table and ranges across leading values cannot be served in order.
	for _, tc := range []struct {
		s          Salter
		start, end []byte
	}{{s, nil, nil}, {s, []byte("a"), []byte("b")}, {pre, []byte("000123"), []byte("000124a")}, {pre, []byte("00012"), []byte("00013")},
		{sep, []byte("u1"), []byte("u2")}, {f, nil, nil}} {
		if _, err := tc.s.BucketRanges(tc.start, tc.end); !errors.Is(err, ErrUnorderedRange) {
			t.Errorf("%s [%q, %q): %v, want ErrUnorderedRange", tc.s.Spec(), tc.start, tc.end, err)
		}
	}
	// Within one leading value: one range, holding exactly the transformed keys of the range.
	check := func(s Salter, start, end []byte, in, out [][]byte) {
		t.Helper()
		rs, err := s.BucketRanges(start, end)
		if err != nil || len(rs) != 1 {
			t.Fatalf("%s [%q, %q): %v %v", s.Spec(), start, end, rs, err)
		}
		for _, k := range in {
			if !contains(rs[0], physical(t, s, k)) {
				t.Errorf("%s [%q, %q): physical range %+v misses %q", s.Spec(), start, end, rs[0], k)
			}
		}
		for _, k := range out {
			if contains(rs[0], physical(t, s, k)) {
				t.Errorf("%s [%q, %q): physical range %+v holds %q", s.Spec(), start, end, rs[0], k)
			}
		}
	}
	check(pre, []byte("000123"), []byte("000124"), [][]byte{[]byte("000123"), []byte("000123\xff")}, [][]byte{[]byte("000124"), []byte("000122z"), []byte("00012")})
	check(pre, []byte("000123b"), []byte("000123d"), [][]byte{[]byte("000123b"), []byte("000123c")}, [][]byte{[]byte("000123a"), []byte("000123d")})
	check(sep, []byte("u1,"), []byte("u1-"), [][]byte{[]byte("u1,"), []byte("u1,zz")}, [][]byte{[]byte("u1"), []byte("u12,a")})
	check(s, []byte("abc"), []byte("abc\x00"), [][]byte{[]byte("abc")}, [][]byte{[]byte("abc\x00"), []byte("ab")})
	u12s, u12e, _ := sch.PrefixRange("user12")
	k2, _ := sch.Encode("user12", uint64(1<<40))
	other, _ := sch.Encode("user1", uint64(3))
	check(f, u12s, u12e, [][]byte{k, k2}, [][]byte{other})
	if pre.Buckets() != 1 || pre.SplitKeys(8) != nil {
		t.Errorf("reverse buckets/splits")
	}
}

func TestSplitKeys(t *testing.T) {
	one := func(bs ...int) [][]byte {
		var out [][]byte
		for _, b := range bs {
			out = append(out, []byte{byte(b)})
		}
		return out
	}
	tests := []struct {
		spec    string
		regions int
		want    [][]byte
	}{
		{"hash:4", 0, one(1, 2, 3)},
		{"hash:4", -1, one(1, 2, 3)},
		{"hash:4", 1, nil},
		{"hash:4", 2, one(2)},
		{"hash:4", 99, one(1, 2, 3)},
		{"hash:16", 3, one(5, 10)},
		{"hash:10", 4, one(2, 5, 7)},
		{"phoenix:3", 0, one(1, 2)},
		{"md5hex:1", 4, [][]byte{[]byte("4"), []byte("8"), []byte("c")}},
		{"md5hex:2", 2, [][]byte{[]byte("80")}},
		{"hash:512", 2, [][]byte{{1, 0}}},
		{"opentsdb:20:width=2", 2, [][]byte{{0, 10}}},
		{"none", 8, nil},
	}
	for _, tc := range tests {
		got := mustParse(t, tc.spec).SplitKeys(tc.regions)
		if !slices.EqualFunc(got, tc.want, bytes.Equal) {
			t.Errorf("%s SplitKeys(%d) = %q, want %q", tc.spec, tc.regions, got, tc.want)
		}
	}
	// Every split key starts a bucket.
	s := mustParse(t, "hash:300")
	rs, _ := s.BucketRanges(nil, nil)
	for _, k := range s.SplitKeys(7) {
		if !slices.ContainsFunc(rs, func(r BucketRange) bool { return bytes.Equal(r.Start, k) }) {
			t.Errorf("split key %x is not a bucket start", k)
		}
	}
}

// Keys must spread evenly: big-endian millisecond timestamps, and keys whose bytes differ only in
// their high nibbles, which plain FNV-1a % 16 would put in one bucket (hence the finalizer).
func TestHashSpread(t *testing.T) {
	nibbles := map[int]int{}
	plain := map[uint32]int{}
	s16 := mustParse(t, "hash:16")
	for i := range 16 {
		for j := range 16 {
			k := []byte{byte(i << 4), byte(j << 4)}
			b, _ := s16.Bucket(k)
			nibbles[b]++
			plain[fnv1a32(k)%16]++
		}
	}
	if len(plain) != 1 || len(nibbles) != 16 {
		t.Errorf("high-nibble keys: %d buckets with the finalizer (want 16), %d without (expected 1)", len(nibbles), len(plain))
	}
	for _, n := range []int{16, 64, 1000} {
		s := mustParse(t, fmt.Sprintf("hash:%d", n))
		counts := make([]int, n)
		const keys = 64000
		for i := range keys {
			k := binary.BigEndian.AppendUint64(nil, uint64(1700000000000+1000*i))
			b, _ := s.Bucket(k)
			counts[b]++
		}
		mean := keys / n
		tol := int(6 * math.Sqrt(float64(mean))) // 6 sigma of a binomial count
		for b, c := range counts {
			if c < mean-tol || c > mean+tol {
				t.Errorf("hash:%d bucket %d holds %d keys, mean %d", n, b, c, mean)
			}
		}
	}
}

func TestErrorsAreSentinels(t *testing.T) {
	sch, _ := keys.ParseSchema("a")
	k, _ := sch.Encode("x")
	_, err := mustParse(t, "hash:4:fields=2").AppendPhysical(nil, k)
	if !errors.Is(err, ErrInvalidKey) || !errors.Is(err, keys.ErrMalformedKey) {
		t.Errorf("fields=2 on a 1-field key: %v", err)
	}
}

// TestFieldNumbering: mod's field=kF counts fields from 0; the earlier brines' field=K, K counted from
// 1, is refused from a user with the spec to write instead, and read from storage with its meaning.
func TestFieldNumbering(t *testing.T) {
	for _, tc := range []struct {
		spec      string
		canon     string // "" when ParseSpec refuses it
		userErr   string // ParseSpec's whole error, when it refuses
		storedErr bool   // ParseStoredSpec refuses it too
	}{
		{spec: "mod:8:field=k1", canon: "mod:8:field=k1"},
		{spec: "mod:8:field=k0", canon: "mod:8:field=k0"},
		{spec: "mod:8:field=k254", canon: "mod:8:field=k254"},
		{spec: "mod:16:digits=2:field=k0", canon: "mod:16:field=k0,digits=2"},
		{spec: "mod:8:field=2", userErr: `salting: invalid spec: "mod:8:field=2": field=2 counts fields from 1, brine's old spelling; write mod:8:field=k1: fields count from 0 (k0 is the first)`},
		{spec: "mod:16:digits=2:field=1", userErr: `salting: invalid spec: "mod:16:digits=2:field=1": field=1 counts fields from 1, brine's old spelling; write mod:16:field=k0,digits=2: fields count from 0 (k0 is the first)`},
		{spec: "mod:8:field=255", userErr: `salting: invalid spec: "mod:8:field=255": field=255 counts fields from 1, brine's old spelling; write mod:8:field=k254: fields count from 0 (k0 is the first)`},
		{spec: "mod:8:field=0", storedErr: true, userErr: `salting: invalid spec: "mod:8:field=0": field=0: want field=kF, F the key field counted from 0 (k0 to k254)`},
		{spec: "mod:8:field=k255", storedErr: true, userErr: `salting: invalid spec: "mod:8:field=k255": field=k255: want field=kF, F the key field counted from 0 (k0 to k254)`},
		{spec: "mod:8:field=k", storedErr: true, userErr: `salting: invalid spec: "mod:8:field=k": field=k: want field=kF, F the key field counted from 0 (k0 to k254)`},
		{spec: "mod:8:field=k01", storedErr: true, userErr: `salting: invalid spec: "mod:8:field=k01": field=k01: want field=kF, F the key field counted from 0 (k0 to k254)`},
		{spec: "mod:8:field=k1,width=2", storedErr: true, userErr: `salting: invalid spec: "mod:8:field=k1,width=2": mod: field= excludes offset and width`},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			s, err := ParseSpec(tc.spec)
			switch {
			case tc.canon != "" && (err != nil || s.Spec() != tc.canon):
				t.Fatalf("ParseSpec = %v, %v; want %s", s, err, tc.canon)
			case tc.canon == "" && (err == nil || err.Error() != tc.userErr || !errors.Is(err, ErrInvalidSpec)):
				t.Fatalf("ParseSpec = %v, %v; want the error\n%s", s, err, tc.userErr)
			}
			stored, err := ParseStoredSpec(tc.spec)
			if tc.storedErr {
				if !errors.Is(err, ErrInvalidSpec) {
					t.Fatalf("ParseStoredSpec = %v, %v; want ErrInvalidSpec", stored, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseStoredSpec: %v", err)
			}
			if s == nil { // the old spelling: the user's error names the spec that is this salter
				if s, err = ParseSpec(stored.Spec()); err != nil {
					t.Fatalf("ParseSpec(%q), the spec the error gives: %v", stored.Spec(), err)
				}
			}
			if stored.Spec() != s.Spec() || CanonicalSpec(tc.spec) != s.Spec() {
				t.Fatalf("ParseStoredSpec(%q).Spec() = %q, CanonicalSpec %q; want %q", tc.spec, stored.Spec(), CanonicalSpec(tc.spec), s.Spec())
			}
		})
	}
}

// TestStoredFieldSpecKeepsBuckets: a table created by an earlier brine with mod:8:field=2 salted its
// keys by field 2 counted from 1, the int64 ts of [host][ts]; read from storage, the spec places
// every key where that brine did (the expected buckets are ts % 8, worked out by hand).
func TestStoredFieldSpecKeepsBuckets(t *testing.T) {
	sch, err := keys.ParseSchema("host,ts:int64")
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := ParseStoredSpec("mod:8:field=2")
	if err != nil {
		t.Fatal(err)
	}
	now := mustParse(t, "mod:8:field=k1")
	for _, tc := range []struct {
		host   string
		ts     int64
		bucket int
	}{{"web1", 1700000000123, 3}, {"web2", 1700000000128, 0}, {"db", -1, 7}, {"", 15, 7}} {
		k, err := sch.Encode(tc.host, tc.ts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := legacy.Bucket(k)
		if err != nil || b != tc.bucket {
			t.Errorf("stored mod:8:field=2: bucket of (%q, %d) = %d, %v; want %d", tc.host, tc.ts, b, err, tc.bucket)
		}
		if p1, p2 := physical(t, legacy, k), physical(t, now, k); !bytes.Equal(p1, p2) || p1[0] != byte(tc.bucket) {
			t.Errorf("(%q, %d): physical %x (stored spelling), %x (mod:8:field=k1); want bucket %d first", tc.host, tc.ts, p1, p2, tc.bucket)
		}
	}
	// The same for ranges: a one-value range of ts prunes to its bucket under both spellings.
	lo, _ := sch.Encode("web1", int64(1700000000123))
	hi, _ := sch.Encode("web1", int64(1700000000124))
	r1, err1 := legacy.BucketRanges(lo, hi)
	r2, err2 := now.BucketRanges(lo, hi)
	if err1 != nil || err2 != nil || len(r1) != 2 || fmt.Sprint(r1) != fmt.Sprint(r2) {
		t.Errorf("BucketRanges: %v, %v and %v, %v; want the same two buckets", r1, err1, r2, err2)
	}
}

// TestResolveStoredSpelling: a table whose meta holds the earlier spelling opens with a salter given in
// the current one (one salting), and refuses one that reads another field.
func TestResolveStoredSpelling(t *testing.T) {
	meta := map[string]string{MetaKey: "mod:8:field=2"}
	for _, tc := range []struct {
		given string // "": none given
		want  string // the resolved spec, or "" for ErrSpecMismatch
	}{{"", "mod:8:field=k1"}, {"mod:8:field=k1", "mod:8:field=k1"}, {"mod:8:field=k0", ""}, {"mod:8:field=k2", ""}} {
		var given Salter
		if tc.given != "" {
			given = mustParse(t, tc.given)
		}
		s, err := Resolve(meta, given, false)
		switch {
		case tc.want == "" && !errors.Is(err, ErrSpecMismatch):
			t.Errorf("given %q: %v, %v; want ErrSpecMismatch", tc.given, s, err)
		case tc.want != "" && (err != nil || s.Spec() != tc.want):
			t.Errorf("given %q: %v, %v; want %s", tc.given, s, err, tc.want)
		}
	}
	if meta[MetaKey] != "mod:8:field=2" {
		t.Errorf("Resolve changed the meta: %v", meta)
	}
}
