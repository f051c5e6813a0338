package client_test

import (
	"context"
	"encoding/binary"
	"iter"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// scanRecorder counts the rows every bucket scan hands to the client and keeps the options the
// client asked for.
type scanRecorder struct {
	backends.Backend
	pulled atomic.Int64
	mu     sync.Mutex
	opts   []backends.ScanOptions
}

func (s *scanRecorder) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	s.mu.Lock()
	s.opts = append(s.opts, opts)
	s.mu.Unlock()
	return func(yield func(backends.Row, error) bool) {
		for row, err := range s.Backend.Scan(ctx, table, r, opts) {
			if err == nil {
				s.pulled.Add(1)
			}
			if !yield(row, err) {
				return
			}
		}
	}
}

// A limit scan reads ahead at most an eighth of a bucket's share of the limit (at least one row):
// the buckets hand over at most limit + buckets × (read-ahead + 1) rows, where the default
// read-ahead of P rows per bucket would pull limit + buckets × P. Each bucket is asked to start with
// a small batch.
func TestLimitScanPullsOnDemand(t *testing.T) {
	ctx := t.Context()
	const buckets, rows = 32, 20_000
	rec := &scanRecorder{Backend: memory.New()}
	c := client.New(rec)
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:32")})
	if err != nil {
		t.Fatal(err)
	}
	muts := make([]client.Mutation, rows)
	for i := range muts {
		muts[i] = client.Mutation{Key: binary.BigEndian.AppendUint64(nil, uint64(i)), Cells: []client.Cell{testkit.Cell("q", "v")}}
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
	tests := []struct {
		limit, wantFirst, readAhead int
	}{
		{limit: 10, wantFirst: 1, readAhead: 1},
		{limit: 100, wantFirst: 1, readAhead: 1},
		{limit: 1000, wantFirst: 15, readAhead: 3},
		{limit: 10_000, wantFirst: 156, readAhead: 39},
	}
	for _, tc := range tests {
		rec.pulled.Store(0)
		rec.opts = nil
		n := 0
		for row, err := range tbl.Scan(ctx, client.Range{}, client.Limit(tc.limit)) {
			if err != nil {
				t.Fatal(err)
			}
			if want := uint64(n); binary.BigEndian.Uint64(row.Key) != want {
				t.Fatalf("limit %d: row %d has key %x", tc.limit, n, row.Key)
			}
			n++
		}
		if n != tc.limit {
			t.Fatalf("limit %d: %d rows", tc.limit, n)
		}
		if got, most := rec.pulled.Load(), int64(tc.limit+buckets*(tc.readAhead+1)); got > most {
			t.Errorf("limit %d over %d buckets: buckets handed over %d rows, want at most %d", tc.limit, buckets, got, most)
		}
		if len(rec.opts) != buckets {
			t.Fatalf("limit %d: %d bucket scans, want %d", tc.limit, len(rec.opts), buckets)
		}
		for _, o := range rec.opts {
			if o.Limit != tc.limit || o.FirstBatch != tc.wantFirst {
				t.Errorf("limit %d: bucket scan options %+v, want Limit %d, FirstBatch %d", tc.limit, o, tc.limit, tc.wantFirst)
				break
			}
		}
	}
}

// An unlimited fan-out starts every bucket with a small batch; one bucket owing an exact limit asks
// for all of it at once.
func TestScanFirstBatch(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		spec      string
		opts      []client.ReadOption
		wantFirst int
	}{
		{"hash:8", nil, 8},
		{"hash:8", []client.ReadOption{client.BatchSize(1000)}, 8},
		{"none", nil, 8},
		{"none", []client.ReadOption{client.Limit(50)}, 0},
		{"hash:4", []client.ReadOption{client.Limit(50)}, 6},
	}
	for _, tc := range tests {
		rec := &scanRecorder{Backend: memory.New()}
		c := client.New(rec)
		tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, tc.spec)})
		if err != nil {
			t.Fatal(err)
		}
		testkit.Count(t, tbl.Scan(ctx, client.Range{}, tc.opts...))
		for _, o := range rec.opts {
			if o.FirstBatch != tc.wantFirst {
				t.Errorf("%s %d options: FirstBatch %d, want %d", tc.spec, len(tc.opts), o.FirstBatch, tc.wantFirst)
			}
		}
		if len(rec.opts) == 0 {
			t.Errorf("%s: no bucket scan", tc.spec)
		}
		c.Close()
	}
}
