package fanout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/testkit"
)

func TestMergeMatchesStableSort(t *testing.T) {
	forEachCase(t, func(t *testing.T, rng *rand.Rand, merge mergeFunc, opts Options, b int, shape string, c func(a, b item) int) {
		streams, want := gen(rng, b, shape, c)
		p := newProbe(b)
		got, err := drain(t, merge(t.Context(), sources(p, streams, nil), c, opts))
		p.checkStopped(t)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %d elements, want %d; first difference at %d", len(got), len(want), testkit.FirstDiff(got, want))
		}
	})
}

func TestMergeLimit(t *testing.T) {
	forEachCase(t, func(t *testing.T, rng *rand.Rand, merge mergeFunc, opts Options, b int, shape string, c func(a, b item) int) {
		streams, want := gen(rng, b, shape, c)
		opts.Limit = 1 + rng.IntN(len(want)+2)
		p := newProbe(b)
		got, err := drain(t, merge(t.Context(), sources(p, streams, nil), c, opts))
		p.checkStopped(t)
		if err != nil {
			t.Fatal(err)
		}
		want = want[:min(opts.Limit, len(want))]
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: got %d elements, want %d; first difference at %d", opts.Limit, len(got), len(want), testkit.FirstDiff(got, want))
		}
	})
}

func TestMergeEarlyBreak(t *testing.T) {
	forEachCase(t, func(t *testing.T, rng *rand.Rand, merge mergeFunc, opts Options, b int, shape string, c func(a, b item) int) {
		streams, want := gen(rng, b, shape, c)
		k := rng.IntN(len(want) + 1)
		p := newProbe(b)
		var got []item
		for v, err := range merge(t.Context(), sources(p, streams, nil), c, opts) {
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == k {
				break
			}
			got = append(got, v)
		}
		p.checkStopped(t)
		if !slices.Equal(got, want[:k]) {
			t.Fatalf("break after %d: first difference at %d", k, testkit.FirstDiff(got, want[:k]))
		}
	})
}

func TestMergeStreamError(t *testing.T) {
	forEachCase(t, func(t *testing.T, rng *rand.Rand, merge mergeFunc, opts Options, b int, shape string, c func(a, b item) int) {
		streams, want := gen(rng, b, shape, c)
		bad := rng.IntN(b)
		at := rng.IntN(len(streams[bad]) + 1) // at == len: fails after its last row
		p := newProbe(b)
		seq := merge(t.Context(), sources(p, streams, func(i int, s *src) {
			if i == bad {
				s.failAt = at
			}
		}), c, opts)
		got, err := drain(t, seq)
		p.checkStopped(t)
		if !errors.Is(err, errBoom) {
			t.Fatalf("stream %d failing at row %d: got error %v after %d elements, want %v", bad, at, err, len(got), errBoom)
		}
		if want := fmt.Sprintf("stream %d: boom", bad); err.Error() != want {
			t.Errorf("error %q, want %q", err, want)
		}
		if se := (*StreamError)(nil); !errors.As(err, &se) || se.Stream != bad {
			t.Errorf("error %v: want a *StreamError for stream %d", err, bad)
		}
		if !slices.Equal(got, want[:len(got)]) {
			t.Fatalf("elements before the error are not a prefix of the merge: first difference at %d", testkit.FirstDiff(got, want))
		}
	})
}

