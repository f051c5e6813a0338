package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/internal/telemetry"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// MetaSaltSpec is the table-meta key under which the salting spec is stored with a table.
const MetaSaltSpec = salting.MetaKey

// Defaults, chosen for a handful of region servers: enough parallelism to keep every bucket busy,
// batches small enough to stay far below every store's request limits.
const (
	DefaultConcurrency = 16
	DefaultBatchRows   = 500
	DefaultPrefetch    = fanout.DefaultPrefetch // one prefetch default for client, drop-ins and fanout
)

// Client opens salted tables on one backend. It is safe for concurrent use.
type Client struct {
	core   *route.Core // the store and the settings below, shared with every handle's router
	telCfg telemetry.Config
}

// Option configures a Client.
type Option func(*Client)

// WithLogger sets the logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.core.Logger = l } }

// WithConcurrency bounds the parallel work of one call that writes or reads in bulk: the batches of
// Apply and GetMany, the rows of an indexed batch, the buckets of CountByBucket and of an index
// check; it is also the default of ImportOptions.Workers and RebucketOptions.Workers. A Scan's
// bucket streams are bounded apart, by WithScanConcurrency: a bulk load's width is a throughput
// setting, a scan's is its time to first row.
func WithConcurrency(n int) Option { return func(c *Client) { c.core.Concurrency = max(1, n) } }

// WithScanConcurrency bounds the bucket streams one Scan reads at once; n <= 0, the default, means no
// bound: a scan opens every bucket it reads at once. Its first row needs every bucket's first row (the
// merge cannot yield before it has them), so a bound below the bucket count opens them in waves, each
// a full round trip, and the first row waits for the last wave. Memory stays bounded either way, by
// WithPrefetch rows per bucket. Bound it when a store limits the scanners open per client.
func WithScanConcurrency(n int) Option { return func(c *Client) { c.core.ScanConcurrency = max(0, n) } }

// WithBatchRows bounds the rows of one backend request in batched writes and reads; it is also the
// default of ImportOptions.BatchRows.
func WithBatchRows(n int) Option { return func(c *Client) { c.core.BatchRows = max(1, n) } }

// WithPrefetch bounds the rows buffered per bucket during a scan, which bounds a scan's memory
// (buckets × prefetch rows) however slow the consumer is.
func WithPrefetch(n int) Option { return func(c *Client) { c.core.Prefetch = max(1, n) } }

// New returns a Client over b. Closing the Client closes b.
func New(b backends.Backend, opts ...Option) *Client {
	c := &Client{core: &route.Core{
		Backend:      b,
		Logger:       slog.Default(),
		Concurrency:  DefaultConcurrency,
		BatchRows:    DefaultBatchRows,
		Prefetch:     DefaultPrefetch,
		RouteRefresh: DefaultRouteRefresh,
	}}
	for _, o := range opts {
		o(c)
	}
	var err error
	if c.core.Tel, err = route.NewTelemetry(c.telCfg); err != nil {
		c.core.Logger.Warn("brine: some metrics are off", "err", err)
	}
	return c
}

// Backend returns the driver below the client, for store-specific operations.
func (c *Client) Backend() backends.Backend { return c.core.Backend }

// Close closes the backend.
func (c *Client) Close() error { return c.core.Backend.Close() }

// TableConfig describes a table to create.
type TableConfig struct {
	// Salter places keys into buckets; required (use salting.ParseSpec("none") for an unsalted table).
	Salter salting.Salter
	// Families are the column families (HBase); default ["d"].
	Families []string
	// Regions is how many regions/partitions to pre-split into, aligned with bucket boundaries;
	// 0 means one region per bucket.
	Regions int
	// SplitKeys, when set, are the physical region boundaries to pre-split at instead of the salter's.
	SplitKeys [][]byte
	// Meta is stored with the table besides the salting spec; MetaSaltSpec is reserved.
	Meta map[string]string
	// KeySchema, when set, is stored with the table (MetaKeySchema; a Meta entry there must agree):
	// its keys print as the schema's typed values, which KeyRegexFilter then matches.
	KeySchema *keys.Schema
	// MaxVersions is how many versions of each column the table keeps; 0 means 1. Reads return the
	// newest unless they ask for more (MaxVersions, TimeRange).
	MaxVersions int
	// FamilyOptions are per-family settings (HBase: max versions, TTL, compression, block cache,
	// bloom filter), keyed by a name in Families; a family without an entry, or without its own
	// MaxVersions, keeps MaxVersions versions.
	FamilyOptions map[string]FamilyOptions
	// Indexes are kept in step with the table by every write (see the package documentation);
	// each has its own table, "<name>__ix_<index>", created with this one.
	Indexes []IndexConfig
}

