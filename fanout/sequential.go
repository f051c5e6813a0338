package fanout

import (
	"context"
	"iter"
)

// MergeSequential merges sorted streams without goroutines of its own: it pulls each stream with
// iter.Pull2, one element at a time, on demand, so nothing is read ahead and the streams run one at
// a time. Use it when that matters more than speed: a Pull2 step is a coroutine switch per element,
// which costs more than Merge's batched hand-over. A single stream is passed through directly, with
// no Pull2 at all. Only opts.Limit applies.
// Semantics are otherwise those of Merge: stable order, at most one error and it is last, ctx.Err()
// when ctx ends first, and every started stream is stopped before the iterator returns.
func MergeSequential[T any](ctx context.Context, streams []iter.Seq2[T, error], cmp func(a, b T) int, opts Options) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if opts.stop != nil {
			defer opts.stop()
		}
		var zero T
		if err := ctx.Err(); err != nil {
			yield(zero, err)
			return
		}
		switch len(streams) {
		case 0:
			return
		case 1:
			single(ctx, streams[0], opts.Limit, yield)
			return
		}
		nexts := make([]func() (T, error, bool), len(streams))
		stops := make([]func(), 0, len(streams))
		defer func() {
			for _, stop := range stops {
				stop()
			}
		}()
		for i, s := range streams {
			next, stop := iter.Pull2(s)
			nexts[i] = next
			stops = append(stops, stop)
		}
		m := newMerger(len(streams), cmp)
		heads := make([]T, len(streams)) // batches of one element, so no read-ahead
		refill := func(i int) error {
			c := &m.cur[i]
			v, err, ok := nexts[i]()
			if err != nil {
				return &StreamError{Stream: i, Err: err}
			}
			if !ok {
				// A source may end quietly when ctx ends; that end must not pass for a real one.
				if ctx.Err() != nil {
					return errCanceled
				}
				c.done, c.buf = true, nil
				return nil
			}
			heads[i] = v
			c.buf, c.pos = heads[i:i+1:i+1], 0
			return nil
		}
		var err error
		for i := range m.cur {
			if err = refill(i); err != nil {
				break
			}
		}
		if err == nil {
			m.build()
			err = m.run(yield, opts.Limit, ctx.Done(), refill)
		}
		switch {
		case err == nil || err == errConsumerStopped:
		case ctx.Err() != nil:
			yield(zero, ctx.Err())
		default:
			yield(zero, err)
		}
	}
}

// single passes one stream through with the merge's limit, error and cancellation rules.
func single[T any](ctx context.Context, src iter.Seq2[T, error], limit int, yield func(T, error) bool) {
	var zero T
	done := ctx.Done()
	n := 0
	for v, err := range src {
		if err != nil {
			if ctx.Err() == nil {
				err = &StreamError{Stream: 0, Err: err}
			} else {
				err = ctx.Err()
			}
			yield(zero, err)
			return
		}
		select {
		case <-done:
			yield(zero, ctx.Err())
			return
		default:
		}
		if !yield(v, nil) {
			return
		}
		if n++; n == limit {
			return
		}
	}
	if err := ctx.Err(); err != nil {
		yield(zero, err) // the source may have ended quietly because ctx ended
	}
}
