package tablestore

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/testkit"
)

func mustSchema(t testing.TB, spec string) *keySchema {
	t.Helper()
	cols, err := ParsePrimaryKey(spec)
	if err != nil {
		t.Fatalf("ParsePrimaryKey(%q): %v", spec, err)
	}
	s, err := newKeySchema(cols)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParsePrimaryKey(t *testing.T) {
	tests := []struct {
		spec string
		ok   bool
	}{
		{"pk:BINARY", true},
		{"pk:binary", true},
		{"id:STRING", true},
		{"pk:BINARY:9,OrderNumber:INTEGER", true},
		{"DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER,OrderNumber:INTEGER", true},
		{"a:BINARY:1,b:BINARY,c:BINARY,d:BINARY,e:BINARY", false}, // 5 columns
		{"", false},
		{"pk", false},
		{"pk:INTEGER", false},                // a single key column holds bytes
		{"pk:BINARY:4", false},               // width without other columns
		{"pk:BINARY,n:INTEGER", true},        // variable first column
		{"pk:STRING:4,n:INTEGER", true},      // STRING first column, fixed width
		{"pk:STRING,n:INTEGER", true},        // STRING first column, variable
		{"pk:INTEGER,n:INTEGER", false},      // first of several must be BINARY or STRING
		{"pk:BINARY:-1,n:INTEGER", false},    // negative width
		{"pk:BINARY:1025,n:INTEGER", false},  // width over 1 KB
		{"pk:BINARY:4,n:INTEGER:3", false},   // width on a later column
		{"pk:BINARY:4,pk:INTEGER", false},    // duplicate name
		{"1pk:BINARY", false},                // bad name
		{"pk:BINARY:4,n:DOUBLE", false},      // bad type
		{"pk:BINARY:x,n:INTEGER", false},     // bad width
		{"pk:BINARY:4,n:INTEGER:1:2", false}, // too many fields
		{"p-k:BINARY", false},                // bad character
		{"pk:BINARY:4, n:INTEGER", true},     // spaces around columns
		{strings.Repeat("a", 256) + ":BINARY", false},
	}
	for _, tt := range tests {
		cols, err := ParsePrimaryKey(tt.spec)
		if (err == nil) != tt.ok {
			t.Errorf("ParsePrimaryKey(%q) = %v, %v; want ok=%v", tt.spec, cols, err, tt.ok)
			continue
		}
		if err != nil && !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("ParsePrimaryKey(%q): %v does not wrap ErrInvalidArgument", tt.spec, err)
		}
		if err == nil {
			again, err := ParsePrimaryKey(FormatPrimaryKey(cols...))
			if err != nil || !reflect.DeepEqual(again, cols) {
				t.Errorf("round trip of %q: %v, %v", tt.spec, again, err)
			}
		}
	}
}

func TestKeyTailRoundTrip(t *testing.T) {
	cols, _ := ParsePrimaryKey("DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER,Blob:BINARY")
	first := []byte("\x03000054")
	tests := []struct {
		seller string
		card   int64
		blob   []byte
	}{
		{"a100", 6777, []byte{}},
		{"", math.MinInt64, []byte{0, 0, 1, 2, 0xFF}},
		{"a\x00b", math.MaxInt64, []byte{0x00, 0x01}},
		{"中文", -1, []byte{0x00, 0x02, 0x00}},
	}
	for _, tt := range tests {
		tail, err := AppendKeyTail(nil, tt.seller, tt.card, tt.blob)
		if err != nil {
			t.Fatal(err)
		}
		key := append(append([]byte(nil), first...), tail...)
		got, err := DecodeKey(cols, key)
		if err != nil {
			t.Fatalf("DecodeKey(%q): %v", key, err)
		}
		want := []any{first, tt.seller, tt.card, tt.blob}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("DecodeKey = %#v, want %#v", got, want)
		}
	}
}

// TestTailIsKeysCodec: tails are package keys' encoding, so a keys.Schema builds whole logical keys.
func TestTailIsKeysCodec(t *testing.T) {
	ks := testkit.Schema(t, "device:fixed=6,seller,card:int64,blob:bytes")
	cols, _ := ParsePrimaryKey("DeviceID:BINARY:9,SellerID:STRING,CardID:INTEGER,Blob:BINARY")
	for _, tt := range []struct {
		seller string
		card   int64
		blob   []byte
	}{
		{"a100", 6777, []byte{}},
		{"a\x00\xffb", math.MinInt64, []byte{0x00, 0xFF, 0x01}},
	} {
		if !utf8.ValidString(tt.seller) {
			tt.seller = strings.ToValidUTF8(tt.seller, "?")
		}
		logical, err := ks.Encode("000054", tt.seller, tt.card, tt.blob)
		if err != nil {
			t.Fatal(err)
		}
		tail, err := AppendKeyTail(nil, tt.seller, tt.card, tt.blob)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasSuffix(logical, tail) || len(logical)-len(tail) != 8 {
			t.Fatalf("keys %q does not end with tail %q after an 8-byte first field", logical, tail)
		}
		physical := append([]byte{0x0b}, logical...) // a 1-byte salt completes the 9-byte first column
		got, err := DecodeKey(cols, physical)
		if err != nil {
			t.Fatal(err)
		}
		if got[1] != tt.seller || got[2] != tt.card || !bytes.Equal(got[3].([]byte), tt.blob) {
			t.Errorf("DecodeKey = %#v", got)
		}
	}
}

