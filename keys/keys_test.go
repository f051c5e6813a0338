package keys

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/google/orderedcode"
)

func mustSchema(t testing.TB, spec string) *Schema {
	t.Helper()
	s, err := ParseSchema(spec)
	if err != nil {
		t.Fatalf("ParseSchema(%q): %v", spec, err)
	}
	return s
}

func mustEncode(t testing.TB, c Codec, values ...any) []byte {
	t.Helper()
	k, err := c.Encode(values...)
	if err != nil {
		t.Fatalf("%s: Encode(%v): %v", c, values, err)
	}
	return k
}

// The wire format is persisted in every table: pin it byte for byte.
func TestWireFormat(t *testing.T) {
	tests := []struct {
		spec   string
		values []any
		want   string
	}{
		{"a", []any{"h1"}, "sh1\x00\x01"},
		{"a", []any{"a\x00b\xffc"}, "sa\x00\xffb\xff\x00c\x00\x01"},
		{"a:desc", []any{"h1"}, "S\x97\xce\xff\xfe"}, // ^'h' = 0x97, ^'1' = 0xce, ^00 01 = ff fe
		{"a:bytes", []any{[]byte{}}, "b\x00\x01"},
		{"a:int64", []any{int64(1)}, "i\x80\x00\x00\x00\x00\x00\x00\x01"},
		{"a:int64", []any{int64(-1)}, "i\x7f\xff\xff\xff\xff\xff\xff\xff"},
		{"a:int64:desc", []any{int64(1)}, "I\x7f\xff\xff\xff\xff\xff\xff\xfe"},
		{"a:uint64", []any{uint64(258)}, "u\x00\x00\x00\x00\x00\x00\x01\x02"},
		{"a:uint64:desc", []any{uint64(0)}, "U\xff\xff\xff\xff\xff\xff\xff\xff"},
		{"a:fixed=4", []any{"ab"}, "f\x04ab\x00\x00"},
		{"a:fixed=4:pad=0x20", []any{"ab"}, "f\x04ab  "},
		{"a:fixed=3:desc", []any{"a"}, "F\x03\x9e\xff\xff"},
		{"a,b:raw", []any{"x", []byte("tail\x00")}, "sx\x00\x01rtail\x00"},
		{"host,event,ts:int64:desc", []any{"web1", "cpu", int64(1700000000000)},
			"sweb1\x00\x01scpu\x00\x01I\x7f\xff\xfe\x74\x30\x1a\x97\xff"},
	}
	for _, tc := range tests {
		s := mustSchema(t, tc.spec)
		got := mustEncode(t, s, tc.values...)
		if string(got) != tc.want {
			t.Errorf("%s %v: got %q, want %q", tc.spec, tc.values, got, tc.want)
		}
		back, err := s.Decode(got)
		if err != nil || !reflect.DeepEqual(back, tc.values) {
			t.Errorf("%s: Decode(%q) = %#v, %v; want %#v", tc.spec, got, back, err, tc.values)
		}
	}
}

// String bodies are orderedcode's format: orderedcode itself decodes them.
func TestStringBodyIsOrderedcode(t *testing.T) {
	s := mustSchema(t, "a,b:desc")
	k := mustEncode(t, s, "x\x00\xffy", "q\x00")
	var a, b string
	rest, err := orderedcode.Parse(string(k[1:]), &a)
	if err != nil || a != "x\x00\xffy" {
		t.Fatalf("orderedcode.Parse: %q %v", a, err)
	}
	if rest[0] != 'S' {
		t.Fatalf("second tag %q", rest[0])
	}
	if _, err := orderedcode.Parse(rest[1:], orderedcode.Decr(&b)); err != nil || b != "q\x00" {
		t.Fatalf("orderedcode.Parse(Decr): %q %v", b, err)
	}
}

