package fanout

import (
	"context"
	"iter"
	"runtime"
	"testing"
)

// wide is an element of 256 bytes: a ring of DefaultPrefetch of them is 64 KiB.
type wide struct {
	key int
	_   [248]byte
}

// TestRingStartsSmall checks that a merge broken off at its first element has not allocated each
// stream's whole prefetch: a fan-out's first row (and a small Limit) would pay for Prefetch rows per
// bucket otherwise, which on a 32-bucket scan was most of what its first row cost over its floor.
func TestRingStartsSmall(t *testing.T) {
	const streams = 32
	// Each stream is a bucket scan's first round trip: 8 elements, then a wait for the next one
	// (here, for the merge to stop), as MergeOpen's streams see their context end.
	open := func(ctx context.Context, i int) iter.Seq2[wide, error] {
		return func(yield func(wide, error) bool) {
			for k := i; k < 8*streams; k += streams {
				if !yield(wide{key: k}, nil) {
					return
				}
			}
			<-ctx.Done()
		}
	}
	first := func() {
		for v, err := range MergeOpen(context.Background(), streams, open, func(a, b wide) int { return a.key - b.key }, Options{}) {
			if err != nil || v.key != 0 {
				t.Fatalf("first element %d, %v; want 0", v.key, err)
			}
			break
		}
	}
	first() // warm-up: goroutine stacks, the runtime's own first allocations
	var before, after runtime.MemStats
	const runs = 20
	runtime.ReadMemStats(&before)
	for range runs {
		first()
	}
	runtime.ReadMemStats(&after)
	perRun := (after.TotalAlloc - before.TotalAlloc) / runs
	whole := uint64(streams * DefaultPrefetch * 256) // every ring at its full length: 2 MiB
	if perRun > whole/8 {
		t.Fatalf("a merge stopped at its first element allocated %d bytes; every ring at full length is %d", perRun, whole)
	}
	t.Logf("%d bytes per merge stopped at its first element (full rings: %d)", perRun, whole)
}
