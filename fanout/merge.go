package fanout

import (
	"context"
	"iter"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
)

// DefaultPrefetch is the per-stream prefetch used when Options.Prefetch is 0.
const DefaultPrefetch = 256

// Options tune Merge. The zero value is usable.
type Options struct {
	// Concurrency is the most streams being pulled at once (a stream is "being pulled" while its
	// source runs between two yields, i.e. while it does I/O); 0 or less means no bound. Any value
	// works with any number of streams: a stream waiting for the merge never holds a slot.
	Concurrency int
	// Prefetch bounds, per stream, the elements pulled from the source that the merge has not yet
	// yielded; 0 means DefaultPrefetch. Memory is thus at most len(streams)×Prefetch elements
	// however slow the consumer is (each non-empty stream's buffer starts at 16 elements and doubles,
	// as the stream runs ahead of the merge, up to min(Prefetch, Limit)). 1 disables read-ahead but
	// keeps the parallelism across streams.
	Prefetch int
	// Limit stops the merge after Limit elements and stops every stream; 0 means no limit. Merge
	// only truncates: push the limit down into each stream too, so none reads much more than Limit.
	Limit int
	// stop, set by MergeOpen, is called once when the merge stops pulling (all streams ended, Limit,
	// consumer break, error, ctx's end), before it waits for the streams' goroutines.
	stop func()
}

// Merge merges sorted streams, each pulled in its own goroutine, into one sorted sequence (see the
// package doc for order and ties). It is meant for streams that do I/O, such as one range scan per
// bucket, but it is also the faster merge for in-memory streams: elements cross goroutines in runs,
// not one by one. With len(streams) <= 1 there is nothing to overlap, and Merge is MergeSequential.
//
// Each stream is ranged over at most once per iteration of the result, from a goroutine other than
// the caller's; cmp and the consumer's loop body run on the caller's goroutine only. Elements are
// buffered, so a source must not reuse memory an element refers to after yielding it. An element is
// visible to the merge as soon as its source yields it: a source that blocks in I/O after a few rows
// does not hold those rows back.
//
// Stopping: Merge stops every stream by returning false from its yield (the iter.Seq2 way of closing
// it), and it waits for every stream's goroutine to return before its iterator returns — when all
// streams end, on Limit, when the consumer breaks out of its loop, on error, and on ctx's end. A
// source busy in I/O is stopped at its next yield, so sources should honour ctx as well. A source
// that ends quietly (no error) when its context ends must be given ctx itself: Merge then reports
// ctx.Err() instead of taking that end for a real one.
//
// Errors: the sequence yields at most one error, as its last element, and never ends short without
// one: the elements before it are a prefix of the full merged sequence. The first stream error,
// wrapped as "stream <i>: ...", stops every other stream and is the one yielded; if ctx ends first,
// the error is ctx.Err().
func Merge[T any](ctx context.Context, streams []iter.Seq2[T, error], cmp func(a, b T) int, opts Options) iter.Seq2[T, error] {
	if len(streams) <= 1 {
		return MergeSequential(ctx, streams, cmp, opts)
	}
	return func(yield func(T, error) bool) {
		if err := ctx.Err(); err != nil {
			var zero T
			yield(zero, err)
			return
		}
		mergeParallel(ctx, streams, cmp, opts, yield)
	}
}

func mergeParallel[T any](ctx context.Context, streams []iter.Seq2[T, error], cmp func(a, b T) int, opts Options, yield func(T, error) bool) {
	size := opts.Prefetch
	if size <= 0 {
		size = DefaultPrefetch
	}
	if opts.Limit > 0 {
		size = min(size, opts.Limit) // no stream needs to hold more than Limit
	}
	var sem chan struct{}
	if c := opts.Concurrency; c > 0 && c < len(streams) {
		sem = make(chan struct{}, c)
	}

	// cancel is ours (Limit, consumer break); the errgroup's context adds "first error".
	cctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(cctx)
	rings := make([]ring[T], len(streams))
	heads := newHeadGate(len(streams))
	for i, src := range streams {
		r := &rings[i]
		r.size = size
		r.wakeMerge = make(chan struct{}, 1)
		r.wakeProducer = make(chan struct{}, 1)
		g.Go(func() error { return r.produce(ctx, gctx, i, src, sem, heads) })
	}
	waited := false
	defer func() {
		if !waited { // a panic in cmp or in the consumer's loop body: still leave no goroutine behind
			cancel()
			if opts.stop != nil {
				opts.stop()
			}
			_ = g.Wait()
		}
	}()

	m := newMerger(len(streams), cmp)
	done := gctx.Done()
	refill := func(i int) error { return rings[i].next(&m.cur[i], done) }
	var err error
	for i := range m.cur {
		if err = refill(i); err != nil {
			break
		}
	}
	if err == nil {
		m.build()
		err = m.run(yield, opts.Limit, done, refill)
	}
	cancel()
	if opts.stop != nil {
		opts.stop()
	}
	gerr := g.Wait()
	waited = true
	if err != errCanceled {
		return // all streams ended, Limit reached, or the consumer stopped: nothing more to say
	}
	// gctx ended: either a stream failed (gerr) or ctx ended; ctx's end takes precedence, since
	// stream errors that follow it are mostly its echo.
	if ctx.Err() != nil {
		gerr = ctx.Err()
	}
	var zero T
	yield(zero, gerr)
}