func TestParseSchema(t *testing.T) {
	good := []struct{ in, canon string }{
		{"hostname,event,ts:int64:desc", "hostname,event,ts:int64:desc"},
		{"hostname,event,ts:desc", "hostname,event,ts:desc"},
		{"a:string:asc", "a"},
		{"a:desc:bytes", "a:bytes:desc"},
		{"c1:fixed=20:pad=0x20,c2", "c1:fixed=20:pad=0x20,c2"},
		{"c1:pad=_:fixed=5", "c1:fixed=5:pad=_"},
		{"c1:fixed=5:pad=0x00", "c1:fixed=5"},
		{"u:uint64,r:raw", "u:uint64,r:raw"},
	}
	for _, tc := range good {
		s, err := ParseSchema(tc.in)
		if err != nil {
			t.Errorf("ParseSchema(%q): %v", tc.in, err)
			continue
		}
		if s.String() != tc.canon {
			t.Errorf("ParseSchema(%q).String() = %q, want %q", tc.in, s.String(), tc.canon)
		}
		again, err := ParseSchema(s.String())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Errorf("round trip of %q: %v", s.String(), err)
		}
	}
	bad := []string{"", "a,", ",a", "a,a", "1a", "a b", "a:float", "a:raw,b", "a:raw:desc", "a:fixed=0",
		"a:fixed=256", "a:fixed=05", "a:pad=0x20", "a:fixed=3:pad=", "a:fixed=3:pad=ab", "a:int64:uint64",
		"a:desc:asc", "a:fixed=2:fixed=3", "a:fixed=2:pad=1:pad=2", "a:"}
	for _, in := range bad {
		if _, err := ParseSchema(in); !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("ParseSchema(%q): err %v, want ErrInvalidSchema", in, err)
		}
	}
}

