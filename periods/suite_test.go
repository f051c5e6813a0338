package periods_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/internal/periodtest"
)

// TestSuite runs the period-table suite on the embedded stores; the integration tests run
// it on HBase and the local Tablestore server.
func TestSuite(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) backends.Backend
	}{
		{"memory", func(t *testing.T) backends.Backend { return memory.New() }},
		{"local", func(t *testing.T) backends.Backend {
			s, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "db")})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}},
		// Scans and writes delayed at random (fixed seed) shuffle which period's stream answers first.
		{"faulty", func(t *testing.T) backends.Backend {
			return faulty.New(memory.New(), faulty.Config{Seed: 13, Rules: []faulty.Rule{
				{Fault: faulty.Delay, Prob: 0.2, Delay: time.Millisecond},
			}})
		}},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			periodtest.Run(t, periodtest.Store{Open: st.open})
		})
	}
}
