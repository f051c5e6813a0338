package salting

import (
	"errors"
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
