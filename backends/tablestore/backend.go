package tablestore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/wait"
)

// Backend is the Tablestore driver. It is safe for concurrent use.
type Backend struct {
	client    *ots.TableStoreClient
	transport *http.Transport // ours to close; nil when the client came from the caller
	opts      Options
	log       *slog.Logger
	closed    atomic.Bool

	mu        sync.Mutex
	schemas   map[string]*keySchema // per table, learned once
	metaReady bool                  // the meta table is known to exist
}

var (
	_ backends.Backend = (*Backend)(nil)
)

// Open connects to an instance. It makes one ListTable call, so that a wrong endpoint or bad
// credentials fail here rather than on first use.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	sdk := ots.NewDefaultTableStoreConfig()
	if cfg.ConnectTimeout > 0 {
		sdk.HTTPTimeout.ConnectionTimeout = cfg.ConnectTimeout
	}
	if cfg.RequestTimeout > 0 {
		sdk.HTTPTimeout.RequestTimeout = cfg.RequestTimeout
	}
	switch {
	case cfg.SDKRetryTimes < 0:
		sdk.RetryTimes = 0
	case cfg.SDKRetryTimes > 0:
		sdk.RetryTimes = uint(cfg.SDKRetryTimes)
	}
	if cfg.SDKRetryWindow > 0 {
		sdk.MaxRetryTime = cfg.SDKRetryWindow
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: sdk.HTTPTimeout.ConnectionTimeout}).DialContext,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	sdk.Transport = tr
	client := ots.NewClientWithConfig(cfg.Endpoint, cfg.Instance, cfg.AccessKeyID, cfg.AccessKeySecret, cfg.SecurityToken, sdk)
	b := newBackend(client, cfg.Options)
	b.transport = tr
	if _, err := sdkCall(ctx, b, func() (*ots.ListTableResponse, error) { return client.ListTable() }); err != nil {
		tr.CloseIdleConnections()
		return nil, mapError(fmt.Sprintf("open %s/%s", cfg.Endpoint, cfg.Instance), err, true)
	}
	b.log.DebugContext(ctx, "tablestore: opened", "config", cfg)
	return b, nil
}

// New wraps a client the caller built and configured, its retry policy included (see the package
// comment); Close leaves the client's connections alone.
func New(client *ots.TableStoreClient, opts Options) *Backend {
	return newBackend(client, opts)
}

func newBackend(client *ots.TableStoreClient, opts Options) *Backend {
	opts = opts.withDefaults()
	guardRetryJitter(client)
	return &Backend{client: client, opts: opts, log: opts.Logger, schemas: map[string]*keySchema{}}
}

// Client returns the SDK client, for what the driver contract does not cover.
func (b *Backend) Client() *ots.TableStoreClient { return b.client }

// Close releases idle connections (when Open made them); later calls fail with backends.ErrClosed.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	if b.transport != nil {
		b.transport.CloseIdleConnections()
	}
	return nil
}

// CreateTable creates the table with its primary key (opts.Meta[MetaPrimaryKey], default pk BINARY),
// no TTL, opts.MaxVersions versions (default Options.MaxVersions) and no reserved throughput, then stores opts.Meta in the meta
// table. Tablestore partitions tables by itself and this SDK cannot send split points, so
// opts.SplitKeys are recorded with the meta (see SplitKeys) but not applied.
func (b *Backend) CreateTable(ctx context.Context, table string, opts backends.TableOptions) error {
	if err := checkTableName(table); err != nil {
		return err
	}
	if len(table) > maxCreateNameLen {
		return fmt.Errorf("tablestore: table name %q: %w: the SDK creates tables of at most %d bytes", table, backends.ErrInvalidArgument, maxCreateNameLen)
	}
	if table == b.opts.MetaTable {
		return fmt.Errorf("tablestore: table %q: %w: reserved for brine's table metadata", table, backends.ErrInvalidArgument)
	}
	cols := []KeyColumn{{Name: defaultKeyColumn, Type: KeyBinary}}
	if spec, ok := opts.Meta[MetaPrimaryKey]; ok {
		var err error
		if cols, err = ParsePrimaryKey(spec); err != nil {
			return fmt.Errorf("create table %q: %w", table, err)
		}
	}
	schema, err := newKeySchema(cols)
	if err != nil {
		return fmt.Errorf("create table %q: %w", table, err)
	}
	metaRow, err := encodeMeta(opts)
	if err != nil {
		return fmt.Errorf("create table %q: %w", table, err)
	}
	for _, f := range opts.Families {
		if _, err := ColumnName(f, "x"); f == "" || err != nil {
			return fmt.Errorf("create table %q: family %q: %w: a family is a non-empty column-name prefix", table, f, backends.ErrInvalidArgument)
		}
	}
	schema.families = familySet(opts.Families)
	if err := b.ensureMetaTable(ctx); err != nil {
		return fmt.Errorf("create table %q: %w", table, err)
	}

	versions := b.opts.MaxVersions
	switch {
	case opts.MaxVersions < 0:
		return fmt.Errorf("create table %q: %w: negative MaxVersions", table, backends.ErrInvalidArgument)
	case opts.MaxVersions > 0:
		versions = opts.MaxVersions
	}
	req := &ots.CreateTableRequest{
		TableMeta:          &ots.TableMeta{TableName: table},
		TableOption:        &ots.TableOption{TimeToAlive: -1, MaxVersion: versions},
		ReservedThroughput: &ots.ReservedThroughput{},
	}
	if d := b.opts.MaxTimeDeviation; d > 0 {
		req.TableOption.DeviationCellVersionInSec = int64(d / time.Second)
	}
	for _, c := range cols {
		req.TableMeta.AddPrimaryKeyColumn(c.Name, pkType(c.Type))
	}
	if _, err := sdkCall(ctx, b, func() (*ots.CreateTableResponse, error) { return b.client.CreateTable(req) }); err != nil {
		return mapError(fmt.Sprintf("create table %q", table), err, false)
	}
	// The meta row goes in after the table: written first, it would have to be undone when the table
	// exists already, and a concurrent creator's row would be at stake.
	if err := b.putMeta(ctx, table, metaRow); err != nil {
		if _, derr := sdkCall(context.WithoutCancel(ctx), b, func() (*ots.DeleteTableResponse, error) {
			return b.client.DeleteTable(&ots.DeleteTableRequest{TableName: table})
		}); derr != nil {
			b.log.WarnContext(ctx, "tablestore: table created without its meta and not dropped", "table", table, "err", derr)
		}
		return fmt.Errorf("create table %q: store meta: %w", table, err)
	}
	b.setSchema(table, schema)
	b.waitReady(ctx, table, schema)
	b.log.DebugContext(ctx, "tablestore: table created", "table", table, "primary_key", FormatPrimaryKey(cols...),
		"split_keys_recorded", len(opts.SplitKeys))
	return nil
}

