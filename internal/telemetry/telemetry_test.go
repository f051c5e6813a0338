package telemetry

import (
	"context"
	"errors"
	"testing"

	"github.com/brine-kv/brine/backends"
)

// TestTelemetryOffAllocatesNothing holds the disabled hooks, the only telemetry code a client without
// providers runs, to zero allocations per call and per row.
func TestTelemetryOffAllocatesNothing(t *testing.T) {
	var tel *Telemetry
	ctx := context.Background()
	key, cells := []byte("k"), []backends.Cell{{Value: []byte("v")}}
	err := errors.New("x")
	n := testing.AllocsPerRun(100, func() {
		cctx, c := tel.Begin(ctx, "scan", "t")
		c.ScanBuckets(3, 16)
		bctx, bc := tel.BeginBucket(cctx, "t", 2)
		for range 100 {
			bc.Row(key, cells)
		}
		bc.Fail(err)
		bc.End(bctx)
		c.CountRetries(cctx, 1)
		c.CountImport(cctx, 1, 1)
		c.AddRow()
		c.Fail(err)
		c.EndScan(cctx)
		c.End(cctx, err, 100, 0)
		c.EndImport(cctx, err, 0, 0, 0)
	})
	if n != 0 {
		t.Fatalf("disabled telemetry allocates %v times per call, want 0", n)
	}
}
