package fanout

import (
	"context"
	"iter"
)

// MergeOpen is Merge over n streams that it opens itself: open(sctx, i) returns stream i, where sctx
// is a child of ctx that MergeOpen cancels as soon as the merge stops pulling (all streams ended,
// Limit, the consumer's break, a stream's error, ctx's end) and before it waits for the streams'
// goroutines. A stream blocked in a server round trip under sctx thus returns at once instead of at
// its next yield, which a stream honouring only ctx would reach only after that round trip.
//
// The streams are opened anew, under a new sctx, each time the result is ranged over.
func MergeOpen[T any](ctx context.Context, n int, open func(ctx context.Context, i int) iter.Seq2[T, error],
	cmp func(a, b T) int, opts Options) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		streams := make([]iter.Seq2[T, error], n)
		for i := range streams {
			streams[i] = open(sctx, i)
		}
		opts.stop = stop
		// ctx, not sctx: the merge reports ctx's end, while sctx's is its own doing.
		Merge(ctx, streams, cmp, opts)(yield)
	}
}