// waitReady reads one row of a new table until the service serves it: a table takes a moment to load
// after CreateTable, and the caller's first write should not be the one to find out. It gives up
// quietly; the SDK retries "not ready" errors as well.
func (b *Backend) waitReady(ctx context.Context, table string, s *keySchema) {
	vals := []pkVal{{v: make([]byte, max(s.cols[0].Width, 1))}}
	if s.cols[0].Type == KeyString {
		vals[0] = pkVal{v: "0"}
	}
	for _, c := range s.cols[1:] {
		switch c.Type {
		case KeyInteger:
			vals = append(vals, pkVal{v: int64(0)})
		case KeyString:
			vals = append(vals, pkVal{v: "0"})
		default:
			vals = append(vals, pkVal{v: []byte{0}})
		}
	}
	crit := &ots.SingleRowQueryCriteria{TableName: table, PrimaryKey: s.primaryKey(vals), MaxVersion: 1}
	const attempts = 10
	for n := 1; ; n++ {
		_, err := sdkCall(ctx, b, func() (*ots.GetRowResponse, error) {
			return b.client.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: crit})
		})
		code := otsCode(err)
		if err == nil || n >= attempts || !(retryableCode(code, true) || code == codeNotExist) {
			if err != nil {
				b.log.DebugContext(ctx, "tablestore: new table not confirmed ready", "table", table, "err", err)
			}
			return
		}
		if wait.Sleep(ctx, b.backoff(n+2)) != nil {
			return
		}
	}
}

func pkType(t KeyType) ots.PrimaryKeyType {
	switch t {
	case KeyInteger:
		return ots.PrimaryKeyType_INTEGER
	case KeyString:
		return ots.PrimaryKeyType_STRING
	}
	return ots.PrimaryKeyType_BINARY
}

// DeleteTable drops the table, then its meta row.
func (b *Backend) DeleteTable(ctx context.Context, table string) error {
	if err := checkTableName(table); err != nil {
		return err
	}
	if table == b.opts.MetaTable {
		return fmt.Errorf("tablestore: table %q: %w: reserved for brine's table metadata", table, backends.ErrInvalidArgument)
	}
	b.dropSchema(table)
	if _, err := sdkCall(ctx, b, func() (*ots.DeleteTableResponse, error) {
		return b.client.DeleteTable(&ots.DeleteTableRequest{TableName: table})
	}); err != nil {
		return mapError(fmt.Sprintf("delete table %q", table), err, false)
	}
	// A meta row left behind is harmless: TableMeta checks that the table exists and CreateTable
	// overwrites the row. So a failure here is logged, not returned for a table that is gone.
	if err := b.deleteMeta(ctx, table); err != nil {
		b.log.WarnContext(ctx, "tablestore: meta row of a dropped table not deleted", "table", table, "err", err)
	}
	return nil
}

// TableMeta returns the Meta stored by CreateTable; an empty map for a table brine did not create.
func (b *Backend) TableMeta(ctx context.Context, table string) (map[string]string, error) {
	m, _, err := b.tableMeta(ctx, table)
	return m, err
}

