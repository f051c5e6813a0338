package dropin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/salting"
)

// Sentinel errors a caller can branch on with errors.Is.
var (
	// ErrUnsupported: a call the wrapper cannot rewrite faithfully onto salted keys (an option it
	// cannot carry over, a filter on row keys, ...). Nothing was sent.
	ErrUnsupported = errors.New("dropin: unsupported")
	// ErrNoSpec: the table has no salting spec stored with it (it was not created by brine), and the
	// client was not told to use such tables unsalted (WithUnsalted).
	ErrNoSpec = salting.ErrNoSpec
)

// Defaults of the scan fan-out.
const (
	DefaultConcurrency = 16
	DefaultPrefetch    = fanout.DefaultPrefetch
)

// Client is a salted gohbase.Client. It is safe for concurrent use.
type Client struct {
	inner       gohbase.Client
	backend     *hbase.Backend                             // stored specs, reversed scans; may be nil
	salters     func(table string) (salting.Salter, error) // nil: specs stored with the tables
	unsalted    bool
	concurrency int
	prefetch    int
	log         *slog.Logger
	close       func()
	closed      atomic.Bool

	mu    sync.Mutex
	cache map[string]salting.Salter // stored specs already read
}

var _ gohbase.Client = (*Client)(nil)

type config struct {
	backend     *hbase.Backend
	unsalted    bool
	concurrency int
	prefetch    int
	log         *slog.Logger
}

// Option configures a Client.
type Option func(*config)

// WithBackend gives a client made by NewClient the brine HBase driver it needs for reversed scans
// (and, when NewClient has no salters function, for the specs stored with the tables).
func WithBackend(b *hbase.Backend) Option { return func(c *config) { c.backend = b } }

// WithUnsalted makes tables without a stored spec usable, unsalted (spec "none"), instead of failing
// with ErrNoSpec: tables brine did not create, in any namespace, system tables such as hbase:meta
// included. Their requests go to the server as built, filters and all.
func WithUnsalted() Option { return func(c *config) { c.unsalted = true } }

// WithConcurrency bounds how many bucket scanners of one Scan read at once (default 16).
func WithConcurrency(n int) Option { return func(c *config) { c.concurrency = max(1, n) } }

// WithPrefetch bounds the rows buffered per bucket during a Scan (default 256), so a scan's memory is
// at most buckets × prefetch rows however slow its reader.
func WithPrefetch(n int) Option { return func(c *config) { c.prefetch = max(1, n) } }

// WithLogger sets the logger for the client's debug lines (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

func newConfig(opts []Option) config {
	c := config{concurrency: DefaultConcurrency, prefetch: DefaultPrefetch, log: slog.Default()}
	for _, o := range opts {
		o(&c)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	return c
}

func newClient(inner gohbase.Client, salters func(string) (salting.Salter, error), cfg config, closeFn func()) *Client {
	return &Client{
		inner: inner, backend: cfg.backend, salters: salters, unsalted: cfg.unsalted,
		concurrency: cfg.concurrency, prefetch: cfg.prefetch, log: cfg.log, close: closeFn,
		cache: map[string]salting.Salter{},
	}
}

// NewClient wraps inner, a gohbase client (normally gohbase.NewClient's). salters returns the salter
// of each table; nil means the spec stored with the table, which needs WithBackend. Close closes inner.
func NewClient(inner gohbase.Client, salters func(table string) (salting.Salter, error), opts ...Option) (*Client, error) {
	if inner == nil {
		return nil, fmt.Errorf("dropin: %w: nil gohbase client", backends.ErrInvalidArgument)
	}
	cfg := newConfig(opts)
	if salters == nil && cfg.backend == nil {
		return nil, fmt.Errorf("dropin: %w: no salters function and no backend to read stored specs from", backends.ErrInvalidArgument)
	}
	return newClient(inner, salters, cfg, inner.Close), nil
}

// New wraps the gohbase client of b, the brine HBase driver; each table's salter is the spec stored
// with it. Close leaves b open: it is the caller's.
func New(b *hbase.Backend, opts ...Option) (*Client, error) {
	if b == nil {
		return nil, fmt.Errorf("dropin: %w: nil backend", backends.ErrInvalidArgument)
	}
	cfg := newConfig(opts)
	cfg.backend = b
	return newClient(b.Client(), nil, cfg, nil), nil
}

// Open connects to the cluster of cfg (see hbase.Open) and returns a salted client over it whose
// tables' salters are the specs stored with them. Close closes the connection.
func Open(ctx context.Context, cfg hbase.Config, opts ...Option) (*Client, error) {
	b, err := hbase.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("dropin: %w", err)
	}
	c, err := New(b, opts...)
	if err != nil {
		_ = b.Close()
		return nil, err
	}
	c.close = func() { _ = b.Close() }
	return c, nil
}

// Close closes what the constructor said it would. Calling it again does nothing.
func (c *Client) Close() {
	if c.closed.Swap(true) || c.close == nil {
		return
	}
	c.close()
}

// Forget drops the cached salter of table, e.g. after it was deleted and created again.
func (c *Client) Forget(table string) {
	c.mu.Lock()
	delete(c.cache, table)
	c.mu.Unlock()
}