func TestKeyValuesRejects(t *testing.T) {
	single := mustSchema(t, "pk:BINARY")
	str := mustSchema(t, "pk:STRING")
	multi := mustSchema(t, "pk:BINARY:3,n:INTEGER")
	strTail := mustSchema(t, "pk:BINARY:1,s:STRING")
	good, _ := AppendKeyTail([]byte("abc"), int64(5))
	tests := []struct {
		name string
		s    *keySchema
		key  []byte
	}{
		{"empty", single, nil},
		{"over 1 KB", single, bytes.Repeat([]byte{1}, maxPKValueLen+1)},
		{"string not utf8", str, []byte{0xff}},
		{"shorter than width", multi, []byte("ab")},
		{"truncated tail", multi, good[:len(good)-1]},
		{"trailing bytes", multi, append(append([]byte(nil), good...), 0)},
		{"no tail", multi, []byte("abc")},
		{"string tail not utf8", strTail, []byte{'x', 's', 0xc3, 0, 1}},
		{"wrong tag", multi, append([]byte("abcs"), good[4:]...)},
		{"fixed string first not utf8", mustSchema(t, "pk:STRING:2,n:INTEGER"), append([]byte{0xc3, 'a'}, good[3:]...)},
		{"variable first unterminated", mustSchema(t, "pk:BINARY,n:INTEGER"), []byte("abc")},
		{"variable first bad escape", mustSchema(t, "pk:BINARY,n:INTEGER"), append([]byte("ab\x00\x05"), good[3:]...)},
		{"tail value over 1 KB", strTail, func() []byte {
			k, _ := AppendKeyTail([]byte("x"), strings.Repeat("a", maxPKValueLen+1))
			return k
		}()},
	}
	for _, tt := range tests {
		if _, err := tt.s.values(tt.key); !errors.Is(err, backends.ErrInvalidKey) {
			t.Errorf("%s: values(%q) = %v, want ErrInvalidKey", tt.name, tt.key, err)
		}
	}
	if _, err := single.values(bytes.Repeat([]byte{1}, maxPKValueLen)); err != nil {
		t.Errorf("1 KB key refused: %v", err)
	}
	if _, err := multi.values(good); err != nil {
		t.Errorf("good multi key refused: %v", err)
	}
}

// keyGen draws valid physical keys of a schema, biased towards shared prefixes and edge bytes.
type keyGen struct {
	r *rand.Rand
	s *keySchema
}

func (g keyGen) bytes(n int) []byte {
	b := make([]byte, g.r.IntN(n+1))
	for i := range b {
		switch g.r.IntN(4) {
		case 0:
			b[i] = 0x00
		case 1:
			b[i] = 0xFF
		default:
			b[i] = byte('a' + g.r.IntN(3))
		}
	}
	return b
}

func (g keyGen) key() []byte {
	if len(g.s.cols) == 1 {
		for {
			if b := g.bytes(4); len(b) > 0 {
				if g.s.cols[0].Type == KeyString {
					b = bytes.ToValidUTF8(b, []byte("z"))
				}
				return b
			}
		}
	}
	var key []byte
	if w := g.s.cols[0].Width; w > 0 {
		key = make([]byte, w)
		for i := range key {
			key[i] = byte('a' + g.r.IntN(2))
		}
	} else {
		first := g.bytes(3)
		if g.s.cols[0].Type == KeyString {
			first = bytes.ToValidUTF8(first, []byte("z"))
		}
		key = AppendKeyHead(nil, first)
	}
	var vals []any
	for _, c := range g.s.cols[1:] {
		switch c.Type {
		case KeyInteger:
			vals = append(vals, []int64{math.MinInt64, -1, 0, 1, 255, 256, math.MaxInt64}[g.r.IntN(7)])
		case KeyString:
			vals = append(vals, strings.ToValidUTF8(string(g.bytes(3)), "z"))
		default:
			vals = append(vals, g.bytes(3))
		}
	}
	key, err := AppendKeyTail(key, vals...)
	if err != nil {
		panic(err)
	}
	return key
}

// bound draws an arbitrary byte string near the keys: a prefix, an extension, a tweak or noise.
func (g keyGen) bound() []byte {
	k := g.key()
	switch g.r.IntN(5) {
	case 0:
		return k[:g.r.IntN(len(k)+1)]
	case 1:
		return append(k, g.bytes(2)...)
	case 2:
		if len(k) > 0 {
			k[g.r.IntN(len(k))] = byte(g.r.IntN(256))
		}
		return k
	case 3:
		return append(k, 0x00)
	}
	return g.bytes(8)
}