// Tables lists the instance's tables, sorted, without brine's metadata table.
func (b *Backend) Tables(ctx context.Context) ([]string, error) {
	resp, err := sdkCall(ctx, b, func() (*ots.ListTableResponse, error) { return b.client.ListTable() })
	if err != nil {
		return nil, mapError("list tables", err, true)
	}
	out := slices.DeleteFunc(slices.Clone(resp.TableNames), func(n string) bool { return n == b.opts.MetaTable })
	slices.Sort(out)
	return out, nil
}

// SplitKeys returns the split keys CreateTable was given. They are a record only: Tablestore splits
// partitions by itself.
func (b *Backend) SplitKeys(ctx context.Context, table string) ([][]byte, error) {
	_, splits, err := b.tableMeta(ctx, table)
	return splits, err
}

func (b *Backend) tableMeta(ctx context.Context, table string) (map[string]string, [][]byte, error) {
	if err := checkTableName(table); err != nil {
		return nil, nil, err
	}
	if _, err := b.describe(ctx, table); err != nil {
		return nil, nil, err
	}
	row, found, err := b.getMeta(ctx, table)
	if err != nil || !found {
		return map[string]string{}, nil, err
	}
	return row.Meta, row.SplitKeys, nil
}

// describe returns the table's primary key as the service reports it; ErrTableNotFound if it is not
// there.
func (b *Backend) describe(ctx context.Context, table string) ([]KeyColumn, error) {
	resp, err := sdkCall(ctx, b, func() (*ots.DescribeTableResponse, error) {
		return b.client.DescribeTable(&ots.DescribeTableRequest{TableName: table})
	})
	if err != nil {
		return nil, mapError(fmt.Sprintf("describe table %q", table), err, true)
	}
	var cols []KeyColumn
	if resp.TableMeta != nil {
		for _, e := range resp.TableMeta.SchemaEntry {
			if e == nil || e.Name == nil || e.Type == nil {
				continue
			}
			c := KeyColumn{Name: *e.Name}
			switch *e.Type {
			case ots.PrimaryKeyType_INTEGER:
				c.Type = KeyInteger
			case ots.PrimaryKeyType_STRING:
				c.Type = KeyString
			case ots.PrimaryKeyType_BINARY:
				c.Type = KeyBinary
			}
			if e.Option != nil && *e.Option == ots.AUTO_INCREMENT {
				c.Type = "AUTO_INCREMENT" // refused by newKeySchema: brine keys are given, not generated
			}
			cols = append(cols, c)
		}
	}
	return cols, nil
}

// schema returns the key schema of a table, learned once: the service gives column names and types,
// and for a multi-column key the first column's width comes from the stored meta or Options.Schemas
// (undeclared: variable).
func (b *Backend) schema(ctx context.Context, table string) (*keySchema, error) {
	if err := checkTableName(table); err != nil {
		return nil, err
	}
	b.mu.Lock()
	s := b.schemas[table]
	b.mu.Unlock()
	if s != nil {
		return s, nil
	}
	cols, err := b.describe(ctx, table)
	if err != nil {
		return nil, err
	}
	meta, _, err := b.getMeta(ctx, table)
	if err != nil {
		return nil, err
	}
	if len(cols) > 1 {
		declared, err := b.declaredKey(meta, table)
		if err != nil {
			return nil, err
		}
		if declared != nil && !sameColumns(declared, cols) {
			return nil, fmt.Errorf("tablestore: table %q has key %s, declared as %s: %w",
				table, FormatPrimaryKey(cols...), FormatPrimaryKey(declared...), backends.ErrInvalidArgument)
		}
		if declared != nil {
			cols = declared // else the first column is variable (Width 0)
		}
	}
	if s, err = newKeySchema(cols); err != nil {
		return nil, fmt.Errorf("table %q: %w", table, err)
	}
	s.families = familySet(meta.Families)
	b.setSchema(table, s)
	return s, nil
}

func (b *Backend) declaredKey(row metaRow, table string) ([]KeyColumn, error) {
	if cols, ok := b.opts.Schemas[table]; ok {
		return cols, nil
	}
	spec, ok := row.Meta[MetaPrimaryKey]
	if !ok {
		return nil, nil
	}
	return ParsePrimaryKey(spec)
}

func sameColumns(a, b []KeyColumn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Type != b[i].Type {
			return false
		}
	}
	return true
}

func (b *Backend) setSchema(table string, s *keySchema) {
	b.mu.Lock()
	b.schemas[table] = s
	b.mu.Unlock()
}

func (b *Backend) dropSchema(table string) {
	b.mu.Lock()
	delete(b.schemas, table)
	b.mu.Unlock()
}

// forgetOnNotFound drops the cached schema when the table turned out to be gone, so that a table
// recreated elsewhere is described again.
func (b *Backend) forgetOnNotFound(table string, err error) {
	if errors.Is(err, backends.ErrTableNotFound) {
		b.dropSchema(table)
	}
}
