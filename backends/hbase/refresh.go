package hbase

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/tsuna/gohbase"
)

// Why the driver replaces its own gohbase client: the pinned gohbase re-establishes a region whose
// server went away in a goroutine that sleeps a backoff doubling from 16 ms up to 8 s and then
// growing by 5 s per failed attempt, and it looks hbase:meta up with the same schedule. A server
// that is away for 30 s leaves that client asleep for up to ~20 s more after the server is back:
// every request to those regions waits (or times out) although the cluster serves again. A new
// client starts with no backoff and asks ZooKeeper and hbase:meta at once.
//
// So a Backend that made its own client (Open) watches its RPCs: when one has been in flight for
// Options.RefreshAfter (give or take a tick of the watch, stallWatch), or RPCs have kept failing as retryable for that long, it swaps in a new
// client (at most once per RefreshAfter). The old client is retired, not closed: RPCs already on it
// finish there, and it is closed when the last of them ends (or after retireGrace). The bound this
// gives, measured by the chaos test: requests succeed again within about RefreshAfter plus the time
// the master needs to reopen the regions after their server is back.

// retireGrace bounds how long a replaced client stays open for RPCs still running on it.
const retireGrace = time.Minute

// The stall watch. A timer per RPC (time.AfterFunc, stopped when the RPC ends) and a cancelable
// context around each cost a point get about 4 µs of its latency on the 2-core bench machine
// (p50s of 12,000 gets per side, interleaved at random: raw gohbase 191.7 µs, the driver 197.7 µs
// with them, 186.9 against 183.0 without). Instead every RPC counts itself, in begin, in the slot
// of the watch's current tick, and uncounts itself when it ends; one goroutine per Backend ticks
// stallTicks times per RefreshAfter and looks for a count left in a slot older than RefreshAfter:
// an RPC that began then and has not ended. Slots are reused cyclically; an RPC stuck past them
// all stays counted in its slot, which comes of age again.
const (
	stallTicks = 8  // ticks per RefreshAfter: a stall is seen after RefreshAfter to 9/8 of it
	stallSlots = 16 // > stallTicks+1: the slots old enough to look at, and the ones filling
)

// conn is one generation of the driver's data client.
type conn struct {
	client   gohbase.Client
	rpc      gohbase.RPCClient
	gate     *dialGate // its region dialer, when Open made it: closed before the client
	inflight atomic.Int64
	retired  atomic.Bool
	close    sync.Once
	began    [stallSlots]atomic.Int64 // RPCs in flight by the watch tick they began in
}

func newConn(c gohbase.Client) (*conn, error) {
	rpc, ok := c.(gohbase.RPCClient)
	if !ok {
		return nil, errNoRPC
	}
	return &conn{client: c, rpc: rpc}, nil
}

func (cn *conn) closeClient() {
	cn.close.Do(func() {
		cn.gate.close()
		cn.client.Close()
		cn.gate.clientClosed()
	})
}

// done ends one RPC on cn; the last RPC on a retired client closes it.
func (cn *conn) done() {
	if cn.inflight.Add(-1) == 0 && cn.retired.Load() {
		cn.closeClient()
	}
}

// refresher decides when to replace the client. The zero value with after == 0 never does.
type refresher struct {
	after  time.Duration
	dial   func() (*conn, error) // makes a new data client; nil: refreshing is off
	now    func() time.Time
	mu     sync.Mutex
	last   time.Time // the last replacement (or the start)
	streak time.Time // first retryable failure of the current run of failures; zero: none
	prev   time.Time // the latest retryable failure
	count  atomic.Int64
	old    []*conn       // retired clients, closed by Backend.Close if still open
	tick   atomic.Int64  // the stall watch's ticks so far: RPCs beginning now count in its slot
	stop   chan struct{} // ends the stall watch (watchStalls); nil: none runs
	wg     sync.WaitGroup
}

// Refreshes returns how many times the driver has replaced its gohbase client (Options.RefreshAfter).
func (b *Backend) Refreshes() int64 { return b.refresh.count.Load() }

