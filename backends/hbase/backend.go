package hbase

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// Backend is the HBase driver. It is safe for concurrent use.
type Backend struct {
	cur      atomic.Pointer[conn] // the data client; replaced when stuck (refresh.go)
	refresh  refresher
	admin    gohbase.AdminClient
	adminRPC gohbase.RPCClient // admin, for the calls built in this package
	owned    bool              // Close closes the clients (Open made them)
	opts     Options
	log      *slog.Logger
	closed   atomic.Bool

	mu      sync.Mutex
	regions map[string][]regionSpan // per table, for routing reverse scans; refreshed when stale

	syncFamilies sync.Map // table → the family of its conditional batches' WAL sync barriers (condsync.go)

	bulkHooks bulkHooks // tests only
}

var (
	_ backends.Backend      = (*Backend)(nil)
	_ backends.RegionLister = (*Backend)(nil)
	_ backends.BulkImporter = (*Backend)(nil)
)

// Open connects to the cluster whose ZooKeeper quorum is cfg.ZKQuorum. It asks the master for its
// table list once, so that a wrong quorum fails here (within ctx, or Config.OpenTimeout when ctx has
// no deadline) rather than on first use.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		timeout := cfg.OpenTimeout
		if timeout == 0 {
			timeout = 30 * time.Second
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if err := CheckCluster(ctx, cfg.ZKQuorum, cfg.zkRoot()); err != nil {
		return nil, err
	}
	data, err := cfg.dataConn()
	if err != nil {
		return nil, err
	}
	admin := gohbase.NewAdminClient(cfg.ZKQuorum, cfg.clientOptions(cfg.RegionDialer)...)
	b, err := New(data.client, admin, cfg.Options)
	if err != nil {
		data.closeClient()
		return nil, err
	}
	b.owned = true
	b.cur.Store(data) // the same client as New's conn, with its gate
	if b.opts.RefreshAfter > 0 {
		b.refresh.dial = cfg.dataConn
		b.watchStalls()
	}
	list, err := hrpc.NewListTableNames(ctx)
	if err == nil {
		_, err = admin.ListTableNames(list)
	}
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("hbase: open %s: %w", cfg.ZKQuorum, err)
	}
	b.log.DebugContext(ctx, "hbase: opened", "zk", cfg.ZKQuorum)
	return b, nil
}

// New wraps clients the caller made, e.g. to share them with code that uses gohbase directly. Both
// must be gohbase's own (they implement gohbase.RPCClient, which the driver needs for the RPCs gohbase
// has no helper for). Close leaves them open: they are the caller's.
func New(client gohbase.Client, admin gohbase.AdminClient, opts Options) (*Backend, error) {
	if client == nil || admin == nil {
		return nil, fmt.Errorf("hbase: %w: nil client", backends.ErrInvalidArgument)
	}
	cn, err := newConn(client)
	if err != nil {
		return nil, err
	}
	adminRPC, ok := admin.(gohbase.RPCClient)
	if !ok {
		return nil, errNoRPC
	}
	opts = opts.withDefaults()
	b := &Backend{
		admin: admin, adminRPC: adminRPC,
		opts: opts, log: opts.Logger, regions: map[string][]regionSpan{},
	}
	b.cur.Store(cn)
	b.refresh.after, b.refresh.now, b.refresh.last = opts.RefreshAfter, time.Now, time.Now()
	return b, nil
}

// Client returns the gohbase client the driver uses now (a Backend made by Open replaces it when it
// is stuck: Options.RefreshAfter).
func (b *Backend) Client() gohbase.Client { return b.cur.Load().client }

// AdminClient returns the gohbase admin client the driver uses.
func (b *Backend) AdminClient() gohbase.AdminClient { return b.admin }

// Close releases the data client if Open made it. The admin client's connection to the master stays
// open: this gohbase's admin client cannot be closed (its Close panics on a nil channel). Calling Close
// again does nothing.
func (b *Backend) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	b.stopStalls()
	if !b.owned {
		return nil
	}
	b.closeAll()
	return nil
}

