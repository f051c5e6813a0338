package dropin

import (
	"context"
	"errors"

	"github.com/tsuna/gohbase"

	"github.com/brine-kv/brine/backends"
)

// gohbaseError is an error gohbase itself returned, kept as it is through the fan-out's wrapping so
// that Next can hand it back unchanged.
type gohbaseError struct{ err error }

func (e gohbaseError) Error() string { return e.err.Error() }
func (e gohbaseError) Unwrap() error { return e.err }

// asGohbase turns err into the error gohbase would have returned in its place, since gohbase callers
// compare with == (err == context.Canceled, err == gohbase.TableNotFound):
//   - ctx done: ctx.Err() itself, as gohbase returns it;
//   - the client closed: gohbase.ErrClientClosed;
//   - a missing table (found while reading its stored spec): gohbase.TableNotFound;
//   - an error gohbase returned from a bucket's scanner: that error, unwrapped.
//
// The wrapper's own refusals (ErrUnsupported, backends.ErrInvalidKey, ErrNoSpec) stay as they are:
// gohbase would have sent those requests, so there is no gohbase error to give.
func (c *Client) asGohbase(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return ctx.Err()
	}
	if c.closed.Load() {
		return gohbase.ErrClientClosed
	}
	var ge gohbaseError
	if errors.As(err, &ge) {
		return ge.err
	}
	if errors.Is(err, gohbase.TableNotFound) || errors.Is(err, backends.ErrTableNotFound) {
		return gohbase.TableNotFound
	}
	return err
}

// begin is what every call checks before it rewrites anything: gohbase fails a call on a closed client
// or a done context before it looks the table up. A NewClient client then connects, if no call has yet.
func (c *Client) begin(ctx context.Context) error {
	if c.closed.Load() {
		return gohbase.ErrClientClosed
	}
	if ctx != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return c.asGohbase(ctx, c.connect(ctx))
}
