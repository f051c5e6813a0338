package hbase

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"reflect"
	"time"

	"github.com/tsuna/gohbase"

	"github.com/brine-kv/brine/backends"
)

// Config says how to reach a cluster.
type Config struct {
	// ZKQuorum is the ZooKeeper quorum, "host:port[,host:port...]". Required.
	ZKQuorum string
	// ZKRoot is HBase's znode parent; empty means "/hbase".
	ZKRoot string
	// ZKTimeout is the ZooKeeper session timeout; 0 means gohbase's default (30 s).
	ZKTimeout time.Duration
	// RegionLookupTimeout bounds one lookup of a region in hbase:meta; 0 means gohbase's default (30 s).
	RegionLookupTimeout time.Duration
	// RegionReadTimeout bounds the wait for a region server's reply; 0 means gohbase's default (30 s).
	RegionReadTimeout time.Duration
	// EffectiveUser is the user HBase sees; empty means gohbase's default ("root").
	EffectiveUser string
	// OpenTimeout bounds Open's round trip to the master when ctx has no deadline; 0 means 30 s.
	OpenTimeout time.Duration
	// ClientOptions are gohbase options applied after the Config's own to every gohbase client Open
	// makes (the data client, the admin client, and data clients made to replace a stuck one), so
	// that a setting the Config has no field for (gohbase.RpcQueueSize, gohbase.CompressionCodec)
	// can be given, and so that gohbase.NewClient's options mean the same here (dropin.NewClient).
	// Applied last, they win over the fields above; a gohbase.ZookeeperRoot among them is also the
	// znode parent Open's cluster check reads.
	ClientOptions []gohbase.Option
	// GohbaseLogger receives gohbase's own lines (it logs through log/slog: every region it learns of at
	// info level, each failed lookup while a region moves at error level); nil means Options.Logger,
	// or slog.Default() when that is nil too. A command-line tool passes a quiet one unless asked.
	GohbaseLogger *slog.Logger
	// RegionDialer connects the gohbase clients to the cluster's servers (through a proxy, a
	// tunnel); nil means a net.Dialer. Open wraps it for the data clients so that closing one waits
	// for its dials (dialgate.go says why). A gohbase.RegionDialer among ClientOptions replaces it,
	// and that wrapping with it.
	RegionDialer func(ctx context.Context, network, addr string) (net.Conn, error)

	Options
}

// Options tune a Backend, whether it made its own clients (Open) or got them (New).
type Options struct {
	// Concurrency is how many Gets, Mutates or Multi calls one Read or Apply keeps in flight; 0 means 64.
	Concurrency int
	// ScanBatch is the default rows per scan RPC when ScanOptions.BatchSize is 0; 0 means 256.
	ScanBatch int
	// FlushInterval is how long gohbase waits to fill a MultiRequest (Open only: a client passed to
	// New keeps its own setting). 0 sends as soon as no more calls are queued.
	FlushInterval time.Duration
	// RequestTimeout, when > 0, bounds each RPC (each Get, Mutate, Multi call of Apply, or scan step); running out is
	// reported as a retryable error, unlike the caller's ctx running out. gohbase itself retries a
	// region that is moving or opening until its context ends, so without this a call can wait for
	// as long as the caller's ctx allows.
	RequestTimeout time.Duration
	// RefreshAfter: a Backend made by Open replaces its gohbase client when a request has been in
	// flight this long, or requests have kept failing as retryable this long (refresh.go says why:
	// the pinned gohbase's reconnect backoff grows to tens of seconds while a server is away). 0
	// means 10 s; negative turns it off. A client passed to New is never replaced.
	RefreshAfter time.Duration
	// Logger receives the driver's own debug and warning lines (and gohbase's, from a Backend made by
	// Open, unless Config.GohbaseLogger is set); nil means slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Concurrency <= 0 {
		o.Concurrency = 64
	}
	if o.ScanBatch <= 0 {
		o.ScanBatch = 256
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.RefreshAfter == 0 {
		o.RefreshAfter = 10 * time.Second
	}
	return o
}

