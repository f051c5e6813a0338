package salting

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	hash16, err := ParseSpec("hash:16")
	if err != nil {
		t.Fatal(err)
	}
	hash8, err := ParseSpec("hash:8")
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]string{MetaKey: "hash:16"}
	tests := []struct {
		name     string
		meta     map[string]string
		given    Salter
		unsalted bool
		want     string // spec, or "" for an error
		wantErr  error
	}{
		{"stored, none given", stored, nil, false, "hash:16", nil},
		{"stored, same given", stored, hash16, false, "hash:16", nil},
		{"stored, other given", stored, hash8, true, "", ErrSpecMismatch},
		{"no spec, given", nil, hash8, false, "hash:8", nil},
		{"no spec, unsalted", map[string]string{"other": "x"}, nil, true, "none", nil},
		{"no spec, refused", map[string]string{"other": "x"}, nil, false, "", ErrNoSpec},
		{"bad stored spec", map[string]string{MetaKey: "hash:0"}, nil, false, "", ErrInvalidSpec},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Resolve(tc.meta, tc.given, tc.unsalted)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || s != nil {
					t.Fatalf("Resolve = %v, %v; want %v", s, err, tc.wantErr)
				}
				return
			}
			if err != nil || s.Spec() != tc.want {
				t.Fatalf("Resolve = %v, %v; want %s", s, err, tc.want)
			}
		})
	}
}

// TestRegistryNamesEveryStrategy: the unknown-strategy message lists exactly the registry's names, so
// a strategy added to parsers is also offered to the user.
func TestRegistryNamesEveryStrategy(t *testing.T) {
	listed := strings.FieldsFunc(strategyNames, func(r rune) bool { return r == ',' || r == ' ' })
	listed = slices.DeleteFunc(listed, func(s string) bool { return s == "or" })
	if len(listed) != len(parsers) {
		t.Fatalf("strategyNames lists %d names %q, the registry has %d", len(listed), listed, len(parsers))
	}
	for _, name := range listed {
		if _, ok := parsers[name]; !ok {
			t.Errorf("strategyNames lists %q, which the registry lacks", name)
		}
	}
}
