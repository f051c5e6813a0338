//go:build integration

package integration

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"
	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends/hbase/dropin"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestAbandonedScansLeaveNoGoroutines: a fan-out scan stopped part-way, by cancelling its context,
// by breaking out of the loop, or by closing a drop-in Scanner, ends every bucket goroutine before
// the call returns, and a cancelled scan reports the context's error.
func TestAbandonedScansLeaveNoGoroutines(t *testing.T) {
	const rows, stopAfter = 2000, 50
	e := openHBase(t)
	tbl := e.salted(t, "hash:16", 0)
	keys := make([][]byte, rows)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64([]byte("c"), uint64(i))
	}
	writeBrine(t, tbl, keys)
	dc := newDropin(t, e, dropin.WithPrefetch(4))
	ctx := testkit.Context(t, 2*time.Minute)

	// Warm up: a full scan of each kind opens the region connections, whose goroutines live as long
	// as the client; what is running now is the baseline.
	if got, err := collect(tbl.Scan(ctx, client.Range{})); err != nil || len(got) != rows {
		t.Fatalf("warm-up scan: %d rows, %v", len(got), err)
	}
	if got, err := drain(dc.Scan(mustScan(t)(hrpc.NewScanStr(ctx, tbl.Name())))); err != nil || len(got) != rows {
		t.Fatalf("warm-up drop-in scan: %d rows, %v", len(got), err)
	}
	baseline := append(gohbaseLeftovers(), goleak.IgnoreCurrent())

	tests := []struct {
		name string
		run  func(t *testing.T) // stops a scan after stopAfter rows
	}{
		{"context cancel", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			n := 0
			var last error
			for _, err := range tbl.Scan(cctx, client.Range{}, client.BatchSize(8)) {
				if err != nil {
					last = err
					break
				}
				if n++; n == stopAfter {
					cancel()
				}
			}
			if !errors.Is(last, context.Canceled) {
				t.Errorf("scan cancelled after %d rows ended with %v, want context.Canceled", n, last)
			}
			if n >= rows {
				t.Errorf("cancelled scan returned all %d rows", n)
			}
		}},
		{"context cancel reverse", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			n := 0
			var last error
			for _, err := range tbl.Scan(cctx, client.Range{}, client.Reverse(), client.BatchSize(8)) {
				if err != nil {
					last = err
					break
				}
				if n++; n == stopAfter {
					cancel()
				}
			}
			if !errors.Is(last, context.Canceled) {
				t.Errorf("scan cancelled after %d rows ended with %v, want context.Canceled", n, last)
			}
		}},
		{"break", func(t *testing.T) {
			n := 0
			for _, err := range tbl.Scan(ctx, client.Range{}, client.BatchSize(8)) {
				if err != nil {
					t.Fatal(err)
				}
				if n++; n == stopAfter {
					break
				}
			}
		}},
		{"dropin Close", func(t *testing.T) {
			sc := dc.Scan(mustScan(t)(hrpc.NewScanStr(ctx, tbl.Name(), hrpc.NumberOfRows(8))))
			for i := range stopAfter {
				if _, err := sc.Next(); err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
			}
			if err := sc.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := sc.Next(); !errors.Is(err, io.EOF) {
				t.Errorf("Next after Close: %v, want io.EOF", err)
			}
		}},
		{"dropin Close reversed", func(t *testing.T) {
			sc := dc.Scan(mustScan(t)(hrpc.NewScanStr(ctx, tbl.Name(), hrpc.Reversed(), hrpc.NumberOfRows(8))))
			for i := range stopAfter {
				if _, err := sc.Next(); err != nil {
					t.Fatalf("row %d: %v", i, err)
				}
			}
			if err := sc.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"dropin context cancel", func(t *testing.T) {
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			sc := dc.Scan(mustScan(t)(hrpc.NewScanStr(cctx, tbl.Name(), hrpc.NumberOfRows(8))))
			defer sc.Close()
			var err error
			for n := 0; err == nil; n++ {
				if n == stopAfter {
					cancel()
				}
				_, err = sc.Next()
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled drop-in scan ended with %v, want context.Canceled", err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t)
			// A short settle for gohbase's own close-scanner RPCs, then nothing of the scan may run.
			time.Sleep(100 * time.Millisecond)
			goleak.VerifyNone(t, baseline...)
		})
	}
}
