package client

import (
	"context"
	"errors"
	"testing"
)

// TestTelemetryOffAllocatesNothing holds the disabled hooks, the only telemetry code a client without
// providers runs, to zero allocations per call and per row.
func TestTelemetryOffAllocatesNothing(t *testing.T) {
	var tel *telemetry
	ctx := context.Background()
	key, cells := []byte("k"), []Cell{{Value: []byte("v")}}
	err := errors.New("x")
	n := testing.AllocsPerRun(100, func() {
		cctx, c := tel.begin(ctx, "scan", "t")
		c.scanBuckets(3, 16)
		bctx, bc := tel.beginBucket(cctx, "t", 2)
		for range 100 {
			bc.row(key, cells)
		}
		bc.fail(err)
		bc.end(bctx)
		c.countRetries(cctx, 1)
		c.countImport(cctx, 1, 1)
		c.addRow()
		c.fail(err)
		c.endScan(cctx)
		c.end(cctx, err, 100, 0)
		c.endImport(cctx, err, ImportStats{})
	})
	if n != 0 {
		t.Fatalf("disabled telemetry allocates %v times per call, want 0", n)
	}
}
