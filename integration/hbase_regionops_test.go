//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestScanDuringSplitAndCompaction: a region split, a flush and a major compaction run while a slow
// fan-out scan is in the middle of every bucket. The scan must return exactly the rows written, in
// order, none lost and none twice, and the table must have more regions afterwards.
func TestScanDuringSplitAndCompaction(t *testing.T) {
	const rows = 3000
	e := openHBase(t)
	admin, err := hbasetest.FindAdmin(hbasetest.ZK(t))
	if err != nil {
		t.Fatal(err)
	}
	tbl := e.salted(t, "hash:4", 0)
	keys := make([][]byte, rows)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64([]byte("k"), uint64(i*13))
	}
	writeBrine(t, tbl, keys)
	want := make([]row, rows)
	for i, k := range keys {
		want[i] = expectRow(k)
	}
	slices.SortFunc(want, func(a, b row) int { return bytes.Compare([]byte(a.Key), []byte(b.Key)) })

	ctx := testkit.Context(t, 3*time.Minute)
	before, err := e.backend.Regions(ctx, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	// Split bucket 1's region in the middle of its rows: the bucket scan there is mid-region when it
	// happens.
	var bucket1 [][]byte
	for _, k := range keys {
		if b, _ := tbl.Salter().Bucket(k); b == 1 {
			p, _ := tbl.Salter().AppendPhysical(nil, k)
			bucket1 = append(bucket1, p)
		}
	}
	slices.SortFunc(bucket1, bytes.Compare)
	splitAt := bucket1[len(bucket1)/2]

	// Small batches and prefetch keep every bucket scanner's server-side cursor inside its region
	// while the consumer dawdles.
	// (Not closed: closing a Client closes its backend, which e owns.)
	slow := client.New(e.backend, client.WithPrefetch(2))
	var opsDone atomic.Bool
	started := make(chan struct{})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		select {
		case <-started:
		case <-gctx.Done():
			return gctx.Err()
		}
		defer opsDone.Store(true)
		for _, op := range []struct {
			name string
			run  func(context.Context) error
		}{
			{"split", func(ctx context.Context) error { return admin.Split(ctx, tbl.Name(), splitAt) }},
			{"flush", func(ctx context.Context) error { return admin.Flush(ctx, tbl.Name()) }},
			{"major compact", func(ctx context.Context) error { return admin.MajorCompact(ctx, tbl.Name()) }},
		} {
			t0 := time.Now()
			if err := op.run(gctx); err != nil {
				return fmt.Errorf("%s: %w", op.name, err)
			}
			t.Logf("%s took %v", op.name, time.Since(t0).Round(time.Millisecond))
		}
		return nil
	})
	var got []row
	var duringOps int
	g.Go(func() error {
		stbl, err := slow.OpenTable(gctx, tbl.Name(), nil)
		if err != nil {
			return err
		}
		for r, err := range stbl.Scan(gctx, client.Range{}, client.BatchSize(4)) {
			if err != nil {
				return fmt.Errorf("scan after %d rows: %w", len(got), err)
			}
			got = append(got, brineRow(r))
			switch {
			case len(got) == 100:
				close(started)
			case len(got) == rows-200 && !opsDone.Load():
				// Never let the scan finish before the operations: hold the last rows (every bucket
				// scanner still open) until they are over.
				for !opsDone.Load() && gctx.Err() == nil {
					time.Sleep(50 * time.Millisecond)
				}
			case len(got) > 100 && !opsDone.Load():
				duringOps++
				// Paced so that the scan outlasts the admin operations (each a JVM start).
				time.Sleep(8 * time.Millisecond)
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d rows read while split/flush/compact ran", duringOps, rows)
	if duringOps == 0 || len(got)-100-duringOps == 0 {
		t.Errorf("rows during ops %d, after %d: the operations did not overlap the scan", duringOps, len(got)-100-duringOps)
	}
	if d := diffRows(got, want); d != "" {
		t.Fatalf("scan across split and compaction: %s", d)
	}

	after, err := e.backend.Regions(ctx, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) <= len(before) {
		t.Errorf("regions: %d before, %d after the split; want more", len(before), len(after))
	}
	if !slices.ContainsFunc(after, func(k []byte) bool { return bytes.Equal(k, splitAt) }) {
		t.Errorf("no region starts at the split key %q: %q", splitAt, after)
	}
	// And a fresh scan after the dust settled agrees too.
	again, err := collect(tbl.Scan(ctx, client.Range{}))
	if err != nil {
		t.Fatal(err)
	}
	if d := diffRows(again, want); d != "" {
		t.Fatalf("scan after split and compaction: %s", d)
	}
}
