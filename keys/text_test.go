package keys

import (
	"bytes"
	"encoding/csv"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestFormatParse(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		values []any
		text   string
	}{
		{"id", []any{"O0001"}, "O0001"},
		{"host,ts:int64:desc", []any{"web-1", int64(-42)}, "web-1,-42"},
		{"a:uint64,b:bytes,c:raw", []any{uint64(18446744073709551615), []byte("x\x00y"), []byte("")}, "18446744073709551615,x\x00y,"},
		{"a,b", []any{"a,b", `say "hi"`}, `"a,b","say ""hi"""`},
		{"a,b", []any{" lead", "line\r\nbreak"}, "\" lead\",\"line\r\nbreak\""},
		{"a", []any{""}, `""`},
		{"a,b", []any{"", ""}, ","},
		{"a:fixed=4:pad=0x20,b", []any{"ab", `\.`}, `ab,"\."`},
	} {
		s := mustSchema(t, tc.spec)
		key, err := s.Encode(tc.values...)
		if err != nil {
			t.Fatalf("%s: Encode: %v", tc.spec, err)
		}
		got, err := s.Format(key)
		if err != nil || got != tc.text {
			t.Errorf("%s: Format = %q, %v; want %q", tc.spec, got, err, tc.text)
			continue
		}
		back, err := s.Parse(got)
		if err != nil || !bytes.Equal(back, key) {
			t.Errorf("%s: Parse(%q) = %q, %v; want %q", tc.spec, got, back, err, key)
		}
	}
}

func TestFormatMalformed(t *testing.T) {
	s := mustSchema(t, "id,n:int64")
	other, _ := mustSchema(t, "id").Encode("O0001")
	for _, key := range [][]byte{[]byte("O0001"), other, nil} {
		if got, err := s.Format(key); !errors.Is(err, ErrMalformedKey) {
			t.Errorf("Format(%q) = %q, %v; want ErrMalformedKey", key, got, err)
		}
	}
}

func TestParseText(t *testing.T) {
	s := mustSchema(t, "a,b:int64,c")
	for _, tc := range []struct {
		text string
		want []any // nil: an error
	}{
		{"x", []any{"x"}},
		{"x,7", []any{"x", int64(7)}},
		{`"x,y",7,"q""q"`, []any{"x,y", int64(7), `q"q`}},
		{`"x"`, []any{"x"}},
		{",7,", []any{"", int64(7), ""}},
		{"", nil},
		{`x"y`, nil},
		{`"x`, nil},
		{`"x"y,1`, nil},
		{"x,seven", nil},
		{"x,1,y,z", nil},
	} {
		got, err := s.ParseText(tc.text)
		if tc.want == nil {
			if err == nil || !errors.Is(err, ErrInvalidValue) {
				t.Errorf("ParseText(%q) = %#v, %v; want ErrInvalidValue", tc.text, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseText(%q) = %#v, %v; want %#v", tc.text, got, err, tc.want)
		}
	}
	if _, err := s.Parse("x,7"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("Parse of 2 values for 3 fields: %v, want ErrInvalidValue", err)
	}
}

// FuzzFormat: Parse inverts Format; a CSV reader reads Format's values back (but for CR LF, which it
// turns into LF); ParseText never panics, and what it accepts prints back to the same key.
func FuzzFormat(f *testing.F) {
	f.Add(byte(0), []byte("sab\x00\x01I\x7f\xff\xff\xff\xff\xff\xff\xfeu\x00\x00\x00\x00\x00\x00\x00\x01"), `"a,b",-1,2`)
	f.Add(byte(1), []byte("S\xff\xfeb\x00\x01rxyz"), `" x""y",,z`)
	f.Fuzz(func(t *testing.T, sel byte, key []byte, text string) {
		s := mustSchema(t, fuzzSchemas[int(sel)%len(fuzzSchemas)])
		vals, derr := s.Decode(key)
		printed, err := s.Format(key)
		if (err == nil) != (derr == nil) {
			t.Fatalf("Format(%q) err %v, Decode err %v", key, err, derr)
		}
		if err == nil {
			if again, eerr := s.Encode(vals...); eerr == nil && bytes.Equal(again, key) {
				back, err := s.Parse(printed)
				if err != nil || !bytes.Equal(back, key) {
					t.Fatalf("Parse(Format(%q) = %q) = %q, %v", key, printed, back, err)
				}
			}
			if !strings.Contains(printed, "\r\n") {
				rec, err := csv.NewReader(strings.NewReader(printed)).Read()
				if err != nil || len(rec) != s.Len() {
					t.Fatalf("csv reads Format(%q) = %q as %q, %v", key, printed, rec, err)
				}
			}
		}
		k, err := s.Parse(text)
		if err != nil {
			return
		}
		printed, err = s.Format(k)
		if err != nil {
			t.Fatalf("Format(Parse(%q)): %v", text, err)
		}
		if again, err := s.Parse(printed); err != nil || !bytes.Equal(again, k) {
			t.Fatalf("Parse(%q) = %q; its print %q parses to %q, %v", text, k, printed, again, err)
		}
	})
}
