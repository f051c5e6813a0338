package indextest

import (
	"bytes"
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brine-kv/brine/client"
)

// Concurrent runs writers changing the indexed values of a few overlapping rows while index scans
// run. Every answer a scan gives must carry the index key it was found under; once the writers stop,
// every index must answer what the main table says and verify clean after repair.
func Concurrent(t *testing.T, tbl *client.Table, seed uint64, writers, writes int) {
	ctx := context.Background()
	var (
		wg, scanners sync.WaitGroup
		stop         atomic.Bool
		answers, ok  atomic.Int64
	)
	errs := make(chan error, len(tbl.Indexes()))
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for range writes {
				if RandomWrite(ctx, tbl, rng, 5) == nil {
					ok.Add(1)
				}
			}
		})
	}
	for _, ix := range tbl.Indexes() {
		scanners.Go(func() {
			for first := true; first || !stop.Load(); first = false { // at least one scan, however fast the writers
				for ir, err := range ix.Scan(ctx, client.Range{}) {
					if err != nil {
						errs <- err
						return
					}
					k, found, err := ix.EntryKey(ir.Key, ir.Cells)
					if err != nil || !found || !bytes.Equal(k, ir.IndexKey) {
						t.Errorf("index %s: row %q found under %q has key %q (%v)", ix.Name(), ir.Key, ir.IndexKey, k, err)
					}
					answers.Add(1)
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	scanners.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d of %d writes acknowledged, %d answers checked", seed, ok.Load(), writers*writes, answers.Load())
	if ok.Load() < int64(writers*writes/4) || answers.Load() == 0 {
		t.Fatalf("seed %d: %d writes acknowledged, %d answers: too few to prove anything", seed, ok.Load(), answers.Load())
	}
	AssertIndexes(t, tbl)
}
