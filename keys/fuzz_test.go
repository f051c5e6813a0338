package keys

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"reflect"
	"testing"

	"github.com/google/orderedcode"
)

// Schemas the fuzz targets draw from: every kind, both directions, Raw last.
var fuzzSchemas = []string{
	"a,b:int64:desc,c:uint64",
	"a:desc,b:bytes,c:raw",
	"a:fixed=4,b:fixed=3:pad=0x20:desc,c:int64",
	"a:bytes:desc,b:string:desc,c:uint64:desc",
	"a:int64,b:fixed=2:desc,c:bytes:desc,d",
	"a:uint64:desc,b:int64,c:raw",
}

// gen turns fuzz bytes into values, favouring the bytes and numbers where encodings have edges.
type gen struct{ b []byte }

func (g *gen) byte() byte {
	if len(g.b) == 0 {
		return 0
	}
	c := g.b[0]
	g.b = g.b[1:]
	return c
}

var edgeBytes = []byte{0x00, 0x01, 0xfe, 0xff, 'a', ' '}

func (g *gen) bytes(max int) []byte {
	n := int(g.byte()) % (max + 1)
	out := make([]byte, 0, n)
	for range n {
		c := g.byte()
		if c&0x80 != 0 {
			c = edgeBytes[int(c)%len(edgeBytes)]
		}
		out = append(out, c)
	}
	return out
}

var edgeInts = []uint64{0, 1, 0x7f, 0x80, 0xff, 1 << 63, 1<<63 - 1, 1<<63 + 1, math.MaxUint64, math.MaxUint64 - 1}

func (g *gen) u64() uint64 {
	sel := g.byte()
	if sel < 128 {
		return edgeInts[int(sel)%len(edgeInts)] + uint64(sel>>4)
	}
	var b [8]byte
	for i := range b {
		b[i] = g.byte()
	}
	return binary.BigEndian.Uint64(b[:])
}

func (g *gen) value(f Field) any {
	switch f.Kind {
	case KindString:
		return string(g.bytes(6))
	case KindBytes:
		return g.bytes(6)
	case KindInt64:
		return int64(g.u64())
	case KindUint64:
		return g.u64()
	case KindFixed:
		v := g.bytes(f.Width)
		for i := range v {
			v[i] = max(v[i], f.Pad)
		}
		for len(v) > 0 && v[len(v)-1] == f.Pad {
			v = v[:len(v)-1]
		}
		return string(v)
	default: // KindRaw
		return g.bytes(6)
	}
}

func compareValues(f Field, a, b any) int {
	var c int
	switch f.Kind {
	case KindString, KindFixed:
		c = cmp.Compare(a.(string), b.(string))
	case KindBytes, KindRaw:
		c = bytes.Compare(a.([]byte), b.([]byte))
	case KindInt64:
		c = cmp.Compare(a.(int64), b.(int64))
	case KindUint64:
		c = cmp.Compare(a.(uint64), b.(uint64))
	}
	if f.Desc {
		c = -c
	}
	return c
}