// begin starts one RPC: the client to send it on, its context (bounded by Options.RequestTimeout when
// set, else the caller's own) and the function that ends it. While the RPC runs, it is counted for
// the stall watch.
func (b *Backend) begin(ctx context.Context) (*conn, context.Context, func()) {
	for {
		cn := b.cur.Load()
		cn.inflight.Add(1)
		if cn.retired.Load() && cn != b.cur.Load() {
			// Replaced between the load and the count: use the new one, so a retired client's count
			// can only fall.
			cn.done()
			continue
		}
		cancel := context.CancelFunc(func() {})
		if b.opts.RequestTimeout > 0 {
			ctx, cancel = context.WithTimeout(ctx, b.opts.RequestTimeout)
		}
		if b.refresh.stop == nil {
			return cn, ctx, func() { cancel(); cn.done() }
		}
		slot := &cn.began[b.refresh.tick.Load()%stallSlots]
		slot.Add(1)
		return cn, ctx, func() { slot.Add(-1); cancel(); cn.done() }
	}
}

// watchStalls starts the stall watch; Close stops it.
func (b *Backend) watchStalls() {
	r := &b.refresh
	r.stop = make(chan struct{})
	r.wg.Go(func() {
		t := time.NewTicker(r.after / stallTicks)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
			}
			n := r.tick.Add(1)
			// An RPC counted in tick e's slot began before tick e+1: at tick n it has waited
			// more than n-e-1 ticks. Look at the slots of e <= n-stallTicks-1, back to the one
			// the next ticks reuse.
			cn := b.cur.Load()
			for e := n - stallTicks - 1; e > n-stallSlots; e-- {
				if e >= 0 && cn.began[e%stallSlots].Load() > 0 {
					b.maybeRefresh(cn, "a request has waited RefreshAfter")
					break
				}
			}
		}
	})
}

// stopStalls ends the stall watch, if one runs.
func (b *Backend) stopStalls() {
	if b.refresh.stop != nil {
		close(b.refresh.stop)
		b.refresh.wg.Wait()
	}
}

// failed notes how an RPC on cn ended: a retryable failure that is part of a run of such failures
// lasting RefreshAfter replaces the client. The caller's own deadline running out is not one.
func (b *Backend) failed(parent context.Context, cn *conn, err error) {
	if b.refresh.dial == nil || err == nil || parent.Err() != nil {
		return
	}
	if classify(err) != kindRetryable && !errors.Is(err, context.DeadlineExceeded) {
		return
	}
	r := &b.refresh
	r.mu.Lock()
	now := r.now()
	if r.streak.IsZero() || now.Sub(r.prev) > r.after {
		r.streak = now
	}
	r.prev = now
	long := now.Sub(r.streak) >= r.after
	r.mu.Unlock()
	if long {
		b.maybeRefresh(cn, "requests have failed for RefreshAfter")
	}
}

// maybeRefresh replaces cn with a new client unless cn was already replaced, the Backend is closed,
// or the last replacement was less than RefreshAfter ago.
func (b *Backend) maybeRefresh(cn *conn, why string) {
	r := &b.refresh
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if b.closed.Load() || b.cur.Load() != cn || now.Sub(r.last) < r.after {
		return
	}
	next, err := r.dial()
	if err != nil {
		b.log.Warn("hbase: could not make a new client", "err", err)
		return
	}
	r.last, r.streak = now, time.Time{}
	b.cur.Store(next)
	r.count.Add(1)
	r.old = append(r.old, cn)
	b.retire(cn)
	b.log.Info("hbase: replaced the gohbase client", "why", why, "refreshes", r.count.Load())
}

// retire closes cn once no RPC runs on it any more, or after retireGrace.
func (b *Backend) retire(cn *conn) {
	cn.retired.Store(true)
	if cn.inflight.Load() == 0 {
		cn.closeClient()
		return
	}
	time.AfterFunc(retireGrace, cn.closeClient)
}

// closeAll closes the current client and every retired one still open.
func (b *Backend) closeAll() {
	b.refresh.mu.Lock()
	old := b.refresh.old
	b.refresh.old = nil
	b.refresh.mu.Unlock()
	for _, cn := range old {
		cn.closeClient()
	}
	b.cur.Load().closeClient()
}

// rpcErr is the package's rpcErr for an RPC sent on cn: it also feeds the refresher, and a replaced
// client's ErrClientClosed (its last RPCs, cut off after retireGrace) is retryable on the new one.
func (b *Backend) rpcErr(parent context.Context, cn *conn, op, table string, err error) error {
	if err == nil {
		return nil
	}
	b.failed(parent, cn, err)
	if errors.Is(err, gohbase.ErrClientClosed) && cn.retired.Load() && !b.closed.Load() {
		return driverkit.Retryable(fmt.Errorf("hbase: %s %q: sent on a replaced client: %w", op, table, err))
	}
	return rpcErr(parent, op, table, err)
}