func TestNewSchemaConstructors(t *testing.T) {
	s, err := NewSchema(String("host"), Bytes("id"), Descending(Int64("ts")), Uint64("seq"),
		FixedString("code", 4, ' '), Raw("rest"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "host,id:bytes,ts:int64:desc,seq:uint64,code:fixed=4:pad=0x20,rest:raw"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if s.Len() != 6 || s.Fields()[2].Desc != true {
		t.Fatalf("Fields: %+v", s.Fields())
	}
	if _, err := NewSchema(); !errors.Is(err, ErrInvalidSchema) {
		t.Fatalf("empty schema: %v", err)
	}
	if _, err := NewSchema(Descending(Raw("r"))); !errors.Is(err, ErrInvalidSchema) {
		t.Fatalf("desc raw: %v", err)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		spec   string
		values []any
	}{
		{"a", []any{}},
		{"a", []any{"x", "y"}},
		{"a", []any{1}},
		{"a:int64", []any{"1"}},
		{"a:int64", []any{uint64(math.MaxInt64) + 1}},
		{"a:uint64", []any{-1}},
		{"a:uint64", []any{1.5}},
		{"a:fixed=2", []any{"abc"}},
		{"a:fixed=4:pad=0x20", []any{"ab "}},  // ends with the pad byte
		{"a:fixed=4:pad=0x20", []any{"a\tb"}}, // byte below the pad byte
		{"a:fixed=4:pad=x", []any{"host"}},    // the guide's rpad('x'): 'h' < 'x' would misorder
	}
	for _, tc := range tests {
		s := mustSchema(t, tc.spec)
		if k, err := s.Encode(tc.values...); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%s Encode(%#v) = %q, %v; want ErrInvalidValue", tc.spec, tc.values, k, err)
		}
	}
	// A failed Append leaves dst as it was.
	s := mustSchema(t, "a,b:int64")
	dst := []byte("keep")
	out, err := s.Append(dst, "x", "not an int")
	if err == nil || string(out) != "keep" {
		t.Fatalf("Append on error = %q, %v", out, err)
	}
}

func TestIntegerConversions(t *testing.T) {
	s := mustSchema(t, "a:int64,b:uint64")
	for _, v := range []any{int(5), int8(5), int16(5), int32(5), int64(5), uint(5), uint8(5), uint16(5), uint32(5), uint64(5)} {
		k, err := s.Encode(v, v)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		got, _ := s.Decode(k)
		if got[0] != int64(5) || got[1] != uint64(5) {
			t.Fatalf("%T: decoded %#v", v, got)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	s := mustSchema(t, "a,b:int64")
	good := mustEncode(t, s, "x", int64(3))
	tests := map[string][]byte{
		"empty":          {},
		"truncated int":  good[:len(good)-1],
		"trailing bytes": append(bytes.Clone(good), 'z'),
		"wrong tag":      append([]byte("b"), good[1:]...),
		"wrong dir":      append([]byte("S"), good[1:]...),
		"unterminated":   []byte("sabc"),
		"bad escape":     []byte("sa\x00\x02\x00\x01"),
		"not a tag":      []byte("zz"),
	}
	for name, k := range tests {
		if v, err := s.Decode(k); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("%s: Decode(%q) = %v, %v; want ErrMalformedKey", name, k, v, err)
		}
	}
	f := mustSchema(t, "a:fixed=3")
	if _, err := f.Decode([]byte("f\x02ab")); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("fixed width mismatch: %v", err)
	}
}

// Ordering the guides care about, case by case.
func TestOrdering(t *testing.T) {
	type tc struct {
		spec string
		asc  [][]any // tuples in strictly increasing order
	}
	tests := []tc{
		{"host,event", [][]any{{"host1", "a"}, {"host1", "b"}, {"host12", "a"}, {"host2", ""}}},
		{"host,ts:int64:desc", [][]any{{"h", int64(300)}, {"h", int64(200)}, {"h", int64(-5)}, {"h", int64(math.MinInt64)}, {"h0", int64(math.MaxInt64)}}},
		{"n:int64", [][]any{{int64(math.MinInt64)}, {int64(-256)}, {int64(-1)}, {int64(0)}, {int64(1)}, {int64(255)}, {int64(math.MaxInt64)}}},
		{"n:uint64", [][]any{{uint64(0)}, {uint64(1)}, {uint64(256)}, {uint64(math.MaxUint64)}}},
		{"s:desc,t", [][]any{{"b", "x"}, {"ab", "x"}, {"a\x01", ""}, {"a\x00", "z"}, {"a", ""}, {"a", "a"}, {"", "zz"}}},
		{"s:bytes", [][]any{{[]byte{}}, {[]byte{0}}, {[]byte{0, 0}}, {[]byte{0, 1}}, {[]byte{1}}, {[]byte{0xff}}, {[]byte{0xff, 0}}}},
		{"c:fixed=6,o:uint64", [][]any{{"", uint64(9)}, {"host1", uint64(1)}, {"host1", uint64(2)}, {"host12", uint64(0)}, {"host2", uint64(0)}}},
		{"c:fixed=4:pad=0x20:desc", [][]any{{"b"}, {"ab"}, {"a!"}, {"a b"}, {"a"}, {""}}},
		{"k,r:raw", [][]any{{"a", []byte{}}, {"a", []byte{0}}, {"a", []byte("z")}, {"b", []byte{}}}},
	}
	for _, tc := range tests {
		s := mustSchema(t, tc.spec)
		var prev []byte
		for i, tup := range tc.asc {
			k := mustEncode(t, s, tup...)
			if i > 0 && bytes.Compare(prev, k) >= 0 {
				t.Errorf("%s: %v (%q) does not sort after %v (%q)", tc.spec, tup, k, tc.asc[i-1], prev)
			}
			prev = k
		}
	}
}

func TestPrefixRange(t *testing.T) {
	s := mustSchema(t, "host,event,ts:int64:desc")
	in := func(start, end, k []byte) bool {
		return bytes.Compare(k, start) >= 0 && (end == nil || bytes.Compare(k, end) < 0)
	}
	start, end, err := s.PrefixRange("host1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		want bool
	}{{"host1", true}, {"host12", false}, {"host", false}, {"host2", false}, {"host1\x00", false}} {
		k := mustEncode(t, s, tc.host, "cpu", int64(7))
		if got := in(start, end, k); got != tc.want {
			t.Errorf("PrefixRange(host1) contains host %q: %v, want %v", tc.host, got, tc.want)
		}
	}
	// Full tuple: the key alone.
	k := mustEncode(t, s, "h", "e", int64(1))
	start, end, _ = s.PrefixRange("h", "e", int64(1))
	if !bytes.Equal(start, k) || !bytes.Equal(end, append(bytes.Clone(k), 0)) {
		t.Errorf("full PrefixRange = [%q, %q)", start, end)
	}
	if start, end, err := s.PrefixRange(); start != nil || end != nil || err != nil {
		t.Errorf("empty PrefixRange = %q %q %v", start, end, err)
	}
	if _, _, err := s.PrefixRange("a", "b", int64(1), "d"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("too many values: %v", err)
	}
	// A descending leading field whose encoding ends in ff bytes still gets a finite, correct end.
	d := mustSchema(t, "n:uint64:desc,x")
	start, end, _ = d.PrefixRange(uint64(0)) // body ff*8
	k0 := mustEncode(t, d, uint64(0), "zz")
	k1 := mustEncode(t, d, uint64(1), "")
	if !in(start, end, k0) || in(start, end, k1) {
		t.Errorf("desc PrefixRange [%q, %q) wrong", start, end)
	}
}

func TestSpansAndFieldsLen(t *testing.T) {
	s := mustSchema(t, "a,b:int64:desc,c:fixed=3,d:uint64,e:raw")
	k := mustEncode(t, s, "x\x00", int64(-7), "ab", uint64(9), []byte("rest"))
	wantEnds := []int{0, 6, 15, 20, 29, 34}
	for i, want := range wantEnds {
		n, err := FieldsLen(k, i)
		if err != nil || n != want {
			t.Errorf("FieldsLen(k, %d) = %d, %v; want %d", i, n, err, want)
		}
	}
	if _, err := FieldsLen(k, 6); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("FieldsLen past the end: %v", err)
	}
	sp, err := FieldSpan(k, 2)
	if err != nil || sp != (Span{Kind: KindFixed, Start: 15, Body: 17, End: 20}) {
		t.Errorf("FieldSpan(k, 2) = %+v, %v", sp, err)
	}
	if v, err := Int64At(k, 1); err != nil || v != -7 {
		t.Errorf("Int64At = %d, %v", v, err)
	}
	if v, err := Uint64At(k, 3); err != nil || v != 9 {
		t.Errorf("Uint64At = %d, %v", v, err)
	}
	if _, err := Int64At(k, 3); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("Int64At on uint64: %v", err)
	}
	if _, err := Uint64At(k, 0); !errors.Is(err, ErrMalformedKey) {
		t.Errorf("Uint64At on string: %v", err)
	}
}

