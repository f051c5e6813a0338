package dropin

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/tsuna/gohbase"

	"github.com/brine-kv/brine/backends/hbase"
)

// NewClient is gohbase.NewClient for salted tables: the same signature, so that a gohbase program
// switches by changing that one line. Every table is salted by the spec stored with it (a table
// brine did not create fails with ErrNoSpec; HBase's own hbase: tables pass through unsalted).
//
// Like gohbase.NewClient it cannot fail and does not block: it connects on the first call (any
// method but Close), through Open with hbase.Config{ZKQuorum: zkquorum, ClientOptions: options}, so
// options apply to the gohbase client the drop-in sends through (and to the driver's admin
// client). Settings no option gives are the driver's: FlushInterval is 0 (send as soon as no more
// calls are queued) where gohbase's default is 20 ms; pass gohbase.FlushInterval to choose.
//
// Connecting runs in the first call, bounded by its context (or by hbase.Config.OpenTimeout, 30 s,
// when the context has no deadline). Concurrent first calls wait for it, each within its own
// context. A failed attempt is not remembered: the call that made it returns its error, wrapped
// (or the call's ctx.Err() when its context ended, as gohbase returns it), and the next call tries
// again, so a program started before its cluster works once the cluster is up. Once connected, the
// client is as Open's.
//
// The result is a *Client (for Forget and Salter); Close closes everything it made.
func NewClient(zkquorum string, options ...gohbase.Option) gohbase.Client {
	cfg := hbase.Config{ZKQuorum: zkquorum, ClientOptions: options}
	return newLazy(func(ctx context.Context) (*Client, error) { return Open(ctx, cfg) })
}

// lazy is a NewClient client's connection, made by the first call that succeeds in making it.
type lazy struct {
	open func(context.Context) (*Client, error)
	turn chan struct{} // one slot, held by the call that is connecting
	done atomic.Bool   // connected: the Client's inner, backend, meta and close are set
}

func newLazy(open func(context.Context) (*Client, error)) *Client {
	c := newClient(nil)
	c.lazy = &lazy{open: open, turn: make(chan struct{}, 1)}
	return c
}

// connect connects a NewClient client unless it is connected (or was made by New or Open). It
// takes what open made, the connection of a Client built by Open, as this client's own.
func (c *Client) connect(ctx context.Context) error {
	l := c.lazy
	if l == nil || l.done.Load() {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	select {
	case l.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.turn }()
	if l.done.Load() {
		return nil
	}
	if c.closed.Load() {
		return gohbase.ErrClientClosed
	}
	o, err := l.open(ctx)
	if err != nil {
		return fmt.Errorf("dropin: connecting on first use: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed.Load() { // Close ran while this call connected, and found nothing to close
		o.Close()
		return gohbase.ErrClientClosed
	}
	c.inner, c.backend, c.meta, c.close = o.inner, o.backend, o.meta, o.close
	l.done.Store(true)
	return nil
}
