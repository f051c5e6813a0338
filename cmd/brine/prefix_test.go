package main

import (
	"context"
	"strings"
	"testing"
)

// A typed prefix ending on a number would match whole values only and
// answer nothing where leading digits were meant: it is refused, saying what to use; --start/--end
// take a key's leading values.
func TestScanTypedPrefix(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "ids", "--salt", "hash:4", "--key", "id:int64,seq:int64")
	c.ok("create", "--store", c.store, "--table", "hosts", "--salt", "hash:4", "--key", "host,n:int64")
	for _, k := range []string{"2026001,1", "2026001,2", "20260015,1", "2026002,1", "2025999,1"} {
		c.ok("put", "--store", c.store, "--table", "ids", k, "d:v=1")
	}
	for _, k := range []string{"web1,1", "web12,1", "web1,2"} {
		c.ok("put", "--store", c.store, "--table", "hosts", k, "d:v=1")
	}
	tests := []struct {
		name    string
		table   string
		args    []string
		refused string // a word the refusal must hold; "" when the scan must succeed
		keys    []string
	}{
		{"number last", "ids", []string{"--prefix", "2026001"}, "--start", nil},
		{"number after a value", "ids", []string{"--prefix", "2026001,1"}, "--start", nil},
		{"start/end: one number", "ids", []string{"--start", "2026001", "--end", "2026002"}, "", []string{"2026001,1", "2026001,2"}},
		{"start/end: numbers", "ids", []string{"--start", "2026000", "--end", "2027000"}, "", []string{"2026001,1", "2026001,2", "2026002,1"}},
		{"start/end: full keys", "ids", []string{"--start", "2026001,2", "--end", "2026002,1"}, "", []string{"2026001,2"}},
		{"text value", "hosts", []string{"--prefix", "web1"}, "", []string{"web1,1", "web1,2"}},
		{"text then number", "hosts", []string{"--prefix", "web1,1"}, "--start", nil},
		{"start/end: text then number", "hosts", []string{"--start", "web1,1", "--end", "web1,2"}, "", []string{"web1,1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"scan", "--store", c.store, "--table", tc.table}, tc.args...)
			out, _, err := c.run(context.Background(), args...)
			if tc.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("brine %q: %v, want a refusal naming %s", args, err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatalf("brine %q: %v", args, err)
			}
			var got []string
			for _, r := range parseRows(t, out) {
				got = append(got, r.Key)
			}
			if strings.Join(got, " ") != strings.Join(tc.keys, " ") {
				t.Errorf("keys %q, want %q", got, tc.keys)
			}
		})
	}
}