// TestMergeErrorStopsOthers: one stream fails at once while the others could run for a long time;
// the merge must stop them, not drain them.
func TestMergeErrorStopsOthers(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			const b = 16
			p := newProbe(b)
			streams := make([]iter.Seq2[item, error], b)
			for i := range streams {
				if i == b/2 {
					streams[i] = p.stream(i, src{failAt: 0})
					continue
				}
				streams[i] = p.stream(i, src{gen: interleaved(i, b, 1<<40), failAt: -1})
			}
			got, err := drain(t, im.merge(t.Context(), streams, asc, im.opts))
			p.checkStopped(t)
			if !errors.Is(err, errBoom) {
				t.Fatalf("got %v, want %v", err, errBoom)
			}
			if len(got) > 0 {
				t.Fatalf("%d elements before the error, but the failing stream's head is needed first", len(got))
			}
			var pulled int64
			for i := range p.pulled {
				pulled += p.pulled[i].Load()
			}
			if pulled > b*int64(max(im.opts.Prefetch, DefaultPrefetch)) {
				t.Errorf("%d rows pulled after the error, want the others stopped", pulled)
			}
		})
	}
}

// interleaved makes row j of stream i of b ascending streams whose keys interleave, n rows each.
func interleaved(i, b, n int) func(j int) (item, bool) {
	return func(j int) (item, bool) { return item{key: j*b + i, stream: i, seq: j}, j < n }
}

func rowsOf(g func(j int) (item, bool)) (rows []item) {
	for j := 0; ; j++ {
		r, ok := g(j)
		if !ok {
			return rows
		}
		rows = append(rows, r)
	}
}

func TestMergeSlowStream(t *testing.T) {
	for _, im := range impls {
		for _, slowAll := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/all=%v", im.name, slowAll), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(1, 2))
				const b = 8
				streams, want := gen(rng, b, "random", asc)
				p := newProbe(b)
				got, err := drain(t, im.merge(t.Context(), sources(p, streams, func(i int, s *src) {
					if slowAll || i == 3 {
						s.rows = s.rows[:min(len(s.rows), 20)]
						s.delay = 200 * time.Microsecond
					}
				}), asc, im.opts))
				p.checkStopped(t)
				if err != nil {
					t.Fatal(err)
				}
				want = want[:0]
				for s := range streams {
					if slowAll || s == 3 {
						streams[s] = streams[s][:min(len(streams[s]), 20)]
					}
					want = append(want, streams[s]...)
				}
				slices.SortStableFunc(want, asc)
				if !slices.Equal(got, want) {
					t.Fatalf("first difference at %d", testkit.FirstDiff(got, want))
				}
			})
		}
	}
}

// blocking returns a source that yields rows and then blocks like a scan waiting on the server
// until ctx ends; it then ends with ctx's error, or quietly when quiet is set.
func (p *probe) blocking(ctx context.Context, rows []item, quiet bool) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		p.started.Add(1)
		defer p.exited.Add(1)
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
		<-ctx.Done()
		if !quiet {
			yield(item{}, fmt.Errorf("scan: %w", ctx.Err()))
		}
	}
}

