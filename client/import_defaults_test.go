package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// applyRecorder is a backend that records the largest Apply and the most Applies running at once.
// With overlap > 0, every Apply waits (up to a second) until overlap of them run together, so a test
// sees the concurrency an import allows rather than what the scheduler happened to give it.
type applyRecorder struct {
	backends.Backend
	overlap               int
	once                  sync.Once
	release               chan struct{}
	mu                    sync.Mutex
	running, peak, maxLen int
}

func (r *applyRecorder) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	r.mu.Lock()
	r.running++
	r.peak = max(r.peak, r.running)
	r.maxLen = max(r.maxLen, len(muts))
	if r.overlap > 0 && r.running >= r.overlap {
		r.once.Do(func() { close(r.release) })
	}
	r.mu.Unlock()
	if r.overlap > 0 {
		select {
		case <-r.release:
		case <-time.After(time.Second):
		}
	}
	defer func() {
		r.mu.Lock()
		r.running--
		r.mu.Unlock()
	}()
	return r.Backend.Apply(ctx, table, muts)
}

// TestImportTakesClientDefaults checks that Import's zero Workers and BatchRows are the client's
// WithConcurrency and WithBatchRows, and that explicit ImportOptions still win.
func TestImportTakesClientDefaults(t *testing.T) {
	tests := []struct {
		name                  string
		opts                  []client.Option
		imp                   client.ImportOptions
		wantBatch, wantWorker int
	}{
		{"client options", []client.Option{client.WithBatchRows(7), client.WithConcurrency(3)}, client.ImportOptions{}, 7, 3},
		{"import options win", []client.Option{client.WithBatchRows(7), client.WithConcurrency(3)},
			client.ImportOptions{BatchRows: 3, Workers: 2}, 3, 2},
		{"package defaults", nil, client.ImportOptions{}, client.DefaultBatchRows, client.DefaultImportWorkers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rec := &applyRecorder{Backend: memory.New(), release: make(chan struct{})}
			if tc.wantWorker < client.DefaultImportWorkers {
				rec.overlap = tc.wantWorker
			}
			c := client.New(rec, tc.opts...)
			defer c.Close()
			tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "none")})
			if err != nil {
				t.Fatal(err)
			}
			const n = 2000
			// importInput's bad rows are reported, the rest written.
			if _, err := tbl.Import(ctx, importInput(n), tc.imp); !errors.Is(err, client.ErrRowsFailed) {
				t.Fatalf("Import: %v, want ErrRowsFailed", err)
			}
			if rec.maxLen != tc.wantBatch {
				t.Errorf("largest batch %d rows, want %d", rec.maxLen, tc.wantBatch)
			}
			if rec.peak > tc.wantWorker || (rec.overlap > 0 && rec.peak != rec.overlap) {
				t.Errorf("%d Applies at once, want %d", rec.peak, tc.wantWorker)
			}
		})
	}
}
