package backends

import (
	"context"
	"sync/atomic"
)

type retryCounterKey struct{}

// WithRetryCounter returns a context under which drivers count the requests they retry into n, so a
// caller (the client's tracing) can tell how often one bucket scan had to reopen its scanner.
func WithRetryCounter(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, retryCounterKey{}, n)
}

// CountRetry adds one retry to the counter ctx carries, if any. Drivers call it where they retry a
// request on their own: it costs a context lookup, on the retry path only.
func CountRetry(ctx context.Context) {
	if n, ok := ctx.Value(retryCounterKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}