func TestAppendReversedFields(t *testing.T) {
	s := mustSchema(t, "u,o:uint64,r:raw")
	k := mustEncode(t, s, "ab\x00c\xff", uint64(0x0102), []byte("xy"))
	r1, err := AppendReversedFields([]byte("pre"), k, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Decode(r1[3:])
	if err != nil || !reflect.DeepEqual(got, []any{"\xffc\x00ba", uint64(0x0102), []byte("xy")}) {
		t.Fatalf("reversed 1 field decodes to %#v, %v", got, err)
	}
	r3, _ := AppendReversedFields(nil, k, 3)
	got, _ = s.Decode(r3)
	if !reflect.DeepEqual(got, []any{"\xffc\x00ba", uint64(0x0201000000000000), []byte("yx")}) {
		t.Fatalf("reversed 3 fields decodes to %#v", got)
	}
	back, _ := AppendReversedFields(nil, r3, 3)
	if !bytes.Equal(back, k) {
		t.Fatalf("not its own inverse: %q vs %q", back, k)
	}
	if _, err := AppendReversedFields(nil, k, 4); !errors.Is(err, ErrMalformedKey) {
		t.Fatalf("too many fields: %v", err)
	}
}

func TestParseValues(t *testing.T) {
	s := mustSchema(t, "h,b:bytes,t:int64,u:uint64")
	v, err := s.ParseValues("web", "x", "-5", "7")
	if err != nil || !reflect.DeepEqual(v, []any{"web", []byte("x"), int64(-5), uint64(7)}) {
		t.Fatalf("ParseValues = %#v, %v", v, err)
	}
	if _, err := s.ParseValues("a", "b", "x"); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("bad int: %v", err)
	}
	if _, err := s.ParseValues("a", "b", "1", "-1"); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("negative uint: %v", err)
	}
}

