package reliability_test

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/brine-kv/brine/keys"
)

// FuzzParseSchema: keys.ParseSchema never panics on any spec (the CLI's --key flag is user input);
// it fails with ErrInvalidSchema or returns a schema whose String() parses back to itself. On a valid
// schema, ParseValues of arbitrary text never panics and fails with ErrInvalidValue, and values it
// accepts that encode also decode back to themselves. (salting.ParseSpec has its own target,
// salting.FuzzParseSpec.)
func FuzzParseSchema(f *testing.F) {
	for _, s := range []string{
		"hostname,event,ts:int64:desc", "userid:fixed=12:pad=0x20,orderid:uint64", "a,b:bytes:desc,c:raw",
		"a:fixed=3:pad=z:desc", "a,a", "a:raw,b", ",", "a::int64", "a:fixed=0", "a:pad=0x", "a:int64:asc:desc",
		"\xff", strings.Repeat("f,", 300) + "g",
	} {
		f.Add(s, "host1\x00ab", "-42")
	}
	f.Fuzz(func(t *testing.T, spec, v1, v2 string) {
		s, err := keys.ParseSchema(spec)
		if err != nil {
			if !errors.Is(err, keys.ErrInvalidSchema) {
				t.Fatalf("ParseSchema(%q): %v is not ErrInvalidSchema", spec, err)
			}
			return
		}
		canon := s.String()
		again, err := keys.ParseSchema(canon)
		if err != nil || again.String() != canon || !reflect.DeepEqual(again.Fields(), s.Fields()) {
			t.Fatalf("ParseSchema(%q).String() = %q does not parse back: %v", spec, canon, err)
		}
		text := make([]string, s.Len())
		for i := range text {
			text[i] = []string{v1, v2}[i%2]
		}
		vals, err := s.ParseValues(text...)
		if err != nil {
			if !errors.Is(err, keys.ErrInvalidValue) {
				t.Fatalf("%s: ParseValues(%q): %v is not ErrInvalidValue", canon, text, err)
			}
			return
		}
		k, err := s.Encode(vals...)
		if err != nil {
			if !errors.Is(err, keys.ErrInvalidValue) {
				t.Fatalf("%s: Encode(%q): %v is not ErrInvalidValue", canon, vals, err)
			}
			return
		}
		back, err := s.Decode(k)
		if err != nil {
			t.Fatalf("%s: Decode(Encode(%q)) = %v", canon, vals, err)
		}
		k2, err := s.Encode(back...)
		if err != nil || !bytes.Equal(k, k2) {
			t.Fatalf("%s: %q encodes to %q, decodes to %q, which encodes to %q (%v)", canon, vals, k, back, k2, err)
		}
	})
}