func compareTuples(fields []Field, a, b []any) int {
	for i, f := range fields {
		if c := compareValues(f, a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func inRange(k, start, end []byte) bool {
	return bytes.Compare(k, start) >= 0 && (end == nil || bytes.Compare(k, end) < 0)
}

// FuzzSchema: decode(encode(t)) == t; encodings compare like tuples (incl. descending fields); the
// prefix, PrefixRange, FieldsLen and AppendReversedFields properties.
func FuzzSchema(f *testing.F) {
	f.Add(byte(0), byte(1), []byte("host1\x05ab"), []byte("host12"))
	f.Add(byte(2), byte(0), []byte{3, 'a', 0, 0xff, 4}, []byte{3, 'a', 0})
	f.Add(byte(4), byte(2), []byte{0x90, 1, 2, 3, 4, 5, 6, 7, 8}, []byte{1, 0x80, 0xff})
	f.Fuzz(func(t *testing.T, sel, split byte, d1, d2 []byte) {
		s := mustSchema(t, fuzzSchemas[int(sel)%len(fuzzSchemas)])
		fields := s.Fields()
		n := len(fields)
		g1, g2 := &gen{d1}, &gen{d2}
		a, b := make([]any, n), make([]any, n)
		shared := int(split) % (n + 1) // b repeats a's first fields, to reach deep comparisons
		for i, fl := range fields {
			a[i] = g1.value(fl)
			if i < shared {
				b[i] = a[i]
			} else {
				b[i] = g2.value(fl)
			}
		}
		ka, err := s.Encode(a...)
		if err != nil {
			t.Fatalf("Encode(%#v): %v", a, err)
		}
		kb, err := s.Encode(b...)
		if err != nil {
			t.Fatalf("Encode(%#v): %v", b, err)
		}
		back, err := s.Decode(ka)
		if err != nil || !reflect.DeepEqual(back, a) {
			t.Fatalf("Decode(Encode(%#v)) = %#v, %v", a, back, err)
		}
		if got, want := bytes.Compare(ka, kb), compareTuples(fields, a, b); got != want {
			t.Fatalf("order: Compare(%q, %q) = %d, tuples %#v vs %#v compare %d", ka, kb, got, a, b, want)
		}
		for k := 0; k <= n; k++ {
			start, end, err := s.PrefixRange(a[:k]...)
			if err != nil {
				t.Fatal(err)
			}
			if !inRange(ka, start, end) {
				t.Fatalf("PrefixRange(%d fields) [%q, %q) misses its own key %q", k, start, end, ka)
			}
			want := compareTuples(fields[:k], a[:k], b[:k]) == 0
			if k == n && fields[n-1].Kind == KindRaw {
				want = compareTuples(fields[:n-1], a, b) == 0 && bytes.HasPrefix(b[n-1].([]byte), a[n-1].([]byte))
			}
			if got := inRange(kb, start, end); got != want {
				t.Fatalf("PrefixRange(%#v) contains %#v: %v, want %v", a[:k], b, got, want)
			}
			fl, err := FieldsLen(ka, k)
			if err != nil || (k > 0 && !bytes.Equal(ka[:fl], start)) || (k == 0 && fl != 0) {
				t.Fatalf("FieldsLen(%q, %d) = %d, %v; prefix %q", ka, k, fl, err, start)
			}
			rev, err := AppendReversedFields(nil, ka, k)
			if err != nil || len(rev) != len(ka) {
				t.Fatalf("AppendReversedFields(%q, %d) = %q, %v", ka, k, rev, err)
			}
			if fl2, err := FieldsLen(rev, n); err != nil || fl2 != len(rev) {
				t.Fatalf("reversed key %q does not parse: %v", rev, err)
			}
			if again, _ := AppendReversedFields(nil, rev, k); !bytes.Equal(again, ka) {
				t.Fatalf("AppendReversedFields not an involution: %q -> %q -> %q", ka, rev, again)
			}
		}
		for i, fl := range fields {
			switch fl.Kind {
			case KindString, KindBytes: // the body is exactly what orderedcode.Append writes
				var text string
				if fl.Kind == KindString {
					text = a[i].(string)
				} else {
					text = string(a[i].([]byte))
				}
				want, _ := orderedcode.Append(nil, text)
				if fl.Desc {
					invert(want)
				}
				sp, err := FieldSpan(ka, i)
				if err != nil || !bytes.Equal(ka[sp.Body:sp.End], want) {
					t.Fatalf("field %d body %q, orderedcode writes %q (%v)", i, ka[sp.Body:sp.End], want, err)
				}
			case KindInt64:
				if v, err := Int64At(ka, i); err != nil || v != a[i] {
					t.Fatalf("Int64At(%d) = %d, %v; want %d", i, v, err, a[i])
				}
			case KindUint64:
				if v, err := Uint64At(ka, i); err != nil || v != a[i] {
					t.Fatalf("Uint64At(%d) = %d, %v; want %d", i, v, err, a[i])
				}
			}
		}
	})
}

// FuzzDecode: arbitrary bytes never panic, and a key that decodes re-encodes to itself (one tuple,
// one key).
func FuzzDecode(f *testing.F) {
	f.Add(byte(0), []byte("sab\x00\x01I\x7f\xff\xff\xff\xff\xff\xff\xfeu\x00\x00\x00\x00\x00\x00\x00\x01"))
	f.Add(byte(2), []byte("f\x04ab\x00\x00F\x03\xdf\xdf\xdfi\x80\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(byte(1), []byte("S\xff\xfeb\x00\x01rxyz"))
	f.Fuzz(func(t *testing.T, sel byte, key []byte) {
		s := mustSchema(t, fuzzSchemas[int(sel)%len(fuzzSchemas)])
		if vals, err := s.Decode(key); err == nil {
			if again, err := s.Encode(vals...); err == nil && !bytes.Equal(again, key) {
				t.Fatalf("Decode(%q) = %#v re-encodes to %q", key, vals, again)
			}
		}
		for k := 0; k < 5; k++ {
			n, err := FieldsLen(key, k)
			rev, rerr := AppendReversedFields(nil, key, k)
			if (err == nil) != (rerr == nil) {
				t.Fatalf("FieldsLen and AppendReversedFields disagree on %q, %d: %v / %v", key, k, err, rerr)
			}
			if err == nil {
				if n > len(key) {
					t.Fatalf("FieldsLen %d > %d", n, len(key))
				}
				if again, _ := AppendReversedFields(nil, rev, k); !bytes.Equal(again, key) {
					t.Fatalf("involution broken on %q", key)
				}
			}
			_, _ = FieldSpan(key, k)
			_, _ = Int64At(key, k)
			_, _ = Uint64At(key, k)
		}
	})
}

// FuzzJoined: the Tablestore concatenation codec round-trips and keeps tuple order.
func FuzzJoined(f *testing.F) {
	f.Add(uint32(54), uint32(54), []byte("a100"), []byte("a1001"), []byte("6777"), []byte("6777"))
	f.Fuzz(func(t *testing.T, d1, d2 uint32, s1, s2, c1, c2 []byte) {
		j, err := ParseJoined("sep=0x2c,device:digits=10,seller,card")
		if err != nil {
			t.Fatal(err)
		}
		text := func(b []byte) string { // map onto bytes above ','
			out := make([]byte, len(b))
			for i, c := range b {
				out[i] = ',' + 1 + c%('~'-','+1)
			}
			return string(out)
		}
		a := []any{uint64(d1), text(s1), text(c1)}
		b := []any{uint64(d2), text(s2), text(c2)}
		ka, err := j.Encode(a...)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := j.Encode(b...)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := j.Decode(ka); err != nil || !reflect.DeepEqual(back, a) {
			t.Fatalf("Decode(%q) = %#v, %v", ka, back, err)
		}
		want := cmp.Or(cmp.Compare(d1, d2), cmp.Compare(a[1].(string), b[1].(string)), cmp.Compare(a[2].(string), b[2].(string)))
		if got := bytes.Compare(ka, kb); got != want {
			t.Fatalf("Compare(%q, %q) = %d, want %d", ka, kb, got, want)
		}
		start, end, _ := j.PrefixRange(a[0], a[1])
		if got, want := inRange(kb, start, end), d1 == d2 && a[1] == b[1]; got != want {
			t.Fatalf("PrefixRange(%v) contains %q: %v", a[:2], kb, got)
		}
	})
}