func TestMergeCancel(t *testing.T) {
	for _, im := range impls {
		for _, b := range []int{1, 16} {
			t.Run(fmt.Sprintf("%s/consumer-cancels/B=%d", im.name, b), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				streams, want := gen(rng, b, "random", asc)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				p := newProbe(b)
				k := len(want) / 2
				var got []item
				var gotErr error
				for v, err := range im.merge(ctx, sources(p, streams, nil), asc, im.opts) {
					if err != nil {
						gotErr = err
						break
					}
					got = append(got, v)
					if len(got) == k {
						cancel()
					}
				}
				p.checkStopped(t)
				if gotErr != context.Canceled {
					t.Fatalf("got error %v, want context.Canceled", gotErr)
				}
				if len(got) != k || !slices.Equal(got, want[:k]) {
					t.Fatalf("got %d elements after cancelling at %d, want exactly the first %d", len(got), k, k)
				}
			})
		}
		for _, quiet := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/blocked-sources/quiet=%v", im.name, quiet), func(t *testing.T) {
				for _, b := range []int{1, 7} {
					ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
					p := newProbe(b)
					streams := make([]iter.Seq2[item, error], b)
					for i := range streams {
						streams[i] = p.blocking(ctx, rowsOf(interleaved(i, b, 3)), quiet)
					}
					start := time.Now()
					got, err := drain(t, im.merge(ctx, streams, asc, im.opts))
					cancel()
					p.checkStopped(t)
					if err != context.DeadlineExceeded {
						t.Fatalf("B=%d: got error %v after %d elements, want context.DeadlineExceeded", b, err, len(got))
					}
					if d := time.Since(start); d > 2*time.Second {
						t.Errorf("B=%d: took %v to stop", b, d)
					}
				}
			})
		}
		// The consumer cancels right after the last row, while the merge still waits for the
		// streams' ends, which then come quietly: the merge must not take them for real ends.
		t.Run(im.name+"/quiet-end-after-last-row", func(t *testing.T) {
			for range 50 {
				ctx, cancel := context.WithCancel(t.Context())
				p := newProbe(2)
				streams := []iter.Seq2[item, error]{
					p.stream(0, src{rows: []item{{key: 0}}, failAt: -1}),
					p.blocking(ctx, []item{{key: 1, stream: 1}}, true),
				}
				var got []item
				var gotErr error
				for v, err := range im.merge(ctx, streams, asc, im.opts) {
					if err != nil {
						gotErr = err
						continue
					}
					if got = append(got, v); len(got) == 2 {
						cancel()
						time.Sleep(time.Millisecond) // let the streams end before the merge looks
					}
				}
				cancel()
				p.checkStopped(t)
				if len(got) != 2 || gotErr != context.Canceled {
					t.Fatalf("got %d elements and error %v, want 2 and context.Canceled", len(got), gotErr)
				}
			}
		})
		t.Run(im.name+"/already-canceled", func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			p := newProbe(4)
			got, err := drain(t, im.merge(ctx, sources(p, make([][]item, 4), nil), asc, im.opts))
			if err != context.Canceled || len(got) != 0 || p.started.Load() != 0 {
				t.Fatalf("got %d elements, error %v, %d sources started; want only context.Canceled", len(got), err, p.started.Load())
			}
		})
	}
}

// TestMergeBackpressure pauses the consumer and checks that sources are not read further than
// Prefetch elements ahead of it, per stream.
func TestMergeBackpressure(t *testing.T) {
	for _, prefetch := range []int{1, 2, 3, 16, 101} {
		for _, conc := range []int{0, 3} {
			t.Run(fmt.Sprintf("prefetch=%d/conc=%d", prefetch, conc), func(t *testing.T) {
				const b = 8
				p := newProbe(b)
				streams := make([]iter.Seq2[item, error], b)
				for i := range streams {
					streams[i] = p.stream(i, src{gen: interleaved(i, b, 1<<40), failAt: -1})
				}
				consumed := make([]int64, b)
				checkBound := func() {
					t.Helper()
					settle(p)
					for i := range consumed {
						if ahead := p.pulled[i].Load() - consumed[i]; ahead > int64(prefetch) {
							t.Errorf("stream %d: %d elements pulled but not yet yielded, want <= %d", i, ahead, prefetch)
						}
					}
				}
				n := 0
				for v, err := range Merge(t.Context(), streams, asc, Options{Concurrency: conc, Prefetch: prefetch}) {
					if err != nil {
						t.Fatal(err)
					}
					consumed[v.stream]++
					n++
					if n == 1 || n == 50 || n == 1000 {
						checkBound() // the consumer is paused here
					}
					if n == 1000 {
						break
					}
				}
				p.checkStopped(t)
			})
		}
	}
}

