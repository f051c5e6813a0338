package fanout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// item is a test element; stream and seq identify where it came from, so tests check stability.
type item struct{ key, stream, seq int }

func asc(a, b item) int  { return cmp.Compare(a.key, b.key) }
func desc(a, b item) int { return cmp.Compare(b.key, a.key) }

var errBoom = errors.New("boom")

type mergeFunc func(context.Context, []iter.Seq2[item, error], func(a, b item) int, Options) iter.Seq2[item, error]

// impls are the merges under test with option sets chosen to hit the edge cases: no bound, a single
// slot with no read-ahead, fewer slots than streams with odd prefetch, a generous prefetch, and one
// that is not a power of two (rings grow to it by doubling).
var impls = []struct {
	name  string
	merge mergeFunc
	opts  Options
}{
	{"parallel/default", Merge[item], Options{}},
	{"parallel/c1p1", Merge[item], Options{Concurrency: 1, Prefetch: 1}},
	{"parallel/c4p3", Merge[item], Options{Concurrency: 4, Prefetch: 3}},
	{"parallel/c2p64", Merge[item], Options{Concurrency: 2, Prefetch: 64}},
	{"parallel/p100", Merge[item], Options{Prefetch: 100}}, // rings grow 16, 32, 64, 100: not a power of two
	{"sequential", MergeSequential[item], Options{}},
}

// probe instruments test sources: how many started and returned, how many run at once, and how many
// elements each yielded.
type probe struct {
	started, exited   atomic.Int64
	active, maxActive atomic.Int64
	pulled            []atomic.Int64
}

func newProbe(b int) *probe { return &probe{pulled: make([]atomic.Int64, b)} }

func (p *probe) enter() {
	n := p.active.Add(1)
	for {
		m := p.maxActive.Load()
		if n <= m || p.maxActive.CompareAndSwap(m, n) {
			return
		}
	}
}

func (p *probe) leave() { p.active.Add(-1) }

// src describes one test source.
type src struct {
	rows   []item
	gen    func(j int) (item, bool) // rows made on demand instead of rows, for long streams
	failAt int                      // yield errBoom instead of rows[failAt]; -1 for never
	delay  time.Duration            // simulated I/O before each row
	yieldy bool                     // runtime.Gosched before each row, so sources overlap
}

// stream returns source i. It counts as active while running between yields, like a scan doing I/O.
func (p *probe) stream(i int, s src) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		p.started.Add(1)
		defer p.exited.Add(1)
		p.enter()
		for j := 0; ; j++ {
			if s.delay > 0 {
				time.Sleep(s.delay)
			}
			if s.yieldy {
				runtime.Gosched()
			}
			if j == s.failAt {
				p.leave()
				yield(item{}, errBoom)
				return
			}
			var r item
			if s.gen != nil {
				var ok bool
				if r, ok = s.gen(j); !ok {
					break
				}
			} else if j == len(s.rows) {
				break
			} else {
				r = s.rows[j]
			}
			p.pulled[i].Add(1)
			p.leave()
			if !yield(r, nil) {
				return
			}
			p.enter()
		}
		p.leave()
	}
}

// checkStopped fails unless every source that started has returned: Merge must wait for them.
func (p *probe) checkStopped(t *testing.T) {
	t.Helper()
	if s, e := p.started.Load(), p.exited.Load(); s != e {
		t.Fatalf("%d sources started, %d returned when the merge returned", s, e)
	}
}

// gen makes b sorted streams in one of several shapes. want is their stable sort by c, which is
// what every merge must return.
func gen(rng *rand.Rand, b int, shape string, c func(a, b item) int) (streams [][]item, want []item) {
	streams = make([][]item, b)
	total := rng.IntN(2000)
	one := rng.IntN(b)
	for range total {
		key := rng.IntN(1_000_000)
		s := rng.IntN(b)
		switch shape {
		case "dups":
			key = rng.IntN(8)
		case "one":
			s = one
		case "sparse": // most streams empty
			s = rng.IntN(min(b, 3)) * max(1, b/3)
		case "empty":
			continue
		}
		streams[s] = append(streams[s], item{key: key, stream: s})
	}
	for s := range streams {
		slices.SortFunc(streams[s], c)
		for j := range streams[s] {
			streams[s][j].seq = j
		}
		want = append(want, streams[s]...)
	}
	slices.SortStableFunc(want, c) // concatenation is in (stream, seq) order, so ties stay stable
	return streams, want
}

var shapes = []string{"random", "dups", "one", "sparse", "empty"}

var widths = []int{1, 2, 3, 5, 16, 64, 256}

func sources(p *probe, streams [][]item, mod func(i int, s *src)) []iter.Seq2[item, error] {
	out := make([]iter.Seq2[item, error], len(streams))
	for i, rows := range streams {
		s := src{rows: rows, failAt: -1}
		if mod != nil {
			mod(i, &s)
		}
		out[i] = p.stream(i, s)
	}
	return out
}

// drain collects a merged sequence; it fails the test if an error is not the last element.
func drain(t *testing.T, seq iter.Seq2[item, error]) ([]item, error) {
	t.Helper()
	var got []item
	var gotErr error
	for v, err := range seq {
		if gotErr != nil {
			t.Fatalf("element after the error %v", gotErr)
		}
		if err != nil {
			gotErr = err
			continue
		}
		got = append(got, v)
	}
	return got, gotErr
}

func forEachCase(t *testing.T, run func(t *testing.T, rng *rand.Rand, merge mergeFunc, opts Options, b int, shape string, c func(a, b item) int)) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, im := range impls {
		for _, b := range widths {
			for _, shape := range shapes {
				for dir, c := range map[string]func(a, b item) int{"asc": asc, "desc": desc} {
					name := fmt.Sprintf("%s/B=%d/%s/%s", im.name, b, shape, dir)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(seed, uint64(b)))
						run(t, rng, im.merge, im.opts, b, shape, c)
					})
				}
			}
		}
	}
}
