package bench

import (
	"errors"
	"testing"

	"github.com/brine-kv/brine/backends"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	tests := []struct {
		name   string
		change func(*Config)
	}{
		{"no rows", func(c *Config) { c.Rows = 0 }},
		{"no value", func(c *Config) { c.ValueSize = 0 }},
		{"no naive rows", func(c *Config) { c.NaiveRows = 0 }},
		{"no gets", func(c *Config) { c.Gets = 0 }},
		{"no repeat", func(c *Config) { c.Repeat = 0 }},
		{"scan rows over rows", func(c *Config) { c.ScanRows = c.Rows + 1 }},
		{"zero scan batch", func(c *Config) { c.ScanBatch = 0 }},
		{"zero limit batch", func(c *Config) { c.LimitBatch = 0 }},
		{"negative tune rows", func(c *Config) { c.TuneRows = -1 }},
		{"negative bulk rows", func(c *Config) { c.BulkRows = -1 }},
		{"bad salt", func(c *Config) { c.Salt = "hash:0" }},
		{"zero buckets", func(c *Config) { c.ScanBuckets = []int{8, 0} }},
		{"too many limit buckets", func(c *Config) { c.LimitBuckets = 70000 }},
		{"zero limit", func(c *Config) { c.Limits = []int{0} }},
		{"negative prefetch", func(c *Config) { c.LimitPrefetch = []int{-1} }},
		{"no raw concurrency", func(c *Config) { c.RawConcurrency = nil }},
		{"zero raw concurrency", func(c *Config) { c.RawConcurrency = []int{0} }},
		{"unknown section", func(c *Config) { c.Sections = []string{"write", "bogus"} }},
		{"no section", func(c *Config) { c.Sections = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.change(&c)
			err := c.Validate()
			if err == nil {
				t.Fatal("Validate accepted it")
			}
			if tt.name != "bad salt" && !errors.Is(err, backends.ErrInvalidArgument) {
				t.Errorf("error %v does not wrap ErrInvalidArgument", err)
			}
		})
	}
}

func TestScanRange(t *testing.T) {
	c := DefaultConfig()
	c.Rows = 1000
	if lo, hi := c.scanRange(); lo != 0 || hi != 1000 {
		t.Errorf("all rows: got [%d, %d)", lo, hi)
	}
	c.ScanRows = 100
	if lo, hi := c.scanRange(); lo != 450 || hi != 550 {
		t.Errorf("centred 100: got [%d, %d)", lo, hi)
	}
}
