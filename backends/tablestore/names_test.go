package tablestore

import (
	"errors"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
)

func TestColumnName(t *testing.T) {
	tests := []struct {
		family, qualifier string
		want              string // "" means refused
	}{
		{"", "v", "v"},
		{"", "_v", "_v"},
		{"d", "v", "d__v"},
		{"d", "", "d__"},
		{"d", "_v", "d___v"},
		{"d", "1", "d__1"},
		{"_d", "v", "_d__v"},
		{"D9", "v_w", "D9__v_w"},
		{"", "", ""},                        // empty name
		{"", "1v", ""},                      // starts with a digit
		{"1d", "v", ""},                     // starts with a digit
		{"d_", "v", ""},                     // family ends with '_'
		{"_", "v", ""},                      // family ends with '_'
		{"d", "a__b", ""},                   // qualifier holds the separator
		{"a__b", "v", ""},                   // family holds the separator
		{"", "a__b", ""},                    // would read back as family a
		{"d", "v.w", ""},                    // bad character
		{"d", "ü", ""},                      // not ASCII
		{"d", strings.Repeat("q", 253), ""}, // 256 bytes
		{"d", strings.Repeat("q", 252), "d__" + strings.Repeat("q", 252)},
	}
	for _, tt := range tests {
		got, err := ColumnName(tt.family, tt.qualifier)
		if tt.want == "" {
			if err == nil || !errors.Is(err, backends.ErrInvalidArgument) {
				t.Errorf("ColumnName(%q, %q) = %q, %v; want ErrInvalidArgument", tt.family, tt.qualifier, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ColumnName(%q, %q) = %q, %v; want %q", tt.family, tt.qualifier, got, err, tt.want)
			continue
		}
		if f, q := SplitColumnName(got); f != tt.family || q != tt.qualifier {
			t.Errorf("SplitColumnName(%q) = %q, %q; want %q, %q", got, f, q, tt.family, tt.qualifier)
		}
	}
}

// FuzzColumnName: every name ColumnName produces splits back to its parts, and is a valid name.
func FuzzColumnName(f *testing.F) {
	f.Add("d", "v")
	f.Add("", "x")
	f.Add("a", "_b")
	f.Fuzz(func(t *testing.T, family, qualifier string) {
		name, err := ColumnName(family, qualifier)
		if err != nil {
			return
		}
		if !validName(name) {
			t.Fatalf("ColumnName(%q, %q) = %q, not a valid name", family, qualifier, name)
		}
		if f, q := SplitColumnName(name); f != family || q != qualifier {
			t.Fatalf("ColumnName(%q, %q) = %q splits into %q, %q", family, qualifier, name, f, q)
		}
	})
}

func TestCheckTableName(t *testing.T) {
	for _, ok := range []string{"t", "_t", "T_1", strings.Repeat("a", 255)} {
		if err := checkTableName(ok); err != nil {
			t.Errorf("checkTableName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "1t", "t-1", "t.x", "表", strings.Repeat("a", 256)} {
		if err := checkTableName(bad); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("checkTableName(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
}

func TestSelector(t *testing.T) {
	s := mustSchema(t, "pk:BINARY")
	tests := []struct {
		name      string
		cols      []backends.Column
		wantNames []string // columns_to_get; nil = everything
		match     map[string]bool
		err       bool
	}{
		{name: "all", cols: nil, wantNames: nil, match: map[string]bool{"d__v": true, "x": true}},
		{name: "exact", cols: []backends.Column{{Family: "d", Qualifier: "v"}, {Family: "d", Qualifier: "v"}, {Qualifier: "x"}},
			wantNames: []string{"d__v", "x"}, match: map[string]bool{"d__v": true, "x": true, "d__w": false}},
		{name: "family", cols: []backends.Column{{Family: "d"}, {Family: "e", Qualifier: "v"}},
			wantNames: nil, match: map[string]bool{"d__v": true, "d__": true, "e__v": true, "e__w": false, "x": false, "dd__v": false}},
		{name: "family none", cols: []backends.Column{{}},
			wantNames: nil, match: map[string]bool{"x": true, "d__v": false}},
		{name: "bad family", cols: []backends.Column{{Family: "d_"}}, err: true},
		{name: "bad qualifier", cols: []backends.Column{{Family: "d", Qualifier: "a.b"}}, err: true},
		{name: "key column", cols: []backends.Column{{Qualifier: "pk"}}, err: true},
		{name: "too many", cols: func() []backends.Column {
			var c []backends.Column
			for i := range 128 {
				c = append(c, backends.Column{Family: "d", Qualifier: "q" + strings.Repeat("x", i)})
			}
			return c
		}(), err: true},
	}
	for _, tt := range tests {
		sel, err := newSelector(s, backends.ReadOptions{Columns: tt.cols})
		if tt.err {
			if !errors.Is(err, backends.ErrInvalidArgument) {
				t.Errorf("%s: err = %v, want ErrInvalidArgument", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if strings.Join(sel.names, ",") != strings.Join(tt.wantNames, ",") || (sel.names == nil) != (tt.wantNames == nil) {
			t.Errorf("%s: names %q, want %q", tt.name, sel.names, tt.wantNames)
		}
		for name, want := range tt.match {
			if got := sel.match(name); got != want {
				t.Errorf("%s: match(%q) = %v, want %v", tt.name, name, got, want)
			}
		}
	}
}

func TestValueBytes(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{[]byte("x"), "x"},
		{[]byte(nil), ""},
		{"s", "s"},
		{int64(1), "\x00\x00\x00\x00\x00\x00\x00\x01"},
		{float64(1), "\x3f\xf0\x00\x00\x00\x00\x00\x00"},
		{true, "\x01"},
		{false, "\x00"},
	}
	for _, tt := range tests {
		if got := valueBytes(tt.in); string(got) != tt.want || got == nil {
			t.Errorf("valueBytes(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
