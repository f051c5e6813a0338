package hbase

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"
)

// Why the data clients dial through a gate: gohbase makes a region client visible in its client
// cache before it dials it (establishRegion puts it, then calls Dial in that goroutine), and the
// client's Close fails every such region client (clientRegionCache.closeAll), whose fail reads the
// connection field without the lock that Dial writes it under (region/client.go, fail; new.go,
// Dial). A gohbase client closed while one of its region connections is being dialled is a data
// race, and leaves that connection open for good. The driver closes data clients mid-run (a stuck
// one is replaced: refresh.go), so under chaos it met that race (TestClusterExclusiveChaos on CI).
//
// The gate orders the two. close, before the client's Close, cancels the dials in progress and
// waits, for each connection the dialer handed over, until the context gohbase dialled it with has
// ended: gohbase cancels that context as Dial returns, after it stored the connection, so the
// store happens before Close reads the field. (The connection itself is handed over as it is: a
// wrapper would hide *net.TCPConn's writev from net.Buffers.WriteTo, and gohbase writes a request
// with cell blocks in one WriteTo, whose buffers would then go out in separate writes that another
// goroutine's request can come between; the region servers crashed on such streams.) A dial after
// close (gohbase goes on connecting a closed client's regions: its establishRegion ends only once
// one connects) waits until Close has returned, so that it cannot store into a region client Close
// failed. That connection stays open, as without the gate (gohbase never closes it): closing it
// from here would hang up on gohbase's check of the region in mid-call.

// errGateClosed is what a dial in progress when the gate closed gets: gohbase fails that region
// client, as after a refused connection.
var errGateClosed = errors.New("hbase: the client is closed")

// gateWait bounds close's wait for connections handed over whose dial context has not ended:
// gohbase ends it as Dial returns, so only a gohbase that no longer did would wait this long.
const gateWait = 10 * time.Second

// dialGate is one gohbase data client's region dialer.
type dialGate struct {
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	stop   context.Context // ends when the gate closes: dials in progress are cancelled
	cancel context.CancelFunc
	after  chan struct{} // closed once the client's Close has returned

	mu      sync.Mutex
	closed  bool
	pending sync.WaitGroup // dials in progress, and connections handed over whose dial context runs
}

// newDialGate gates dial, or a net.Dialer's when dial is nil.
func newDialGate(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *dialGate {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	stop, cancel := context.WithCancel(context.Background())
	return &dialGate{dial: dial, stop: stop, cancel: cancel, after: make(chan struct{})}
}

// Dial is the gohbase.RegionDialer of the gate's client.
func (g *dialGate) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return g.dialAfterClose(ctx, network, addr)
	}
	g.pending.Add(1)
	g.mu.Unlock()
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(g.stop, cancel)()
	conn, err := g.dial(dctx, network, addr)
	if err == nil && g.stop.Err() != nil {
		_ = conn.Close() // dialled as the gate closed: the client's Close would not close it
		conn, err = nil, errGateClosed
	}
	if err != nil {
		g.pending.Done()
		return nil, err
	}
	// Run by a goroutine the cancel starts, after Dial's store of conn. A dial context that ends by
	// its deadline (gohbase's region look-up timeout) just as the dial succeeds could end first:
	// the one order this does not make.
	context.AfterFunc(ctx, g.pending.Done)
	return conn, nil
}

// dialAfterClose dials for a client being closed, once its Close has returned.
func (g *dialGate) dialAfterClose(ctx context.Context, network, addr string) (net.Conn, error) {
	select {
	case <-g.after:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.dial(ctx, network, addr)
}

// close cancels the dials in progress and returns once the dial context of every connection
// handed over has ended (or after gateWait); the client's Close comes next, then clientClosed. A nil
// gate (clients the caller made) has nothing to order.
func (g *dialGate) close() {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cancel()
	done := make(chan struct{})
	go func() { g.pending.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(gateWait):
	}
}

// clientClosed lets the dials after close go on: the client's Close has returned.
func (g *dialGate) clientClosed() {
	if g != nil {
		close(g.after)
	}
}
