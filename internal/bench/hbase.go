package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync/atomic"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
)

// OpenHBase opens both sides on one HBase cluster: brine's driver, and gohbase itself for the
// baseline. Both use the same gohbase data client (same settings, same connection: the runs alternate,
// never overlap), brine's through a wrapper that counts its calls. Only when cfg.FlushInterval is set
// does the baseline's sequential writer get a client of its own that sends at once: a sequential
// writer never has a second call to batch with, so a flush interval would only add itself to every
// Put.
func OpenHBase(ctx context.Context, cfg hbase.Config) (*Store, error) {
	if cfg.ZKQuorum == "" {
		return nil, fmt.Errorf("bench: %w: no ZooKeeper quorum", backends.ErrInvalidArgument)
	}
	if cfg.FlushInterval < 0 {
		return nil, fmt.Errorf("bench: %w: negative flush interval", backends.ErrInvalidArgument)
	}
	opts := func(flush time.Duration) []gohbase.Option {
		o := []gohbase.Option{hbase.FlushInterval(flush)}
		if l := cmp.Or(cfg.GohbaseLogger, cfg.Logger); l != nil {
			o = append(o, gohbase.Logger(l))
		}
		if cfg.ZKRoot != "" {
			o = append(o, gohbase.ZookeeperRoot(cfg.ZKRoot))
		}
		if cfg.EffectiveUser != "" {
			o = append(o, gohbase.EffectiveUser(cfg.EffectiveUser))
		}
		return o
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := hbase.CheckCluster(cctx, cfg.ZKQuorum, cfg.ZKRoot); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	inner := gohbase.NewClient(cfg.ZKQuorum, opts(cfg.FlushInterval)...)
	wire := &wireClient{Client: inner, rpc: inner.(gohbase.RPCClient)}
	// gohbase's admin client cannot be closed (its Close closes a nil channel); it lives as long as the
	// process.
	admin := gohbase.NewAdminClient(cfg.ZKQuorum, opts(cfg.FlushInterval)...)
	b, err := hbase.New(wire, admin, cfg.Options)
	if err != nil {
		inner.Close()
		return nil, fmt.Errorf("bench: %w", err)
	}
	raw := &gohbaseRaw{conc: inner, seq: inner}
	if cfg.FlushInterval > 0 {
		raw.seq = gohbase.NewClient(cfg.ZKQuorum, opts(0)...)
	}
	closeAll := func() error {
		inner.Close()
		if raw.seq != inner {
			raw.seq.Close()
		}
		return nil
	}
	// Fail here, not halfway through the run, when the quorum is wrong: ask for a table's metadata.
	if _, err := b.TableMeta(cctx, "bench_probe_no_such_table"); err != nil && !errors.Is(err, backends.ErrTableNotFound) {
		_ = closeAll()
		return nil, fmt.Errorf("bench: open hbase %s: %w", cfg.ZKQuorum, err)
	}
	return &Store{
		Name:    "hbase://" + cfg.ZKQuorum + cfg.ZKRoot,
		RawName: fmt.Sprintf("gohbase (pinned), FlushInterval %v", cfg.FlushInterval),
		Backend: b,
		Raw:     raw,
		Wire:    wire,
		Close:   closeAll,
		// A connection of the driver's own, as another process opens it: gohbase clients of its own,
		// so separate region connections and RPC queues.
		Connect: func(ctx context.Context) (backends.Backend, error) { return hbase.Open(ctx, cfg) },
	}, nil
}

// wireClient counts the gohbase calls brine's driver makes and the rows scan responses carry. It
// implements gohbase.RPCClient too, which the driver needs for the calls it builds itself.
type wireClient struct {
	gohbase.Client
	rpc             gohbase.RPCClient
	calls, scanRows atomic.Int64
}

func (w *wireClient) Calls() int64    { return w.calls.Load() }
func (w *wireClient) ScanRows() int64 { return w.scanRows.Load() }

func (w *wireClient) Get(g *hrpc.Get) (*hrpc.Result, error) {
	w.calls.Add(1)
	return w.Client.Get(g)
}

func (w *wireClient) Put(p *hrpc.Mutate) (*hrpc.Result, error) {
	w.calls.Add(1)
	return w.Client.Put(p)
}

func (w *wireClient) Delete(d *hrpc.Mutate) (*hrpc.Result, error) {
	w.calls.Add(1)
	return w.Client.Delete(d)
}

// Scan counts the scanner as one call: the driver uses gohbase's scanner only for hbase:meta lookups,
// and drives data scans through SendRPC, where each round trip is counted.
func (w *wireClient) Scan(s *hrpc.Scan) hrpc.Scanner {
	w.calls.Add(1)
	return w.Client.Scan(s)
}

func (w *wireClient) SendRPC(c hrpc.Call) (proto.Message, error) {
	w.calls.Add(1)
	msg, err := w.rpc.SendRPC(c)
	if sr, ok := msg.(*pb.ScanResponse); ok && err == nil {
		// Rows come in the cell block; the response counts them (a wide row's pieces count apart).
		w.scanRows.Add(int64(len(sr.GetCellsPerResult()) + len(sr.GetResults())))
	}
	return msg, err
}

// gohbaseRaw is the baseline on HBase: gohbase used directly.
type gohbaseRaw struct {
	conc, seq gohbase.Client
}

func (r *gohbaseRaw) Put(ctx context.Context, table string, key, value []byte) error {
	return put(ctx, r.conc, table, key, value)
}

func (r *gohbaseRaw) PutSequential(ctx context.Context, table string, key, value []byte) error {
	return put(ctx, r.seq, table, key, value)
}

func put(ctx context.Context, c gohbase.Client, table string, key, value []byte) error {
	p, err := hrpc.NewPut(ctx, []byte(table), key, map[string]map[string][]byte{family: {qualifier: value}})
	if err != nil {
		return err
	}
	_, err = c.Put(p)
	return err
}

// PutBatch is gohbase's own batching of rows in hand: one SendBatch of a Put per row.
func (r *gohbaseRaw) PutBatch(ctx context.Context, table string, keys [][]byte, value []byte) error {
	calls := make([]hrpc.Call, len(keys))
	for i, k := range keys {
		p, err := hrpc.NewPut(ctx, []byte(table), k, map[string]map[string][]byte{family: {qualifier: value}})
		if err != nil {
			return err
		}
		calls[i] = p
	}
	res, ok := r.conc.SendBatch(ctx, calls)
	if ok {
		return nil
	}
	for i, rr := range res {
		if rr.Error != nil {
			return fmt.Errorf("SendBatch row %d of %d: %w", i, len(res), rr.Error)
		}
	}
	return errors.New("SendBatch: not all OK, and no row failed")
}

// ScanV2 is Scan through gohbase's ScannerV2, which hands out a response's rows as views into its
// cell block, without a protobuf Result per row.
func (r *gohbaseRaw) ScanV2(ctx context.Context, table string, start, end []byte, batch int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		sc, err := newScan(ctx, table, start, end, batch)
		if err != nil {
			yield(nil, err)
			return
		}
		scanner := r.conc.ScanV2(sc)
		defer scanner.Close()
		var last []byte
		for {
			resp, err := scanner.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			for _, res := range resp.Results {
				// A wide row may come in pieces: its key once, on its first piece.
				if len(res.Cells) == 0 || bytes.Equal(res.Cells[0].Row(), last) {
					continue
				}
				last = res.Cells[0].Row()
				if !yield(last, nil) {
					return
				}
			}
		}
	}
}

func newScan(ctx context.Context, table string, start, end []byte, batch int) (*hrpc.Scan, error) {
	var opts []func(hrpc.Call) error
	if batch > 0 {
		opts = append(opts, hrpc.NumberOfRows(uint32(batch)))
	}
	return hrpc.NewScanRange(ctx, []byte(table), start, end, opts...)
}

func (r *gohbaseRaw) Get(ctx context.Context, table string, key []byte) (bool, error) {
	g, err := hrpc.NewGet(ctx, []byte(table), key)
	if err != nil {
		return false, err
	}
	res, err := r.conc.Get(g)
	if err != nil {
		return false, err
	}
	return len(res.Cells) > 0, nil
}

func (r *gohbaseRaw) Scan(ctx context.Context, table string, start, end []byte, batch int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		sc, err := newScan(ctx, table, start, end, batch)
		if err != nil {
			yield(nil, err)
			return
		}
		scanner := r.conc.Scan(sc)
		defer scanner.Close()
		for {
			res, err := scanner.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if len(res.Cells) == 0 {
				continue
			}
			if !yield(res.Cells[0].Row, nil) {
				return
			}
		}
	}
}