// ring is a single-producer single-consumer queue of one stream's elements: the stream's goroutine
// appends, the merge reads contiguous runs in place. Each element is published as soon as it is
// written, so rows never wait in a half-filled batch while the source blocks in I/O; the merge
// still takes whatever has accumulated in one go, so a fast stream costs one handover per run, not
// per row. Its capacity is the prefetch bound, reached by doubling from ringStart as the stream
// runs ahead of the merge: a scan broken off at its first row (the fan-out's first row, Limit) has
// allocated ringStart slots per bucket, not Prefetch (32 buckets × 256 rows of 48 bytes was 393 KB
// of zeroed, scanned memory per scan, and the GC it caused put a 32-bucket first row at 1.31× the
// floor of 32 raw scanners opened at once; 1.14× with small rings, on one standalone HBase).
type ring[T any] struct {
	// Set before the producer starts.
	size int // the most elements published and not consumed: the prefetch bound
	// buf is the current buffer, allocated at the first element (empty streams cost nothing) and
	// replaced by one twice its length when it is full and shorter than size. Element k is in slot
	// k % len(buf) of every buffer that holds it. The producer stores a new buffer before it
	// publishes any element written there; the merge loads it after the tail it reads, so the buffer
	// it gets holds every element it has not freed (a growth copies those). A run the merge is
	// reading stays in the old buffer, which the producer no longer writes.
	buf          atomic.Pointer[[]T]
	wakeMerge    chan struct{} // a token means "tail or ended changed"
	wakeProducer chan struct{} // a token means "head changed"
	_            [64]byte

	// Written by the producer, on their own cache line since tail changes every row.
	tail  atomic.Uint64 // elements published
	ended atomic.Bool   // the source ended cleanly; set after the last tail
	_     [64]byte

	// Written by the merge.
	head atomic.Uint64 // elements consumed; their slots may be reused
	h    uint64        // merge's copy of head
	_    [64]byte

	// Set by a side before it sleeps, taken by the other side when it has news (a Dekker pair with
	// tail and head: every atomic here is sequentially consistent, so one of the two sees the other).
	mergeWaits    atomic.Bool
	producerWaits atomic.Bool
	_             [64]byte
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default: // a token is already there; a spare one only causes a re-check
	}
}

// next frees the run c has consumed and loads the stream's next run into c, waiting for one if need
// be; it marks c done when the stream ended cleanly.
func (r *ring[T]) next(c *cursor[T], done <-chan struct{}) error {
	if n := len(c.buf); n > 0 {
		// The run is not cleared: a growth may be copying it. Its slots let go of the rows they
		// refer to when the producer overwrites them, so the ring still holds at most size rows.
		r.h += uint64(n)
		r.head.Store(r.h)
		if r.producerWaits.Load() && r.producerWaits.Swap(false) {
			wake(r.wakeProducer)
		}
	}
	c.buf, c.pos = nil, 0
	for {
		ended := r.ended.Load() // before tail: rows published before the end are then seen
		if t := r.tail.Load(); t > r.h {
			buf := *r.buf.Load() // after tail: it holds every element up to t not yet freed
			slot := int(r.h % uint64(len(buf)))
			n := int(min(t-r.h, uint64(len(buf)-slot))) // runs stop at the wrap
			c.buf = buf[slot : slot+n]
			return nil
		}
		if ended {
			c.done = true
			return nil
		}
		r.mergeWaits.Store(true)
		if r.tail.Load() > r.h || r.ended.Load() {
			r.mergeWaits.Store(false)
			continue
		}
		select {
		case <-r.wakeMerge:
		case <-done:
			return errCanceled
		}
	}
}

