package dropin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/salting"
)

// Sentinel errors a caller can branch on with errors.Is.
var (
	// ErrUnsupported is backends.ErrUnsupported: a call the wrapper cannot rewrite faithfully onto
	// salted keys (an option it cannot carry over, a filter on row keys, ...). Nothing was sent.
	ErrUnsupported = backends.ErrUnsupported
	// ErrNoSpec: the table has no salting spec stored with it (it was not created by brine), no
	// salter was given for it (WithSalter), and the client was not told to use such tables unsalted
	// (WithUnsalted).
	ErrNoSpec = salting.ErrNoSpec
	// ErrSpecMismatch: the salter given with WithSalter is not the spec stored with the table.
	ErrSpecMismatch = salting.ErrSpecMismatch
	// ErrIndexedTable: a write to a table with indexes, which only client.Table writes (it keeps
	// the index tables in step). Nothing was sent.
	ErrIndexedTable = indexproto.ErrIndexedTable
)

// Defaults of the scan fan-out.
const (
	DefaultScanConcurrency = 16
	DefaultPrefetch        = fanout.DefaultPrefetch
)

// systemNamespace is the prefix of the names of HBase's own tables.
const systemNamespace = "hbase:"

// tableMeta is where stored specs are read: the driver's TableMeta.
type tableMeta interface {
	TableMeta(ctx context.Context, table string) (map[string]string, error)
}

// Client is a salted gohbase.Client. It is safe for concurrent use.
type Client struct {
	// inner, backend, meta and close are set by New, or by connect on a NewClient client's first
	// call (under mu, before lazy.done is set): a call reads them only after begin returned nil.
	inner       gohbase.Client
	backend     *hbase.Backend // reversed scans; nil without WithBackend
	meta        tableMeta      // stored specs; nil without WithBackend
	close       func()
	lazy        *lazy // NewClient's connection on first use; nil for New and Open
	salters     map[string]salting.Salter
	unsalted    bool
	concurrency int
	prefetch    int
	log         *slog.Logger
	closed      atomic.Bool

	mu    sync.Mutex
	cache map[string]tableInfo // tables resolved so far
}

// tableInfo is what the client learned of a table, once.
type tableInfo struct {
	salter salting.Salter
	// indexed: the stored meta declares indexes (client.Table): writes are refused and reads
	// hide the version column, client.IndexVersionQualifier in family versionFamily.
	indexed       bool
	versionFamily string
}

var _ gohbase.Client = (*Client)(nil)

type config struct {
	salters     map[string]salting.Salter
	unsalted    bool
	backend     *hbase.Backend
	concurrency int
	prefetch    int
	log         *slog.Logger
}

// Option configures a Client. The options of the Tablestore drop-in (backends/tablestore/dropin)
// have the same names for the same ideas.
type Option func(*config)

// WithSalter makes table use s. When the table has a stored spec (read through WithBackend), it must
// be s's, else the table's calls fail with ErrSpecMismatch; a table without one is salted with s.
func WithSalter(table string, s salting.Salter) Option {
	return func(c *config) { c.salters[table] = s }
}

// WithUnsalted makes tables without a stored spec and without WithSalter usable, unsalted (spec
// "none"), instead of failing with ErrNoSpec: tables brine did not create. Their requests go to the
// server as built, filters and all. (HBase's own tables, hbase:meta and the rest of the hbase:
// namespace, always do, with or without this option.)
func WithUnsalted() Option { return func(c *config) { c.unsalted = true } }

// WithBackend gives the brine HBase driver, connected to the same cluster, that the client reads the
// specs stored with the tables through, and reads reversed scans with. Without it, a table's salter
// is WithSalter's (or none, with WithUnsalted) and a reversed Scan fails with ErrUnsupported.
func WithBackend(b *hbase.Backend) Option { return func(c *config) { c.backend = b } }

// WithScanConcurrency bounds how many bucket scanners of one Scan read at once (default 16);
// n <= 0 means no bound, as with client.WithScanConcurrency.
func WithScanConcurrency(n int) Option { return func(c *config) { c.concurrency = max(0, n) } }

// WithPrefetch bounds the rows buffered per bucket during a Scan (default 256), so a scan's memory is
// at most buckets × prefetch rows however slow its reader.
func WithPrefetch(n int) Option { return func(c *config) { c.prefetch = max(1, n) } }

// WithLogger sets the logger for the client's debug lines; without it, nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// New wraps inner, the caller's gohbase client (normally gohbase.NewClient's), which must not be nil.
// Close closes inner, as inner's own Close would: the client replaces it.
func New(inner gohbase.Client, opts ...Option) *Client {
	if inner == nil {
		panic("dropin: New: nil gohbase client")
	}
	c := newClient(opts)
	c.inner, c.close = inner, inner.Close
	return c
}

// newClient is a Client of opts with nothing to send through yet: New gives it inner, NewClient a
// lazy connection.
func newClient(opts []Option) *Client {
	cfg := config{salters: map[string]salting.Salter{}, concurrency: DefaultScanConcurrency, prefetch: DefaultPrefetch}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		salters: cfg.salters, unsalted: cfg.unsalted, backend: cfg.backend,
		concurrency: cfg.concurrency, prefetch: cfg.prefetch, log: cfg.log,
		cache: map[string]tableInfo{},
	}
	if cfg.backend != nil {
		c.meta = cfg.backend
	}
	return c
}

