package memory_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/memory"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	backendtest.RunWithOptions(t, backendtest.Options{MaxKeyLen: memory.MaxKeyLen, SplitKeysAreRegions: true},
		func(t *testing.T) backends.Backend {
			b := memory.New(memory.WithScanBatch(16))
			t.Cleanup(func() { b.Close() })
			return b
		})
}