// The Tablestore guide's concatenated partition key, byte for byte, and its row order.
func TestJoinedTablestoreGuide(t *testing.T) {
	j, err := ParseJoined("sep=0x2c,device:digits=6,seller,card")
	if err != nil {
		t.Fatal(err)
	}
	if j.String() != "sep=0x2c,device:digits=6,seller,card" || j.Sep() != ',' || len(j.Fields()) != 3 {
		t.Fatalf("String() = %q", j.String())
	}
	rows := [][]any{ // the guide's final table, in its (sorted) order
		{16, "a100", "66661"},
		{54, "a100", "6777"},
		{54, "a1001", "6777"},
		{167, "a101", "283408"},
	}
	want := []string{"000016,a100,66661", "000054,a100,6777", "000054,a1001,6777", "000167,a101,283408"}
	var encoded [][]byte
	for i, r := range rows {
		k := mustEncode(t, j, r...)
		if string(k) != want[i] {
			t.Errorf("row %d: %q, want %q", i, k, want[i])
		}
		encoded = append(encoded, k)
		back, err := j.Decode(k)
		if err != nil || !reflect.DeepEqual(back, []any{uint64(r[0].(int)), r[1], r[2]}) {
			t.Errorf("Decode(%q) = %#v, %v", k, back, err)
		}
	}
	if !slices.IsSortedFunc(encoded, bytes.Compare) {
		t.Errorf("joined keys out of order: %q", encoded)
	}
	// The prefix of (54, "a100") must not reach "a1001".
	start, end, err := j.PrefixRange(54, "a100")
	if err != nil || string(start) != "000054,a100," {
		t.Fatalf("PrefixRange = %q, %v", start, err)
	}
	if bytes.Compare(encoded[2], end) < 0 && bytes.Compare(encoded[2], start) >= 0 {
		t.Errorf("a1001 inside the a100 prefix range")
	}
	// The guide's failing variant: ':' does not sort below the seller's digits.
	colon, err := NewJoined(':', JoinedField{Name: "device"}, JoinedField{Name: "seller"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := colon.Encode("000054", "a1001"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("':' separator with digits in values: %v", err)
	}
	if _, err := NewJoined(':', JoinedField{Name: "d", Digits: 6}); !errors.Is(err, ErrInvalidSchema) {
		t.Errorf("':' separator with a digits field: %v", err)
	}
}

func TestJoinedErrors(t *testing.T) {
	for _, spec := range []string{"", "device", "sep=,a", "sep=0x2c", "sep=0x2c,a:digits=0", "sep=0x2c,a:digits=21",
		"sep=0x2c,a:num", "sep=0x2c,a,a", "sep=0x2c,9a"} {
		if _, err := ParseJoined(spec); !errors.Is(err, ErrInvalidSchema) {
			t.Errorf("ParseJoined(%q): %v", spec, err)
		}
	}
	j, _ := ParseJoined("sep=0x2c,d:digits=3,s")
	for _, vals := range [][]any{{1000, "x"}, {-1, "x"}, {1, "a,b"}, {1}, {"1", "x"}} {
		if _, err := j.Encode(vals...); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("Encode(%v): %v", vals, err)
		}
	}
	for _, k := range []string{"", "001", "01,x", "0a1,x", "001,x,y", "001,\x01"} {
		if _, err := j.Decode([]byte(k)); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("Decode(%q): %v", k, err)
		}
	}
	v, err := j.ParseValues("12", "x")
	if err != nil || !reflect.DeepEqual(v, []any{uint64(12), "x"}) {
		t.Errorf("ParseValues = %v, %v", v, err)
	}
	if full, end, _ := j.PrefixRange(1, "x"); string(full) != "001,x" || string(end) != "001,x\x00" {
		t.Errorf("full PrefixRange = %q %q", full, end)
	}
}

func TestByteLiterals(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want byte
	}{{"a", 'a'}, {"_", '_'}, {"0x2c", ','}, {"0X3A", ':'}, {"0x00", 0}, {"0xff", 0xff}} {
		got, err := ParseByte(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseByte(%q) = %q, %v", tc.in, got, err)
		}
		if back, _ := ParseByte(FormatByte(got)); back != got {
			t.Errorf("FormatByte(%q) = %q does not round-trip", got, FormatByte(got))
		}
	}
	for _, in := range []string{"", ",", ":", "=", " ", "ab", "0x", "0x1", "0xzz", "\xff"} {
		if _, err := ParseByte(in); err == nil {
			t.Errorf("ParseByte(%q) accepted", in)
		}
	}
}