// Open connects to the cluster of cfg (see hbase.Open) and returns a salted client over it, with the
// driver it opened as its WithBackend: tables' salters are the specs stored with them. Close closes
// the connection.
func Open(ctx context.Context, cfg hbase.Config, opts ...Option) (*Client, error) {
	b, err := hbase.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("dropin: %w", err)
	}
	c := New(b.Client(), append(opts, WithBackend(b))...)
	c.close = func() { _ = b.Close() }
	return c, nil
}

// Close closes what the constructor said it would. Calling it again does nothing.
func (c *Client) Close() {
	if c.closed.Swap(true) {
		return
	}
	c.mu.Lock()
	closeFn := c.close // a NewClient client connecting now closes what it made itself (connect)
	c.mu.Unlock()
	if closeFn != nil {
		closeFn()
	}
}

// Forget drops what the client learned of table (salter, indexes), e.g. after it was deleted and
// created again.
func (c *Client) Forget(table string) {
	c.mu.Lock()
	delete(c.cache, table)
	c.mu.Unlock()
}

// Salter returns the salter the client uses for table: WithSalter's, checked against the spec stored
// with the table; else the stored spec; else none under WithUnsalted. A table of HBase's own hbase:
// namespace has spec "none" as if stored with it. It is resolved once per table.
func (c *Client) Salter(ctx context.Context, table string) (salting.Salter, error) {
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	t, err := c.table(ctx, table)
	return t.salter, err
}

// table resolves table's salter and whether it has indexes from its stored meta, once. Without
// WithBackend there is no stored meta, so tables with indexes are not recognised.
func (c *Client) table(ctx context.Context, table string) (tableInfo, error) {
	if table == "" {
		return tableInfo{}, fmt.Errorf("dropin: %w: empty table name", backends.ErrInvalidArgument)
	}
	c.mu.Lock()
	t, ok := c.cache[table]
	c.mu.Unlock()
	if ok {
		return t, nil
	}
	var meta map[string]string
	if strings.HasPrefix(table, systemNamespace) {
		// HBase's own tables (hbase:meta, hbase:namespace, ...) are never salted: their spec is
		// "none" as if stored with them, so they pass through with no option, and a WithSalter of
		// another spec for one fails with ErrSpecMismatch.
		meta = map[string]string{salting.MetaKey: "none"}
	} else if c.meta != nil {
		var err error
		if meta, err = c.meta.TableMeta(ctx, table); err != nil {
			return tableInfo{}, fmt.Errorf("dropin: salter of %q: %w", table, err)
		}
	}
	s, err := salting.Resolve(meta, c.salters[table], c.unsalted)
	if errors.Is(err, ErrNoSpec) {
		return tableInfo{}, fmt.Errorf("dropin: table %q: %w (create it with brine, pass WithSalter, or use WithUnsalted)", table, err)
	}
	if err != nil {
		return tableInfo{}, fmt.Errorf("dropin: table %q: %w", table, err)
	}
	t = tableInfo{salter: s}
	t.versionFamily, t.indexed = indexproto.Indexed(meta)
	c.mu.Lock()
	c.cache[table] = t
	c.mu.Unlock()
	c.log.DebugContext(ctx, "dropin: salter adopted", "table", table, "spec", s.Spec(), "indexed", t.indexed)
	return t, nil
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
	plan, err := c.rewriteGet(g)
	if err != nil {
		return nil, c.asGohbase(g.Context(), err)
	}
	r, err := c.inner.Get(plan.get)
	if err != nil {
		return nil, c.asGohbase(g.Context(), err)
	}
	if err := logicalRows(r, "Get", string(g.Table()), plan.phys, cloneKey(g.Key())); err != nil {
		return r, err
	}
	if plan.hide && r != nil {
		r.Cells = plan.t.visible(r.Cells)
	}
	if plan.exists && r != nil {
		r.Exists, r.Cells = proto.Bool(len(r.Cells) > 0), nil
	}
	return r, nil
}

// Put writes a row on its salted key.
// (The calls to inner are closures, not method values: inner is nil until a NewClient client's
// first call has connected, inside mutate.)
func (c *Client) Put(p *hrpc.Mutate) (*hrpc.Result, error) {
	return c.mutate("Put", p, func(m *hrpc.Mutate) (*hrpc.Result, error) { return c.inner.Put(m) })
}

// Delete deletes on the salted key.
func (c *Client) Delete(d *hrpc.Mutate) (*hrpc.Result, error) {
	return c.mutate("Delete", d, func(m *hrpc.Mutate) (*hrpc.Result, error) { return c.inner.Delete(m) })
}

// Append appends on the salted key; the result carries the logical key.
func (c *Client) Append(a *hrpc.Mutate) (*hrpc.Result, error) {
	return c.mutate("Append", a, func(m *hrpc.Mutate) (*hrpc.Result, error) { return c.inner.Append(m) })
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