// waitSpace waits until the merge has freed a slot; t is the number of elements published.
func (r *ring[T]) waitSpace(t uint64, done <-chan struct{}) (head uint64, ok bool) {
	for {
		r.producerWaits.Store(true)
		if h := r.head.Load(); t-h < uint64(r.size) {
			r.producerWaits.Store(false)
			return h, true
		}
		select {
		case <-r.wakeProducer:
		case <-done:
			return 0, false
		}
	}
}

// produce ranges over src and publishes its elements into r. It holds a concurrency slot only while
// the source runs; it gives the slot back before it waits for space, because the merge needs every
// stream's head and so must never wait on a stream that waits for a slot held by a stream that waits
// on the merge. It also gives the slot back every size/2 rows, so that every stream gets its turn,
// and after its first element: the merge yields nothing before it has every stream's head, so with
// more streams than slots, each stream's head comes before any stream reads on. For the same reason,
// with or without slots, a stream that has published its head waits at the head gate until every
// stream has published one (or ended) before it pulls its second element.
//
// ctx is Merge's, gctx the group's (ctx plus first error plus our own cancel).
func (r *ring[T]) produce(ctx, gctx context.Context, i int, src iter.Seq2[T, error], sem chan struct{}, heads *headGate) error {
	done := gctx.Done()
	arrived := false
	defer func() {
		if !arrived { // ended or failed before its first element: no head to wait for
			heads.arrive()
		}
	}()
	if !acquire(sem, done) {
		return nil
	}
	held := true
	quantum := max(1, r.size/2)
	left := 1 // the first turn ends with the stream's head
	var (
		t, head uint64
		buf     []T // the producer's copy of r.buf
		slot    int
		srcErr  error
		cut     bool // stopped before the source ended
	)
	for v, err := range src {
		if err != nil {
			srcErr = err
			break
		}
		if isDone(done) {
			cut = true
			break
		}
		switch {
		case buf == nil:
			first := make([]T, min(r.size, ringStart))
			r.buf.Store(&first) // not &buf: the merge reads the header stored while buf changes
			buf = first
		case t-head == uint64(len(buf)): // full, and shorter than size (full at size waited below)
			buf, slot = r.grow(buf, head, t)
		}
		buf[slot] = v
		if slot++; slot == len(buf) {
			slot = 0
		}
		t++
		r.tail.Store(t)
		if r.mergeWaits.Load() && r.mergeWaits.Swap(false) {
			wake(r.wakeMerge)
		}
		full := t-head == uint64(len(buf))
		if full {
			head = r.head.Load()
			full = t-head == uint64(len(buf))
		}
		full = full && len(buf) == r.size // a shorter buffer grows at the next element instead
		if t == 1 {
			heads.arrive()
			arrived = true
		}
		if left--; !full && left > 0 {
			continue
		}
		// Backpressure or end of turn: leave the slot while the source stays suspended here.
		release(sem)
		held = false
		if t == 1 && !heads.wait(done) {
			cut = true
			break
		}
		if full {
			var ok bool
			if head, ok = r.waitSpace(t, done); !ok {
				cut = true
				break
			}
		}
		if !acquire(sem, done) {
			cut = true
			break
		}
		held, left = true, quantum
	}
	if held {
		release(sem)
	}
	if srcErr != nil {
		return &StreamError{Stream: i, Err: srcErr}
	}
	// Stopped by us, or the source may have ended quietly because ctx ended: either way this is not
	// the stream's end, and marking it ended would let the merge end short without an error. The
	// merge learns why from the group instead. ctx is checked itself because a source woken by ctx's
	// end may get here before the cancellation has reached gctx.
	if cut || ctx.Err() != nil || isDone(done) {
		return nil
	}
	r.ended.Store(true)
	wake(r.wakeMerge)
	return nil
}

// ringStart is a ring's first buffer length: a fan-out bucket's first batch (route's scanFirstBatch,
// 8 rows) and as much again.
const ringStart = 16

// grow replaces buf, full with elements [head, t), by a buffer twice its length (at most r.size)
// holding the same elements in their slots, stores it for the merge, and returns it with the slot
// of element t.
func (r *ring[T]) grow(buf []T, head, t uint64) ([]T, int) {
	next := make([]T, min(2*len(buf), r.size))
	for k := head; k < t; k++ {
		next[k%uint64(len(next))] = buf[k%uint64(len(buf))]
	}
	r.buf.Store(&next)
	return next, int(t % uint64(len(next)))
}

func acquire(sem chan struct{}, done <-chan struct{}) bool {
	if sem == nil {
		return true
	}
	select {
	case sem <- struct{}{}:
		return true
	case <-done:
		return false
	}
}

func release(sem chan struct{}) {
	if sem != nil {
		<-sem
	}
}

func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