// CreateTable creates table with opts.Families (at least one; each keeps opts.MaxVersions versions,
// one by default, unless its FamilyOptions say otherwise), pre-split at opts.SplitKeys, and opts.Meta
// stored in the table descriptor. It returns when the table's regions are assigned.
func (b *Backend) CreateTable(ctx context.Context, table string, opts backends.TableOptions) error {
	if err := checkTable(table); err != nil {
		return err
	}
	if len(opts.Families) == 0 {
		return fmt.Errorf("hbase: create %q: %w: HBase needs at least one column family", table, backends.ErrInvalidArgument)
	}
	if opts.MaxVersions < 0 {
		return fmt.Errorf("hbase: create %q: %w: negative MaxVersions", table, backends.ErrInvalidArgument)
	}
	if err := driverkit.CheckFamilyOptions(opts.Families, opts.FamilyOptions); err != nil {
		return fmt.Errorf("hbase: create %q: %w", table, err)
	}
	fams := make(map[string]map[string]string, len(opts.Families))
	for _, f := range opts.Families {
		if err := checkFamily(f); err != nil {
			return err
		}
		fo := opts.FamilyOptions[f]
		if fo.MaxVersions == 0 {
			fo.MaxVersions = driverkit.Versions(opts.MaxVersions)
		}
		fams[f] = familyAttributes(fo)
	}
	for i, k := range opts.SplitKeys {
		if err := checkKey(k); err != nil {
			return fmt.Errorf("hbase: create %q: split key %d: %w", table, i, err)
		}
		if i > 0 && bytes.Compare(opts.SplitKeys[i-1], k) >= 0 {
			return fmt.Errorf("hbase: create %q: %w: split keys not strictly ascending at %d", table, backends.ErrInvalidArgument, i)
		}
	}
	attrs, err := metaAttributes(opts.Meta)
	if err != nil {
		return err
	}
	attrs = append(attrs, newMetaID())

	call := &createTableCall{
		CreateTable: hrpc.NewCreateTable(ctx, []byte(table), fams, hrpc.SplitKeys(opts.SplitKeys)),
		attrs:       attrs,
	}
	msg, err := b.adminRPC.SendRPC(call)
	if err != nil {
		return wrapErr("create", table, err)
	}
	resp, ok := msg.(*pb.CreateTableResponse)
	if !ok {
		return fmt.Errorf("hbase: create %q: unexpected response %T", table, msg)
	}
	if err := b.waitProcedure(ctx, resp.GetProcId()); err != nil {
		return wrapErr("create", table, err)
	}
	b.forgetRegions(table)
	b.syncFamilies.Delete(table)
	return nil
}

// DeleteTable disables and deletes table.
func (b *Backend) DeleteTable(ctx context.Context, table string) error {
	if err := checkTable(table); err != nil {
		return err
	}
	defer b.forgetRegions(table)
	defer b.syncFamilies.Delete(table)
	// Sent as brine's own master calls, since gohbase's name every table in the default namespace.
	err := b.masterProcedure(ctx, "DisableTable", &pb.DisableTableRequest{TableName: tableName(table)},
		func() proto.Message { return &pb.DisableTableResponse{} })
	if err != nil && classify(err) != kindNotEnabled {
		return wrapErr("disable", table, err)
	}
	err = b.masterProcedure(ctx, "DeleteTable", &pb.DeleteTableRequest{TableName: tableName(table)},
		func() proto.Message { return &pb.DeleteTableResponse{} })
	if err == nil {
		b.forgetMetaRow(ctx, table)
	}
	return wrapErr("delete", table, err)
}

// masterProcedure sends a master RPC whose response carries a procedure id, and waits for that
// procedure to finish.
func (b *Backend) masterProcedure(ctx context.Context, name string, req proto.Message, newResp func() proto.Message) error {
	msg, err := b.adminRPC.SendRPC(newMasterCall(ctx, name, req, newResp))
	if err != nil {
		return err
	}
	p, ok := msg.(interface{ GetProcId() uint64 })
	if !ok {
		return fmt.Errorf("%s: unexpected response %T", name, msg)
	}
	return b.waitProcedure(ctx, p.GetProcId())
}

