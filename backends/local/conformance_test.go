package local_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// open opens a fresh store in a temporary directory, closed at cleanup.
func open(t testing.TB, opts ...local.Option) *local.Backend {
	t.Helper()
	s, err := local.Open(filepath.Join(t.TempDir(), "brine.db"), append([]local.Option{local.WithNoSync()}, opts...)...)
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
		opts []local.Option
	}{
		// A small memory map and scan batch: writers must remap the file while scans are under way,
		// which stalls if a scan holds its read transaction across yields.
		{"small", []local.Option{local.WithInitialMmapSize(0), local.WithScanBatch(5)}},
		{"default", nil},
		{"durable", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			backendtest.RunWithOptions(t, backendtest.Options{MaxKeyLen: local.MaxKeyLen, SplitKeysAreRegions: true},
				func(t *testing.T) backends.Backend {
					if tc.name != "durable" {
						return open(t, tc.opts...)
					}
					s, err := local.Open(filepath.Join(t.TempDir(), "brine.db"))
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					return s
				})
		})
	}
}
