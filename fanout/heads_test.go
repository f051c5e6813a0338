package fanout

import (
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/testkit"
)

// Every stream waits after its head until all heads are in, whatever the concurrency: the merge can
// yield nothing before that, and a stream reading on would only put its next round trip in the way
// of the heads still awaited. A stream that ends or fails before its head must not hold the others.
func TestHeadGate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		concurrency int
		empty       int // index of a stream with no elements; -1 for none
	}{
		{"unbounded", 0, -1},
		{"two slots", 2, -1},
		{"unbounded, an empty stream", 0, 1},
		{"one slot, an empty stream", 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const streams, per, slow = 4, 20, 3 // stream 3 takes a while to its head
			var mu sync.Mutex
			var pulls []int
			srcs := make([]iter.Seq2[item, error], streams)
			for s := range streams {
				srcs[s] = func(yield func(item, error) bool) {
					if s == tc.empty {
						return
					}
					if s == slow {
						time.Sleep(30 * time.Millisecond)
					}
					for j := range per {
						mu.Lock()
						pulls = append(pulls, s)
						mu.Unlock()
						if !yield(item{key: j*streams + s, stream: s, seq: j}, nil) {
							return
						}
					}
				}
			}
			n := testkit.Count(t, Merge(t.Context(), srcs, asc, Options{Concurrency: tc.concurrency, Prefetch: 8}))
			heads := streams
			if tc.empty >= 0 {
				heads--
			}
			if n != heads*per {
				t.Fatalf("merged %d elements, want %d", n, heads*per)
			}
			seen := map[int]bool{}
			for _, s := range pulls[:heads] {
				seen[s] = true
			}
			if len(seen) != heads {
				t.Errorf("first %d pulls came from streams %v, want one from each non-empty stream", heads, pulls[:heads])
			}
		})
	}
}

// A stream failing before its head releases the streams held at the gate: the merge reports the
// error instead of hanging.
func TestHeadGateError(t *testing.T) {
	boom := errors.New("boom")
	srcs := []iter.Seq2[item, error]{
		func(yield func(item, error) bool) {
			for j := range 5 {
				if !yield(item{key: j}, nil) {
					return
				}
			}
		},
		func(yield func(item, error) bool) {
			time.Sleep(10 * time.Millisecond)
			yield(item{}, boom)
		},
	}
	var got error
	for _, err := range Merge(t.Context(), srcs, asc, Options{}) {
		got = err
	}
	if !errors.Is(got, boom) {
		t.Fatalf("merge ended with %v, want %v", got, boom)
	}
}
