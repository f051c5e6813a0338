package faulty_test

import (
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
)

// TestConformance: a wrapper whose rules only delay must keep the whole contract of the store it
// wraps, so that a fault test's failures come from its faults, never from the wrapper.
func TestConformance(t *testing.T) {
	backendtest.RunWithOptions(t, backendtest.Options{MaxKeyLen: memory.MaxKeyLen, SplitKeysAreRegions: true},
		func(t *testing.T) backends.Backend {
			f := faulty.New(memory.New(memory.WithScanBatch(16)), faulty.Config{Seed: 1, Rules: []faulty.Rule{
				{Fault: faulty.Delay, Ops: faulty.OpData | faulty.OpAtomic | faulty.OpTable, Prob: 0.3, Delay: time.Microsecond},
			}})
			t.Cleanup(func() { f.Close() })
			return f
		})
}
