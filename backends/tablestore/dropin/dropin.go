package dropin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"unicode/utf8"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/salting"
)

// Sentinel errors a caller can branch on with errors.Is.
var (
	// ErrUnsupported is backends.ErrUnsupported: a request the drop-in cannot rewrite faithfully onto
	// salted keys. Nothing was sent.
	ErrUnsupported = backends.ErrUnsupported
	// ErrNoSpec: the table has no salting spec stored with it, no salter was given for it, and the
	// client was not told to use such tables unsalted (WithUnsalted).
	ErrNoSpec = salting.ErrNoSpec
	// ErrSpecMismatch: the salter given with WithSalter is not the spec stored with the table.
	ErrSpecMismatch = salting.ErrSpecMismatch
	// ErrIndexedTable: a write to a table with indexes, which only client.Table writes (it keeps
	// the index tables in step). Nothing was sent.
	ErrIndexedTable = indexproto.ErrIndexedTable
)

// Defaults of the GetRange fan-out.
const (
	DefaultScanConcurrency = 16
	DefaultPrefetch        = fanout.DefaultPrefetch
	// DefaultPageRows is the rows a GetRange without Limit returns: the service's own page cap.
	DefaultPageRows = 5000
	// bucketPageRows caps the rows one bucket request asks for, so that a bucket fetches little more
	// than the merge needs from it.
	bucketPageRows = 1000
	maxBatchGet    = 100 // rows per BatchGetRow (service limit)
	maxBatchWrite  = 200 // rows per BatchWriteRow (service limit)
)

// DefaultSpec is the salting spec CreateTable stores with a table no WithSalter names: 16 buckets
// whose prefix is one hex digit of md5 of the first key column (of the whole key on a one-column
// table), text that suits STRING and BINARY columns alike, and a range within one first-column value
// reads one bucket.
const DefaultSpec = "md5hex:1:sep=0x00"

var defaultSalter = func() salting.Salter {
	s, err := salting.ParseSpec(DefaultSpec)
	if err != nil {
		panic(err) // a constant spec: caught by every test
	}
	return s
}()

// Client is a salted *tablestore.TableStoreClient. It is safe for concurrent use.
type Client struct {
	sdk         *ots.TableStoreClient
	backend     *tablestore.Backend // table keys and stored specs
	salters     map[string]salting.Salter
	unsalted    bool
	concurrency int
	prefetch    int
	pageRows    int
	log         *slog.Logger

	mu     sync.Mutex
	tables map[string]*table
}

type config struct {
	salters     map[string]salting.Salter
	unsalted    bool
	backend     *tablestore.Backend
	concurrency int
	prefetch    int
	pageRows    int
	log         *slog.Logger
}

// Option configures a Client. The options of the HBase drop-in (backends/hbase/dropin) have the
// same names for the same ideas.
type Option func(*config)

// WithSalter makes table use s. When the table has a stored spec, it must be s's (else the table's
// calls fail with ErrSpecMismatch); a table without one (not created by brine) is salted with s, and
// CreateTable stores s with the table it creates.
func WithSalter(table string, s salting.Salter) Option {
	return func(c *config) { c.salters[table] = s }
}

// WithUnsalted makes tables without a stored spec and without WithSalter usable, unsalted (spec
// "none"), instead of failing with ErrNoSpec.
func WithUnsalted() Option { return func(c *config) { c.unsalted = true } }

// WithBackend gives the brine Tablestore driver, made by tablestore.New over the same instance, that
// the client reads table keys and stored specs through: to set its Options (MetaTable, where specs
// are stored; Schemas, the keys of multi-column tables brine did not create) or to share its caches.
// Without it, New makes one over sdk with default Options and the client's logger.
func WithBackend(b *tablestore.Backend) Option { return func(c *config) { c.backend = b } }

// WithScanConcurrency bounds how many bucket reads of one GetRange run at once (default 16);
// n <= 0 means no bound, as with client.WithScanConcurrency.
func WithScanConcurrency(n int) Option { return func(c *config) { c.concurrency = max(0, n) } }

// WithPrefetch bounds the rows buffered per bucket during a GetRange (default 256).
func WithPrefetch(n int) Option { return func(c *config) { c.prefetch = max(1, n) } }

// WithPageRows sets how many rows a GetRange without Limit returns (default 5000).
func WithPageRows(n int) Option { return func(c *config) { c.pageRows = max(1, n) } }

// WithLogger sets the logger for the client's debug lines (and its driver's, when New makes it);
// without it, nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// New wraps sdk, the caller's SDK client with its own endpoint, credentials and retry policy.
func New(sdk *ots.TableStoreClient, opts ...Option) *Client {
	cfg := config{salters: map[string]salting.Salter{}, concurrency: DefaultScanConcurrency,
		prefetch: DefaultPrefetch, pageRows: DefaultPageRows}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	if cfg.backend == nil {
		cfg.backend = tablestore.New(sdk, tablestore.Options{Logger: cfg.log})
	}
	return &Client{
		sdk: sdk, backend: cfg.backend, salters: cfg.salters, unsalted: cfg.unsalted,
		concurrency: cfg.concurrency, prefetch: cfg.prefetch, pageRows: cfg.pageRows, log: cfg.log,
		tables: map[string]*table{},
	}
}

// SDK returns the wrapped client, which reads and writes stored (salted) keys.
func (c *Client) SDK() *ots.TableStoreClient { return c.sdk }