func (c Config) validate() error {
	if c.ZKQuorum == "" {
		return fmt.Errorf("hbase: %w: Config.ZKQuorum is empty", backends.ErrInvalidArgument)
	}
	if c.ZKTimeout < 0 || c.RegionLookupTimeout < 0 || c.RegionReadTimeout < 0 || c.OpenTimeout < 0 ||
		c.FlushInterval < 0 || c.RequestTimeout < 0 {
		return fmt.Errorf("hbase: %w: negative duration in Config", backends.ErrInvalidArgument)
	}
	return nil
}

// clientOptions turns the Config into gohbase options, shared by the data and the admin client;
// dial, when set, connects the client to the servers (a data client's gate, or RegionDialer).
func (c Config) clientOptions(dial func(ctx context.Context, network, addr string) (net.Conn, error)) []gohbase.Option {
	opts := []gohbase.Option{FlushInterval(c.FlushInterval)}
	if dial != nil {
		opts = append(opts, gohbase.RegionDialer(dial))
	}
	if l := cmp.Or(c.GohbaseLogger, c.Logger); l != nil {
		opts = append(opts, gohbase.Logger(l))
	}
	if c.ZKRoot != "" {
		opts = append(opts, gohbase.ZookeeperRoot(c.ZKRoot))
	}
	if c.ZKTimeout > 0 {
		opts = append(opts, gohbase.ZookeeperTimeout(c.ZKTimeout))
	}
	if c.RegionLookupTimeout > 0 {
		opts = append(opts, gohbase.RegionLookupTimeout(c.RegionLookupTimeout))
	}
	if c.RegionReadTimeout > 0 {
		opts = append(opts, gohbase.RegionReadTimeout(c.RegionReadTimeout))
	}
	if c.EffectiveUser != "" {
		opts = append(opts, gohbase.EffectiveUser(c.EffectiveUser))
	}
	return append(opts, c.ClientOptions...)
}

// dataConn is a new data client of Open's, dialling through a gate of its own (dialgate.go).
func (c Config) dataConn() (*conn, error) {
	gate := newDialGate(c.RegionDialer)
	cn, err := newConn(gohbase.NewClient(c.ZKQuorum, c.clientOptions(gate.Dial)...))
	if err != nil {
		return nil, err
	}
	cn.gate = gate
	return cn, nil
}

// zkRoot is the znode parent the gohbase clients of c will use: ZKRoot, unless ClientOptions set
// another. gohbase options are closures over an unexported struct, so the only way to learn what
// they set is to apply them to a client (gohbase.NewClient only records its settings: it neither
// connects nor starts a goroutine) and read the field; TestZKRootFromClientOptions fails if a
// gohbase version renames it. Without this, Open would check one znode parent and connect to another.
func (c Config) zkRoot() string {
	if len(c.ClientOptions) == 0 {
		return c.ZKRoot
	}
	f := reflect.ValueOf(gohbase.NewClient(c.ZKQuorum, c.clientOptions(nil)...)).Elem().FieldByName("zkRoot")
	if !f.IsValid() || f.Kind() != reflect.String {
		return c.ZKRoot
	}
	return f.String()
}

// FlushInterval is gohbase.FlushInterval(d) where 0 means what it says: send a batch as soon as no
// more calls are queued. gohbase's region clients take an interval of 0 as unset and wait their
// default 20 ms instead (region.NewClient), which made every lone Get and Put of the driver take
// 21 ms; the shortest positive interval, 1 ns, waits for nothing.
func FlushInterval(d time.Duration) gohbase.Option {
	return gohbase.FlushInterval(max(d, time.Nanosecond))
}

var errNoRPC = errors.New("hbase: the gohbase client does not implement gohbase.RPCClient")