// Tables lists the tables of the default namespace (the only one brine names), sorted, without the
// driver's own MetaTable.
func (b *Backend) Tables(ctx context.Context) ([]string, error) {
	req, err := hrpc.NewListTableNames(ctx, hrpc.ListNamespace("default"))
	if err != nil {
		return nil, fmt.Errorf("hbase: tables: %w", err)
	}
	names, err := b.admin.ListTableNames(req)
	if err != nil {
		return nil, wrapErr("tables", "default", err)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if ns := string(n.GetNamespace()); (ns == "" || ns == "default") && string(n.GetQualifier()) != MetaTable {
			out = append(out, string(n.GetQualifier()))
		}
	}
	slices.Sort(out)
	return out, nil
}

// TableMeta returns the Meta that CreateTable stored in table's descriptor (an empty map if none),
// or the one RewriteTableMeta stored since (metacas.go).
func (b *Backend) TableMeta(ctx context.Context, table string) (map[string]string, error) {
	s, err := b.descriptor(ctx, table)
	if err != nil {
		return nil, err
	}
	m, _, err := b.currentMeta(ctx, table, s)
	return m, err
}

// descriptor fetches table's descriptor from the master.
func (b *Backend) descriptor(ctx context.Context, table string) (*pb.TableSchema, error) {
	if err := checkTable(table); err != nil {
		return nil, err
	}
	req := &pb.GetTableDescriptorsRequest{
		TableNames: []*pb.TableName{tableName(table)},
	}
	msg, err := b.adminRPC.SendRPC(newMasterCall(ctx, "GetTableDescriptors", req,
		func() proto.Message { return &pb.GetTableDescriptorsResponse{} }))
	if err != nil {
		return nil, wrapErr("table meta", table, err)
	}
	resp, ok := msg.(*pb.GetTableDescriptorsResponse)
	if !ok {
		return nil, fmt.Errorf("hbase: table meta %q: unexpected response %T", table, msg)
	}
	for _, s := range resp.GetTableSchema() {
		if sameTable(s.GetTableName(), table) {
			return s, nil
		}
	}
	return nil, wrapErr("table meta", table, gohbase.TableNotFound)
}

// waitProcedure polls the master until procedure id finishes, as gohbase's admin client does for the
// calls it sends itself.
func (b *Backend) waitProcedure(ctx context.Context, id uint64) error {
	backoff := 20 * time.Millisecond
	for {
		msg, err := b.adminRPC.SendRPC(hrpc.NewGetProcedureState(ctx, id))
		if err != nil {
			return err
		}
		res, ok := msg.(*pb.GetProcedureResultResponse)
		if !ok {
			return fmt.Errorf("procedure %d: unexpected response %T", id, msg)
		}
		switch res.GetState() {
		case pb.GetProcedureResultResponse_NOT_FOUND:
			return fmt.Errorf("procedure %d not found", id)
		case pb.GetProcedureResultResponse_FINISHED:
			if e := res.GetException(); e != nil {
				ge := e.GetGenericException()
				// Same text as gohbase's, so that classify reads the class name the same way.
				return fmt.Errorf("procedure exception: %s: %s", ge.GetClassName(), ge.GetMessage())
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// Regions returns the start keys of table's online regions, read from hbase:meta.
func (b *Backend) Regions(ctx context.Context, table string) ([][]byte, error) {
	spans, err := b.spans(ctx, table, true)
	if err != nil {
		return nil, err
	}
	starts := make([][]byte, len(spans))
	for i, s := range spans {
		starts[i] = s.Start
	}
	return starts, nil
}

// spans returns table's regions, from the cache unless refresh is set or the cache has none.
func (b *Backend) spans(ctx context.Context, table string, refresh bool) ([]regionSpan, error) {
	if !refresh {
		b.mu.Lock()
		s, ok := b.regions[table]
		b.mu.Unlock()
		if ok {
			return s, nil
		}
	}
	s, err := b.readRegions(ctx, table)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.regions[table] = s
	b.mu.Unlock()
	return s, nil
}

func (b *Backend) forgetRegions(table string) {
	b.mu.Lock()
	delete(b.regions, table)
	b.mu.Unlock()
}

// readRegions scans hbase:meta for table's online regions, in key order.
func (b *Backend) readRegions(ctx context.Context, table string) ([]regionSpan, error) {
	return b.metaRegions(ctx, table, false)
}
