package hbase

import (
	"maps"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
)

func TestFamilyAttributes(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name string
		in   backends.FamilyOptions
		want map[string]string
	}{
		{"defaults: one version", backends.FamilyOptions{}, map[string]string{"VERSIONS": "1"}},
		{"gohbase's", backends.FamilyOptions{MaxVersions: 3, BloomFilter: "row", BlockCache: &yes},
			map[string]string{"VERSIONS": "3", "BLOOMFILTER": "ROW", "BLOCKCACHE": "true"}},
		{"all", backends.FamilyOptions{MaxVersions: 7, TTL: 90 * time.Second, Compression: "gz", BlockCache: &no, BloomFilter: "ROWCOL"},
			map[string]string{"VERSIONS": "7", "TTL": "90", "COMPRESSION": "GZ", "BLOCKCACHE": "false", "BLOOMFILTER": "ROWCOL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := familyAttributes(tc.in); !maps.Equal(got, tc.want) {
				t.Fatalf("familyAttributes = %v, want %v", got, tc.want)
			}
		})
	}
}
