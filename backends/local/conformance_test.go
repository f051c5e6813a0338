package local_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// open opens a fresh store in a temporary directory, closed at cleanup.
func open(t testing.TB, cfg local.Config) *local.Backend {
	t.Helper()
	cfg.Path, cfg.NoSync = filepath.Join(t.TempDir(), "brine.db"), true
	s, err := local.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  local.Config
	}{
		// A small memory map and scan batch: writers must remap the file while scans are under way,
		// which stalls if a scan holds its read transaction across yields.
		{"small", local.Config{InitialMmapSize: -1, ScanBatch: 5}},
		{"default", local.Config{}},
		{"durable", local.Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.RunWithOptions(t, backendtest.Options{MaxKeyLen: local.MaxKeyLen, SplitKeysAreRegions: true},
				func(t *testing.T) backends.Backend {
					if tc.name != "durable" {
						return open(t, tc.cfg)
					}
					s, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "brine.db")})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					return s
				})
		})
	}
}