// settle waits until the sources stop making progress.
func settle(p *probe) {
	total := func() (n int64) {
		for i := range p.pulled {
			n += p.pulled[i].Load()
		}
		return n
	}
	last, still := total(), 0
	for still < 5 {
		time.Sleep(5 * time.Millisecond)
		if n := total(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
}

// TestMergeBoundedConcurrency: many more streams than slots must neither deadlock nor run more
// sources at once than allowed.
func TestMergeBoundedConcurrency(t *testing.T) {
	for _, tc := range []struct{ b, conc, prefetch int }{
		{256, 4, 1}, {256, 4, 8}, {256, 1, 2}, {64, 3, 0}, {5, 4, 1},
	} {
		t.Run(fmt.Sprintf("B=%d/conc=%d/prefetch=%d", tc.b, tc.conc, tc.prefetch), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(tc.b)))
			streams, want := gen(rng, tc.b, "random", asc)
			p := newProbe(tc.b)
			got, err := drain(t, Merge(t.Context(), sources(p, streams, func(_ int, s *src) { s.yieldy = true }), asc,
				Options{Concurrency: tc.conc, Prefetch: tc.prefetch}))
			p.checkStopped(t)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("first difference at %d", testkit.FirstDiff(got, want))
			}
			if m := p.maxActive.Load(); m > int64(tc.conc) {
				t.Fatalf("%d sources ran at once, want <= %d", m, tc.conc)
			}
		})
	}
}

// TestMergeConsumerPanic: a panic in the loop body must still stop and wait for every stream.
func TestMergeConsumerPanic(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			streams, _ := gen(rng, 16, "random", asc)
			p := newProbe(16)
			func() {
				defer func() {
					if r := recover(); r != "stop" {
						t.Fatalf("recovered %v", r)
					}
				}()
				n := 0
				for range im.merge(t.Context(), sources(p, streams, nil), asc, im.opts) {
					if n++; n == 10 {
						panic("stop")
					}
				}
			}()
			p.checkStopped(t)
		})
	}
}

func TestMergeNoStreams(t *testing.T) {
	for _, im := range impls {
		got, err := drain(t, im.merge(t.Context(), nil, asc, im.opts))
		if err != nil || len(got) != 0 {
			t.Fatalf("%s: got %d elements, error %v", im.name, len(got), err)
		}
	}
}

// TestMergeRowsNotHeldBack: rows a source has yielded reach the consumer even while that source
// then blocks (a scan waiting on its next round trip).
func TestMergeRowsNotHeldBack(t *testing.T) {
	for _, im := range impls {
		t.Run(im.name, func(t *testing.T) {
			release := make(chan struct{})
			streams := []iter.Seq2[item, error]{
				func(yield func(item, error) bool) {
					for j := range 10 {
						if !yield(item{key: j, seq: j}, nil) {
							return
						}
					}
				},
				func(yield func(item, error) bool) {
					if !yield(item{key: 100, stream: 1}, nil) {
						return
					}
					<-release
					yield(item{key: 101, stream: 1, seq: 1}, nil)
				},
			}
			n := 0
			for v, err := range im.merge(t.Context(), streams, asc, im.opts) {
				if err != nil {
					t.Fatal(err)
				}
				if n++; n == 11 {
					if v.key != 100 {
						t.Fatalf("11th element %v, want key 100", v)
					}
					close(release) // reached only if the merge did not wait for the blocked source
				}
			}
			if n != 12 {
				t.Fatalf("%d elements, want 12", n)
			}
		})
	}
}

// TestStopCalledOnce checks that Options.stop runs exactly once however the merge ends, so MergeOpen
// can cancel the streams' I/O with it.
func TestStopCalledOnce(t *testing.T) {
	for _, n := range []int{1, 3} {
		for _, limit := range []int{0, 2} {
			streams := make([]iter.Seq2[int, error], n)
			for i := range streams {
				streams[i] = func(yield func(int, error) bool) {
					for j := range 5 {
						if !yield(j*n+i, nil) {
							return
						}
					}
				}
			}
			calls := 0
			got := testkit.Count(t, Merge(context.Background(), streams, cmp.Compare[int], Options{Limit: limit, stop: func() { calls++ }}))
			if calls != 1 {
				t.Errorf("n=%d limit=%d: stop called %d times, want 1 (%d rows)", n, limit, calls, got)
			}
		}
	}
}