// Salter returns the salter the client uses for table.
func (c *Client) Salter(ctx context.Context, table string) (salting.Salter, error) {
	if table == "" {
		return nil, fmt.Errorf("dropin: %w: empty table name", backends.ErrInvalidArgument)
	}
	if c.salters != nil {
		s, err := c.salters(table)
		if err == nil && s == nil {
			err = fmt.Errorf("%w: salters returned no salter", backends.ErrInvalidArgument)
		}
		if err != nil {
			return nil, fmt.Errorf("dropin: salter of %q: %w", table, err)
		}
		return s, nil
	}
	c.mu.Lock()
	s, ok := c.cache[table]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	meta, err := c.backend.TableMeta(ctx, table)
	if err != nil {
		return nil, fmt.Errorf("dropin: salter of %q: %w", table, err)
	}
	s, err = salting.Resolve(meta, nil, c.unsalted)
	if errors.Is(err, ErrNoSpec) {
		return nil, fmt.Errorf("dropin: table %q: %w (create it with brine, or use WithUnsalted)", table, err)
	}
	if err != nil {
		return nil, fmt.Errorf("dropin: table %q: %w", table, err)
	}
	c.mu.Lock()
	c.cache[table] = s
	c.mu.Unlock()
	c.log.DebugContext(ctx, "dropin: salter adopted", "table", table, "spec", s.Spec())
	return s, nil
}

// physical returns the physical key of a logical row key, checked against HBase's limits.
func physical(s salting.Salter, call, table string, logical []byte) ([]byte, error) {
	if len(logical) == 0 {
		return nil, fmt.Errorf("dropin: %s %q: %w: empty row key", call, table, backends.ErrInvalidKey)
	}
	phys, err := s.AppendPhysical(nil, logical)
	if err != nil {
		return nil, fmt.Errorf("dropin: %s %q: %w: %w", call, table, backends.ErrInvalidKey, err)
	}
	if len(phys) > hbase.MaxKeyLen {
		return nil, fmt.Errorf("dropin: %s %q: %w: salted row key of %d bytes, the limit is %d",
			call, table, backends.ErrInvalidKey, len(phys), hbase.MaxKeyLen)
	}
	return phys, nil
}

// logicalRows gives every cell of r the logical row key, after checking that each cell belongs to
// the physical row asked for.
func logicalRows(r *hrpc.Result, call, table string, phys, logical []byte) error {
	if r == nil {
		return nil
	}
	for _, cell := range r.Cells {
		if string(cell.Row) != string(phys) {
			return fmt.Errorf("dropin: %s %q: the server returned a cell of row %q for row %q", call, table, cell.Row, phys)
		}
		cell.Row = logical
	}
	return nil
}

// Get reads one row: the request is rebuilt on the salted key; the result carries the logical key.
func (c *Client) Get(g *hrpc.Get) (*hrpc.Result, error) {
	if g == nil {
		return nil, fmt.Errorf("dropin: Get: %w: nil request", backends.ErrInvalidArgument)
	}
	if err := c.begin(g.Context()); err != nil {
		return nil, err
	}
	ng, phys, err := c.rewriteGet(g)
	if err != nil {
		return nil, c.asGohbase(g.Context(), err)
	}
	r, err := c.inner.Get(ng)
	if err != nil {
		return nil, c.asGohbase(g.Context(), err)
	}
	return r, logicalRows(r, "Get", string(g.Table()), phys, cloneKey(g.Key()))
}

// Put writes a row on its salted key.
func (c *Client) Put(p *hrpc.Mutate) (*hrpc.Result, error) { return c.mutate("Put", p, c.inner.Put) }

// Delete deletes on the salted key.
func (c *Client) Delete(d *hrpc.Mutate) (*hrpc.Result, error) {
	return c.mutate("Delete", d, c.inner.Delete)
}

// Append appends on the salted key; the result carries the logical key.
func (c *Client) Append(a *hrpc.Mutate) (*hrpc.Result, error) {
	return c.mutate("Append", a, c.inner.Append)
}

// Increment increments on the salted key.
func (c *Client) Increment(i *hrpc.Mutate) (int64, error) {
	var n int64
	_, _, err := c.send("Increment", i, func(m *hrpc.Mutate) (*hrpc.Result, error) {
		var err error
		n, err = c.inner.Increment(m)
		return nil, err
	})
	return n, err
}

// CheckAndPut compares and writes on the salted key (the condition is on the Put's own row).
func (c *Client) CheckAndPut(p *hrpc.Mutate, family, qualifier string, expectedValue []byte) (bool, error) {
	var ok bool
	_, _, err := c.send("CheckAndPut", p, func(m *hrpc.Mutate) (*hrpc.Result, error) {
		var err error
		ok, err = c.inner.CheckAndPut(m, family, qualifier, expectedValue)
		return nil, err
	})
	return ok, err
}

func (c *Client) mutate(call string, m *hrpc.Mutate, send func(*hrpc.Mutate) (*hrpc.Result, error)) (*hrpc.Result, error) {
	r, phys, err := c.send(call, m, send)
	if err != nil {
		return nil, err
	}
	return r, logicalRows(r, call, string(m.Table()), phys, cloneKey(m.Key()))
}

// send rewrites m and sends it; errors are gohbase's where gohbase would have returned one.
func (c *Client) send(call string, m *hrpc.Mutate, send func(*hrpc.Mutate) (*hrpc.Result, error)) (*hrpc.Result, []byte, error) {
	if m == nil {
		return nil, nil, fmt.Errorf("dropin: %s: %w: nil request", call, backends.ErrInvalidArgument)
	}
	if err := c.begin(m.Context()); err != nil {
		return nil, nil, err
	}
	nm, phys, err := c.rewriteMutate(call, m)
	if err != nil {
		return nil, nil, c.asGohbase(m.Context(), err)
	}
	r, err := send(nm)
	if err != nil {
		return nil, nil, c.asGohbase(m.Context(), err)
	}
	return r, phys, nil
}

func cloneKey(k []byte) []byte { return append([]byte(nil), k...) }
