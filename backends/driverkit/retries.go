package driverkit

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/brine-kv/brine/backends"
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

// IsRetryable reports whether err is transient and the operation may be retried as is.
func IsRetryable(err error) bool { return errors.Is(err, backends.ErrRetryable) }

// Retryable wraps err so that IsRetryable reports true while errors.Is/As still see err.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return retryableError{err}
}

type retryableError struct{ err error }

func (e retryableError) Error() string   { return e.err.Error() }
func (e retryableError) Unwrap() []error { return []error{e.err, backends.ErrRetryable} }
