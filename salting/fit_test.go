package salting_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

func TestCheckSchema(t *testing.T) {
	for _, tc := range []struct {
		spec, schema string
		bad          string // "" when the spec fits; else a part of the error
	}{
		{"hash:16", "id:int64", ""},
		{"hash:16:fields=1", "id:int64", ""},
		{"hash:16:fields=3", "id:int64", "fields=3, but the key has 1 field"},
		{"md5hex:2:fields=2", "id:int64", "fields=2, but the key has 1 field"},
		{"reverse:fields=2", "id:int64", "fields=2"},
		{"mod:8:field=k0", "id:int64", ""},
		{"mod:8:field=k1", "id:int64", "field=k1, but the key has 1 field"},
		{"mod:8:field=k0", "user,ts:int64", "field=k0 is user (string), not an int64 or uint64"},
		{"mod:8:field=k1", "user,ts:int64", ""},
		{"mod:8:offset=1,width=8", "id:int64", ""},
		{"mod:8:offset=100,width=8", "id:int64", "mod reads bytes 100..107, but its keys are as short as 9 bytes"},
		{"opentsdb:8", "id:uint64", ""},
		{"opentsdb:8:width=1,metric=8", "id:uint64", "an OpenTSDB row key has at least 12"},
		{"hash:16:prefix=64", "id:int64", ""},
		{"none", "id:int64", ""},
	} {
		s, err := salting.ParseSpec(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		ks, err := keys.ParseSchema(tc.schema)
		if err != nil {
			t.Fatal(err)
		}
		err = salting.CheckSchema(s, ks)
		if tc.bad == "" {
			if err != nil {
				t.Errorf("%s on %s: %v", tc.spec, tc.schema, err)
			}
			continue
		}
		if !errors.Is(err, salting.ErrSchemaMismatch) || !strings.Contains(err.Error(), tc.bad) ||
			!strings.Contains(err.Error(), tc.spec) || !strings.Contains(err.Error(), tc.schema) {
			t.Errorf("%s on %s: got %v, want ErrSchemaMismatch naming the spec, the schema and %q", tc.spec, tc.schema, err, tc.bad)
		}
	}
	s, _ := salting.ParseSpec("mod:8:field=k8")
	if err := salting.CheckSchema(s, nil); err != nil {
		t.Errorf("no schema: %v", err)
	}
}

func TestCheckScannable(t *testing.T) {
	for _, tc := range []struct {
		spec string
		ok   bool
	}{{"hash:8", true}, {"none", true}, {"mod:4:field=k0", true}, {"reverse", false}, {"reverse:fields=1", false}} {
		s, _ := salting.ParseSpec(tc.spec)
		err := salting.CheckScannable(s)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, salting.ErrUnorderedRange)) {
			t.Errorf("%s: %v", tc.spec, err)
		}
	}
}
