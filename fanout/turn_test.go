package fanout

import (
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/testkit"
)

// With more streams than concurrency slots, every stream's head is pulled before any stream pulls its
// second element: the merge yields nothing before it has every head, so a stream that kept its slot
// for a whole turn would make the first element wait for that turn's I/O.
func TestHeadsBeforeSecondElements(t *testing.T) {
	const streams, per = 8, 50
	var mu sync.Mutex
	var pulls []int // stream index of every element pulled, in order
	var first sync.Once
	streamsOf := make([]iter.Seq2[item, error], streams)
	for s := range streams {
		streamsOf[s] = func(yield func(item, error) bool) {
			for j := range per {
				// Whichever stream runs first holds the only slot while the others queue for it.
				first.Do(func() { time.Sleep(50 * time.Millisecond) })
				mu.Lock()
				pulls = append(pulls, s)
				mu.Unlock()
				if !yield(item{key: j*streams + s, stream: s, seq: j}, nil) {
					return
				}
			}
		}
	}
	n := testkit.Count(t, Merge(t.Context(), streamsOf, asc, Options{Concurrency: 1, Prefetch: 64}))
	if n != streams*per {
		t.Fatalf("merged %d elements, want %d", n, streams*per)
	}
	seen := map[int]bool{}
	for _, s := range pulls[:streams] {
		seen[s] = true
	}
	if len(seen) != streams {
		t.Errorf("first %d pulls came from streams %v, want one from each", streams, pulls[:streams])
	}
}
