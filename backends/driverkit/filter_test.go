package driverkit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

func TestCompareOpNegate(t *testing.T) {
	// For every pair of values, exactly one of op and driverkit.Negate(op) holds.
	vals := [][]byte{nil, []byte("a"), []byte("ab"), []byte("b")}
	col := backends.Column{Family: "d", Qualifier: "q"}
	for op := backends.Equal; op <= backends.GreaterOrEqual; op++ {
		if driverkit.Negate(driverkit.Negate(op)) != op {
			t.Errorf("%v: negated twice is %v", op, driverkit.Negate(driverkit.Negate(op)))
		}
		for _, v := range vals {
			for _, w := range vals {
				cells := []backends.Cell{{Family: "d", Qualifier: "q", Value: v}}
				f, g := backends.ValueFilter(col, op, w), backends.ValueFilter(col, driverkit.Negate(op), w)
				if driverkit.Match(&f, cells) == driverkit.Match(&g, cells) {
					t.Errorf("%q %v %q and %q %v %q agree", v, op, w, v, driverkit.Negate(op), w)
				}
			}
		}
	}
}

func TestFilterCheck(t *testing.T) {
	col := backends.Column{Family: "d", Qualifier: "q"}
	key := backends.KeyRegexFilter("^a")
	tests := []struct {
		name    string
		f       backends.Filter
		cols    []backends.Column
		logical bool   // CheckLogicalFilter instead of CheckFilter
		want    string // "" for no error
	}{
		{"leaf", backends.ValueFilter(col, backends.Less, nil), nil, false, ""},
		{"leaf in a selected family", backends.ValueRegexFilter(col, "x"), []backends.Column{{Family: "d"}}, false, ""},
		{"leaf not selected", backends.ValueRegexFilter(col, "x"), []backends.Column{{Family: "e"}}, false, "which the read does not select"},
		{"hand-built regex", backends.Filter{Kind: backends.FilterRegex, Column: col, Pattern: "x"}, nil, false, "not built by its constructor"},
		{"bad regex", backends.ValueRegexFilter(col, "a(b"), nil, false, "missing closing )"},
		{"row key, driver", key, nil, false, "package client evaluates those"},
		{"row key, client", key, nil, true, ""},
		{"row key under not, driver", backends.Filter{Kind: backends.FilterNot, Subs: []backends.Filter{key}}, nil, false, "package client evaluates those"},
		{"unknown kind", backends.Filter{Kind: 99}, nil, true, "unknown kind"},
		{"or without subs", backends.Filter{Kind: backends.FilterOr}, nil, false, "0 sub-filters"},
	}
	for _, tt := range tests {
		check := driverkit.CheckFilter
		if tt.logical {
			check = driverkit.CheckLogicalFilter
		}
		err := check(&tt.f, tt.cols)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (!errors.Is(err, backends.ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want ErrInvalidArgument saying %q", tt.name, err, tt.want)
		}
	}
	var none *backends.Filter
	if driverkit.CheckFilter(none, nil) != nil || !driverkit.Match(none, nil) || driverkit.Has(none, backends.FilterRegex) {
		t.Error("a nil filter must check, pass every row and have no leaf")
	}
}

func TestFilterWithKeyText(t *testing.T) {
	// The key text: the key upper-cased, none for keys starting with "x".
	text := func(k []byte) ([]byte, bool) {
		if strings.HasPrefix(string(k), "x") {
			return nil, false
		}
		return []byte(strings.ToUpper(string(k))), true
	}
	leaf := backends.KeyRegexFilter("^A")
	not := backends.Filter{Kind: backends.FilterNot, Subs: []backends.Filter{leaf}}
	tests := []struct {
		f    backends.Filter
		key  string
		want bool
	}{
		{leaf, "abc", true},
		{leaf, "bcd", false},
		{leaf, "x", false},
		{backends.KeyRegexFilter(".*"), "x", false}, // no text: the leaf fails whatever its pattern
		{not, "x", true},
		{not, "abc", false},
		{backends.Filter{Kind: backends.FilterAnd, Subs: []backends.Filter{leaf, backends.KeyRegexFilter("C$")}}, "abc", true},
	}
	for _, tt := range tests {
		bound := driverkit.WithKeyText(tt.f, text)
		if got := driverkit.MatchRow(&bound, []byte(tt.key), nil); got != tt.want {
			t.Errorf("%v on %q = %v, want %v", tt.f.Pattern, tt.key, got, tt.want)
		}
	}
	// Binding copies: the filter bound from still matches bytes ("^A" matches neither key).
	_ = driverkit.WithKeyText(not, text)
	if !driverkit.MatchRow(&not, []byte("x"), nil) || !driverkit.MatchRow(&not, []byte("abc"), nil) {
		t.Errorf("WithKeyText changed the filter it copied")
	}
}
