package client

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
)

// TestIndexConcurrentWriters runs writers changing the indexed values of overlapping rows while
// index scans run. Every answer a scan gives must carry the index key it was found under; once the
// writers stop, every index must answer what the main table says and verify clean after repair.
//
// The guarantee for writers of one row: their data writes are serialized by a compare-and-set on
// the row's version, each re-reading the row when it loses, so the row ends as the last data write
// left it; every entry a write leaves is pending until the write that made it verifies it, and no
// write verifies or deletes an entry a later write has touched. So the index ends exactly the main
// table's once pending entries are repaired, whatever the interleaving.
func TestIndexConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	for _, seed := range []uint64{1, 2, 3} {
		tbl := newOrders(t, memory.New())
		var (
			wg      sync.WaitGroup
			stop    atomic.Bool
			answers atomic.Int64
			writes  atomic.Int64
		)
		errs := make(chan error, 64)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(w)))
				for range 60 {
					if err := randomWrite(ctx, tbl, rng, 5); err == nil {
						writes.Add(1)
					}
				}
			}()
		}
		var scanners sync.WaitGroup
		for _, ix := range tbl.Indexes() {
			scanners.Add(1)
			go func() {
				defer scanners.Done()
				for !stop.Load() {
					for ir, err := range ix.Scan(ctx, Range{}) {
						if err != nil {
							errs <- err
							return
						}
						k, ok, err := ix.entryKey(ir.Key, ir.Cells)
						if err != nil || !ok || !bytes.Equal(k, ir.IndexKey) {
							t.Errorf("index %s: row %q found under %q has key %q (%v)", ix.Name(), ir.Key, ir.IndexKey, k, err)
						}
						answers.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		stop.Store(true)
		scanners.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if writes.Load() < 100 || answers.Load() == 0 {
			t.Fatalf("seed %d: %d writes acknowledged, %d answers: too few to prove anything", seed, writes.Load(), answers.Load())
		}
		assertIndexes(t, tbl)
	}
}
