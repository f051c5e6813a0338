package client_test

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// openings counts the bucket scans that have started but not yet yielded their first row. Each scan
// waits, before reading, until want scans have started (or a timeout): a client that opens fewer at
// once never gets there, one that opens more goes past it.
type openings struct {
	backends.Backend
	want int

	mu               sync.Mutex
	started, opening int
	most             int
	all              chan struct{}
	release          sync.Once
}

func (o *openings) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	inner := o.Backend.Scan(ctx, table, r, opts)
	return func(yield func(backends.Row, error) bool) {
		o.mu.Lock()
		o.started++
		o.opening++
		o.most = max(o.most, o.opening)
		if o.started == o.want {
			o.release.Do(func() { close(o.all) })
		}
		o.mu.Unlock()
		select {
		case <-o.all:
		case <-time.After(2 * time.Second):
			// Fewer than want opened at once: let every scan through, the count has failed already.
			o.release.Do(func() { close(o.all) })
		case <-ctx.Done():
		}
		opened := false
		open := func() {
			if !opened {
				opened = true
				o.mu.Lock()
				o.opening--
				o.mu.Unlock()
			}
		}
		defer open()
		for row, err := range inner {
			open()
			if !yield(row, err) {
				return
			}
		}
	}
}

// TestScanConcurrency: by default a scan opens every bucket at once, whatever WithConcurrency (the
// bulk calls' bound) says; WithScanConcurrency bounds it.
func TestScanConcurrency(t *testing.T) {
	const buckets = 32
	tests := []struct {
		name string
		opts []client.Option
		want int // bucket scans opening at once
	}{
		{"default", nil, buckets},
		{"WithConcurrency does not bound scans", []client.Option{client.WithConcurrency(1)}, buckets},
		{"bounded", []client.Option{client.WithScanConcurrency(4)}, 4},
		{"bound above the buckets", []client.Option{client.WithScanConcurrency(100)}, buckets},
		{"zero is no bound", []client.Option{client.WithConcurrency(16), client.WithScanConcurrency(0)}, buckets},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &openings{Backend: memory.New(), want: tt.want, all: make(chan struct{})}
			c := client.New(o, tt.opts...)
			t.Cleanup(func() { c.Close() })
			tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, fmt.Sprintf("hash:%d", buckets))})
			if err != nil {
				t.Fatal(err)
			}
			var muts []client.Mutation
			for i := range 20 * buckets {
				muts = append(muts, client.Mutation{Key: fmt.Appendf(nil, "k%04d", i), Cells: []client.Cell{testkit.Cell("q", "v")}})
			}
			if errs, err := tbl.Apply(ctx, muts); err != nil || errs != nil {
				t.Fatal(err, errs)
			}
			if got := testkit.Count(t, tbl.Scan(ctx, client.Range{})); got != len(muts) {
				t.Fatalf("scan returned %d rows, want %d", got, len(muts))
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.started != buckets || o.most != tt.want {
				t.Errorf("%d bucket scans, at most %d opening at once; want %d, and %d at once", o.started, o.most, buckets, tt.want)
			}
		})
	}
}