// FamilyOptions are the settings of one column family; see backends.FamilyOptions.
type FamilyOptions = backends.FamilyOptions

// DefaultFamily is the column family created when TableConfig.Families is empty.
const DefaultFamily = "d"

// CreateTable creates a table pre-split at its salter's bucket boundaries and stores the salting spec
// with it, and, with cfg.Indexes, each index's table beside it: the handle keeps them in step.
func (c *Client) CreateTable(ctx context.Context, name string, cfg TableConfig) (*Table, error) {
	meta, err := c.createTable(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	t, err := c.keyedTable(ctx, name, cfg.Salter, meta)
	if err == nil {
		t, err = c.withView(t, meta)
	}
	if err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	return t, nil
}

// keyedTable is the handle of a table served under its own name (routedTable) with the key schema
// stored in its meta.
func (c *Client) keyedTable(ctx context.Context, name string, s salting.Salter, meta map[string]string) (*Table, error) {
	ks, err := metaKeySchema(meta)
	if err != nil {
		return nil, err
	}
	t, err := c.routedTable(name, s)
	if err != nil {
		return nil, err
	}
	t.setKeySchema(ks)
	return t, nil
}

// createTable creates the table, and its index tables, and returns the meta stored with it.
func (c *Client) createTable(ctx context.Context, name string, cfg TableConfig) (map[string]string, error) {
	if cfg.Salter == nil {
		return nil, fmt.Errorf("create table %q: %w: no salter configured", name, backends.ErrInvalidArgument)
	}
	families := cfg.Families
	if len(families) == 0 {
		families = []string{DefaultFamily}
	}
	if err := driverkit.CheckFamilyOptions(families, cfg.FamilyOptions); err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	if _, ok := cfg.Meta[MetaSaltSpec]; ok {
		return nil, fmt.Errorf("create table %q: %w: Meta key %q is reserved for the salting spec", name, backends.ErrInvalidArgument, MetaSaltSpec)
	}
	meta := maps.Clone(cfg.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[MetaSaltSpec] = cfg.Salter.Spec()
	if err := cfg.addLayout(meta, families); err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	ks, err := cfg.addKeySchema(meta)
	if err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	if err := salting.CheckSchema(cfg.Salter, ks); err != nil {
		return nil, fmt.Errorf("create table %q: %w: %w", name, backends.ErrInvalidArgument, err)
	}
	if err := checkIndexes(families, ks, cfg.Indexes); err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	if err := addIndexMeta(meta, families, cfg.Indexes); err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	opts := backends.TableOptions{
		Families:      families,
		SplitKeys:     cfg.SplitKeys,
		Meta:          meta,
		MaxVersions:   cfg.MaxVersions,
		FamilyOptions: cfg.FamilyOptions,
	}
	if opts.SplitKeys == nil {
		opts.SplitKeys = cfg.Salter.SplitKeys(cfg.Regions)
	}
	if err := c.core.Backend.CreateTable(ctx, name, opts); err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	c.core.Logger.DebugContext(ctx, "brine: table created", "table", name, "salt", cfg.Salter.Spec(),
		"splits", len(opts.SplitKeys))
	if err := c.createIndexTables(ctx, name, cfg.Indexes); err != nil {
		return nil, fmt.Errorf("create table %q: %w", name, err)
	}
	return meta, nil
}

// OpenTable opens an existing table. With no salter given it adopts the spec stored with the table;
// with one given, the stored spec must match, or OpenTable fails with ErrSpecMismatch before anything
// is read or written. A table created outside brine (no stored spec) is opened with the given salter
// (that is how tables written by Phoenix or OpenTSDB are read: phoenix:N, opentsdb:N) and refused with
// ErrNoSpec when none is given, as the drop-ins refuse it: its keys may carry a salt that reading it
// unsalted would return as data. Give spec "none" to read such a table unsalted.
//
// The handle keeps the indexes the table's meta declares (Table.Index), and those declared since,
// within the refresh interval (WithRouteRefresh): a caller never says how the table is stored.
func (c *Client) OpenTable(ctx context.Context, name string, s salting.Salter) (*Table, error) {
	t, _, err := c.openTable(ctx, name, s)
	return t, err
}

// openTable is OpenTable, with the table's meta.
func (c *Client) openTable(ctx context.Context, name string, s salting.Salter) (*Table, map[string]string, error) {
	t, meta, err := c.openRouted(ctx, name, s)
	if err != nil {
		return nil, nil, err
	}
	if t, err = c.withView(t, meta); err != nil {
		return nil, nil, fmt.Errorf("open table %q: %w", name, err)
	}
	return t, meta, nil
}

// openMeta reads a table's meta and resolves its salter against s, by OpenTable's rules.
func (c *Client) openMeta(ctx context.Context, name string, s salting.Salter) (map[string]string, salting.Salter, error) {
	meta, err := c.core.Backend.TableMeta(ctx, name)
	if err != nil {
		return nil, nil, fmt.Errorf("open table %q: %w", name, err)
	}
	s, err = salting.Resolve(meta, s, false)
	if errors.Is(err, ErrNoSpec) {
		return nil, nil, fmt.Errorf("open table %q: %w (pass a salter; spec \"none\" reads it unsalted)", name, err)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open table %q: %w", name, err)
	}
	return meta, s, nil
}

// CreateOrOpenTable creates the table as CreateTable does, or, when it exists, opens it as OpenTable
// does with cfg.Salter: the stored spec must match (ErrSpecMismatch), and so must the key schema and
// the families (ErrSchemaMismatch, naming what differs), and, when cfg declares indexes, the table's
// (ErrIndexMismatch; a cfg without indexes takes the table's as they are, added by AddIndex or not).
// It is what a program that runs more than once calls at start-up.
func (c *Client) CreateOrOpenTable(ctx context.Context, name string, cfg TableConfig) (*Table, error) {
	t, err := c.CreateTable(ctx, name, cfg)
	if !errors.Is(err, ErrTableExists) {
		return t, err
	}
	t, meta, err := c.openTable(ctx, name, cfg.Salter)
	if err != nil {
		return nil, err
	}
	if err := checkDeclared(name, cfg, meta); err != nil {
		return nil, err
	}
	if len(cfg.Indexes) > 0 {
		if err := matchIndexes(name, t.view.cur.Load(), cfg.Indexes); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Tables returns the names of the store's tables, sorted, as Bigtable's AdminClient.Tables does:
// every table the store holds (on a shared server, other programs' too), not only brine's.
func (c *Client) Tables(ctx context.Context) ([]string, error) {
	names, err := c.core.Backend.Tables(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return names, nil
}

// DeleteTable deletes a table and its data, with its index tables. The table of an index is
// refused: DropIndex drops it with its index.
func (c *Client) DeleteTable(ctx context.Context, name string) error {
	// An index's table goes with its index: deleted alone, every write of the main table would fail.
	if table, index, err := c.IndexTableOf(ctx, name); err != nil || index != "" {
		return fmt.Errorf("delete table %q: %w", name, cmp.Or(err,
			fmt.Errorf("%w: it is the table of index %q of %s: drop the index instead", backends.ErrInvalidArgument, index, table)))
	}
	if err := c.deleteIndexTables(ctx, name); err != nil {
		return fmt.Errorf("delete table %q: %w", name, err)
	}
	if done, err := route.DeleteRebucketed(ctx, c.core.Backend, name); done || err != nil {
		return err
	}
	if err := c.core.Backend.DeleteTable(ctx, name); err != nil {
		return fmt.Errorf("delete table %q: %w", name, err)
	}
	return nil
}