var boundSchemas = []string{
	"pk:BINARY",
	"pk:STRING",
	"pk:BINARY:2,n:INTEGER",
	"pk:BINARY:1,s:STRING,n:INTEGER",
	"pk:BINARY:2,x:BINARY,y:BINARY",
	"pk:BINARY:1,n:INTEGER,s:STRING,x:BINARY",
	"pk:STRING:2,n:INTEGER",
	"pk:BINARY,n:INTEGER",
	"pk:STRING,s:STRING,x:BINARY",
}

// TestKeyOrder: for the keys a schema accepts, byte order is Tablestore's tuple order.
func TestKeyOrder(t *testing.T) {
	for _, spec := range boundSchemas {
		s := mustSchema(t, spec)
		g := keyGen{rand.New(rand.NewPCG(1, 2)), s}
		for range 20000 {
			a, b := g.key(), g.key()
			ta, err := s.values(a)
			if err != nil {
				t.Fatalf("%s: generated key %q refused: %v", spec, a, err)
			}
			tb, _ := s.values(b)
			if got, want := compareTuples(ta, tb), bytes.Compare(a, b); got != want {
				t.Fatalf("%s: compare(%q, %q): tuples %d, bytes %d", spec, a, b, got, want)
			}
		}
	}
}

// TestBoundsSafe: a mapped bound never leaves out a key of the byte range.
func TestBoundsSafe(t *testing.T) {
	for _, spec := range boundSchemas {
		s := mustSchema(t, spec)
		g := keyGen{rand.New(rand.NewPCG(3, 4)), s}
		for range 50000 {
			b, k := g.bound(), g.key()
			checkBounds(t, s, b, k)
		}
	}
}

func checkBounds(t testing.TB, s *keySchema, b, k []byte) {
	t.Helper()
	tk, err := s.values(k)
	if err != nil {
		return
	}
	spec := FormatPrimaryKey(s.cols...)
	if bytes.Compare(k, b) >= 0 {
		if lo := s.lowerBound(b, false); compareTuples(tk, lo) < 0 {
			t.Fatalf("%s: key %q >= %q but below lowerBound %v", spec, k, b, lo)
		}
		if lo := s.lowerBound(b, true); compareTuples(tk, lo) <= 0 {
			t.Fatalf("%s: key %q >= %q but not above strict lowerBound %v", spec, k, b, lo)
		}
	} else if len(b) > 0 {
		if hi := s.upperBound(b); compareTuples(tk, hi) >= 0 {
			t.Fatalf("%s: key %q < %q but not below upperBound %v", spec, k, b, hi)
		}
	}
}

func FuzzBounds(f *testing.F) {
	f.Add(4, []byte("abbx\x00\x01"), []byte("abbx\xff"))
	f.Add(2, []byte("ab"), []byte("abi\x80\x00\x00\x00\x00\x00\x00\x05"))
	f.Add(3, []byte("as\x00"), []byte("a"))
	f.Fuzz(func(t *testing.T, which int, b, k []byte) {
		if which < 0 {
			which = -which
		}
		s := mustSchema(t, boundSchemas[which%len(boundSchemas)])
		checkBounds(t, s, b, k)
	})
}

// TestBoundsExact: bounds that are keys, or prefixes of them, map without slack.
func TestBoundsExact(t *testing.T) {
	s := mustSchema(t, "pk:BINARY:2,n:INTEGER")
	key, _ := AppendKeyTail([]byte("ab"), int64(7))
	next, _ := AppendKeyTail([]byte("ab"), int64(8))
	tests := []struct {
		name string
		got  []pkVal
		want []pkVal
	}{
		{"lower of a key", s.lowerBound(key, false), []pkVal{{v: []byte("ab")}, {v: int64(7)}}},
		{"strict lower of a key", s.lowerBound(key, true), []pkVal{{v: []byte("ab")}, {v: int64(6)}}},
		{"upper of a key", s.upperBound(key), []pkVal{{v: []byte("ab")}, {v: int64(7)}}},
		{"upper of key+0x00 (inclusive end)", s.upperBound(append(key, 0)), []pkVal{{v: []byte("ab")}, {v: int64(8)}}},
		{"lower of key+0x00 (resume after)", s.lowerBound(append(key, 0), false), []pkVal{{v: []byte("ab")}, {v: int64(7)}}},
		{"lower of next", s.lowerBound(next, false), []pkVal{{v: []byte("ab")}, {v: int64(8)}}},
		{"prefix shorter than width", s.lowerBound([]byte("a"), false), []pkVal{{v: []byte("a")}, infMin}},
		{"first column only", s.upperBound([]byte("ab")), []pkVal{{v: []byte("ab")}, infMin}},
		{"unbounded", s.upperBound(nil), []pkVal{infMax, infMax}},
	}
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	one := mustSchema(t, "pk:BINARY")
	if got := one.lowerBound([]byte("ab\x00"), true); !reflect.DeepEqual(got, []pkVal{{v: []byte("ab")}}) {
		t.Errorf("strict lower of ab\\x00 = %v, want ab", got)
	}
	if got := one.lowerBound([]byte("\x00"), true); !reflect.DeepEqual(got, []pkVal{infMin}) {
		t.Errorf("strict lower of \\x00 = %v, want INF_MIN", got)
	}
}
