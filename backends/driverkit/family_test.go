package driverkit

import (
	"errors"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
)

func TestCheckFamilyOptions(t *testing.T) {
	no := false
	fams := []string{"d", "e"}
	tests := []struct {
		name string
		opts map[string]backends.FamilyOptions
		ok   bool
	}{
		{"none", nil, true},
		{"all set", map[string]backends.FamilyOptions{"d": {MaxVersions: 3, TTL: 2 * time.Hour, Compression: "gz", BlockCache: &no, BloomFilter: "ROWCOL"}}, true},
		{"zero value", map[string]backends.FamilyOptions{"e": {}}, true},
		{"unknown family", map[string]backends.FamilyOptions{"x": {MaxVersions: 3}}, false},
		{"negative versions", map[string]backends.FamilyOptions{"d": {MaxVersions: -1}}, false},
		{"versions over int32", map[string]backends.FamilyOptions{"d": {MaxVersions: 1 << 31}}, false},
		{"negative TTL", map[string]backends.FamilyOptions{"d": {TTL: -time.Second}}, false},
		{"sub-second TTL", map[string]backends.FamilyOptions{"d": {TTL: 1500 * time.Millisecond}}, false},
		{"TTL over int32 seconds", map[string]backends.FamilyOptions{"d": {TTL: (1 << 31) * time.Second}}, false},
		{"unknown codec", map[string]backends.FamilyOptions{"d": {Compression: "brotli"}}, false},
		{"unknown bloom", map[string]backends.FamilyOptions{"d": {BloomFilter: "ROWPREFIX"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckFamilyOptions(fams, tc.opts)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, backends.ErrInvalidArgument)) {
				t.Fatalf("CheckFamilyOptions = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