// Forget drops what the client learned about table (key and salter), its driver's cached key
// included, e.g. after another client deleted it and created it again.
func (c *Client) Forget(table string) {
	c.mu.Lock()
	delete(c.tables, table)
	c.mu.Unlock()
	c.backend.Forget(table)
}

// Salter returns the salter the client uses for table.
func (c *Client) Salter(ctx context.Context, table string) (salting.Salter, error) {
	t, err := c.table(ctx, "Salter", table)
	if err != nil {
		return nil, err
	}
	return t.salter, nil
}

// table is what the client knows of one table.
type table struct {
	name   string
	salter salting.Salter
	layout *tablestore.KeyLayout
	cols   []tablestore.KeyColumn
	// version is, on a table with indexes (client.Table), the attribute column holding the
	// index protocol's version; "" on other tables. See indexed.go.
	version string
}

func (t *table) isKeyColumn(name string) bool {
	for _, c := range t.cols {
		if c.Name == name {
			return true
		}
	}
	return false
}

// table returns the table's key and salter, learned once: DescribeTable, then its row in the meta
// table.
func (c *Client) table(ctx context.Context, call, name string) (*table, error) {
	if name == "" {
		return nil, fmt.Errorf("dropin: %s: %w: empty table name", call, backends.ErrInvalidArgument)
	}
	c.mu.Lock()
	t := c.tables[name]
	c.mu.Unlock()
	if t != nil {
		return t, nil
	}
	meta, err := c.backend.TableMeta(ctx, name)
	if err != nil {
		return nil, sdkError(fmt.Sprintf("%s %q: table meta", call, name), err)
	}
	layout, err := c.backend.KeyLayout(ctx, name)
	if err != nil {
		return nil, sdkError(fmt.Sprintf("%s %q: table key", call, name), err)
	}
	s, err := c.resolveSalter(name, meta)
	if err != nil {
		return nil, fmt.Errorf("dropin: %s %q: %w", call, name, err)
	}
	t = &table{name: name, salter: s, layout: layout, cols: layout.Columns()}
	if err := t.checkSalt(); err != nil {
		return nil, fmt.Errorf("dropin: %s %q: %w", call, name, err)
	}
	if family, ok := indexproto.Indexed(meta); ok {
		if t.version, err = tablestore.ColumnName(family, indexproto.VersionQualifier); err != nil {
			return nil, fmt.Errorf("dropin: %s %q: version column: %w", call, name, err)
		}
	}
	c.mu.Lock()
	c.tables[name] = t
	c.mu.Unlock()
	c.log.DebugContext(ctx, "dropin: table learned", "table", name, "spec", s.Spec(),
		"primary_key", tablestore.FormatPrimaryKey(t.cols...), "indexed", t.version != "")
	return t, nil
}

// checkSalt refuses salters whose prefixes the first column cannot hold as the salt followed by the
// caller's value: on a variable first column, prefixes with 0x00 or 0xFF (the key encoding escapes
// them); in a STRING column, prefixes that are not UTF-8 (the service would refuse the key).
func (t *table) checkSalt() error {
	str := t.cols[0].Type == tablestore.KeyString
	if !t.layout.Variable() && !str {
		return nil
	}
	ranges, err := t.salter.BucketRanges(nil, nil)
	if err != nil {
		return nil // not a prefix salter: physicalPK refuses its keys on multi-column tables
	}
	for _, r := range ranges {
		switch {
		case t.layout.Variable() && (bytes.IndexByte(r.Start, 0x00) >= 0 || bytes.IndexByte(r.Start, 0xFF) >= 0):
			return fmt.Errorf("%w: salter %s writes binary prefixes, and column %s of key %s has no fixed width: use a text prefix (md5hex, digits=D) or declare the width",
				ErrUnsupported, t.salter.Spec(), t.cols[0].Name, tablestore.FormatPrimaryKey(t.cols...))
		case str && !utf8.Valid(r.Start):
			return fmt.Errorf("%w: salter %s writes prefixes that are not text, and column %s is STRING: use a text prefix (md5hex, digits=D)",
				ErrUnsupported, t.salter.Spec(), t.cols[0].Name)
		}
	}
	return nil
}

func (c *Client) resolveSalter(name string, meta map[string]string) (salting.Salter, error) {
	s, err := salting.Resolve(meta, c.salters[name], c.unsalted)
	if errors.Is(err, ErrNoSpec) {
		return nil, fmt.Errorf("%w (create it with brine, pass WithSalter, or use WithUnsalted)", err)
	}
	return s, err
}

// sdkError returns the SDK's *OtsError as is when err carries one, so that callers' type assertions
// keep working; other errors are wrapped with what failed.
func sdkError(what string, err error) error {
	var oe *ots.OtsError
	if errors.As(err, &oe) {
		return oe
	}
	return fmt.Errorf("dropin: %s: %w", what, err)
}

// forgetOnNotFound drops a table the service says is gone, so that a new one is learned afresh.
func (c *Client) forgetOnNotFound(table string, err error) {
	var oe *ots.OtsError
	if errors.As(err, &oe) && oe.Code == "OTSObjectNotExist" {
		c.Forget(table)
	}
}

// call runs one SDK call. The SDK dereferences response fields without checks; a panic there
// becomes an error instead of killing the program.
func call[T any](fn func() (T, error)) (res T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dropin: tablestore sdk: unexpected response: %v", p)
		}
	}()
	return fn()
}
