package bench

import (
	"context"
	"fmt"
	"iter"
	"sync/atomic"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

// Raw is the baseline: the store's own driver, used the way an application without brine would use
// it, on unsalted tables.
type Raw interface {
	// Put writes one row with one cell (family "d", qualifier "v") and waits for the acknowledgement.
	// It is what concurrent writers call, so the driver may batch calls in flight together.
	Put(ctx context.Context, table string, key, value []byte) error
	// PutSequential is Put for a writer that sends one row at a time: a driver that waits to fill a
	// batch would make such a writer wait for nothing, so it may use a client that sends at once.
	PutSequential(ctx context.Context, table string, key, value []byte) error
	// Get reads one row and reports whether it exists.
	Get(ctx context.Context, table string, key []byte) (bool, error)
	// Scan streams the keys of the rows in [start, end), in key order, batch rows per round trip.
	Scan(ctx context.Context, table string, start, end []byte, batch int) iter.Seq2[[]byte, error]
}

// BatchRaw is a Raw whose driver also takes a batch of rows in one call (gohbase's SendBatch): the
// raw side's best batching where a driver has it, which the write section sweeps beside Put's.
type BatchRaw interface {
	// PutBatch writes one row per key (one cell each, as Put) and waits for every acknowledgement.
	PutBatch(ctx context.Context, table string, keys [][]byte, value []byte) error
}

// ScanV2Raw is a Raw whose driver has a second scanner (gohbase's ScannerV2), which the scan section
// reads beside Scan's.
type ScanV2Raw interface {
	ScanV2(ctx context.Context, table string, start, end []byte, batch int) iter.Seq2[[]byte, error]
}

// Store is a store under test: the backend brine runs on, and the raw driver on the same server.
type Store struct {
	// Name describes the store in the report (e.g. "hbase://127.0.0.1:2181").
	Name string
	// RawName describes the raw driver in the report.
	RawName string
	// Backend is brine's driver. Run wraps it to count calls; it also creates and deletes the tables.
	Backend backends.Backend
	// Raw is the baseline driver.
	Raw Raw
	// Wire, when set, counts the calls brine's driver makes to the store's own client, below the
	// backends API (HBase: gohbase calls, and the rows scan responses carried).
	Wire WireCounter
	// Close releases everything; it may be nil.
	Close func() error
	// Connect, when set, opens another connection to the same store, as another process would: the
	// shards section gives each shard's client one, and closes it. Nil where a store is one
	// process's own (the embedded stores), whose shards then share Backend.
	Connect func(ctx context.Context) (backends.Backend, error)
}

// WireCounter counts what a driver sent and received below the backends API.
type WireCounter interface {
	// Calls is how many RPCs the driver has issued.
	Calls() int64
	// ScanRows is how many rows the server has returned to scans.
	ScanRows() int64
}

// BackendStore benchmarks a store with no separate raw driver wired in (the embedded stores, or
// Tablestore): the baseline is the same driver used directly, unsalted, through the backends API.
func BackendStore(name string, b backends.Backend) *Store {
	return &Store{
		Name:    name,
		RawName: "the same backends driver, unsalted, called directly",
		Backend: b,
		Raw:     backendRaw{b},
		Close:   b.Close,
	}
}

// backendRaw is Raw over a backends.Backend: no salting, no client, one driver call per operation.
type backendRaw struct{ b backends.Backend }

func (r backendRaw) Put(ctx context.Context, table string, key, value []byte) error {
	rowErrs, err := r.b.Apply(ctx, table, []backends.Mutation{{Key: key, Cells: []backends.Cell{
		{Family: family, Qualifier: qualifier, Value: value},
	}}})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	return err
}

func (r backendRaw) PutSequential(ctx context.Context, table string, key, value []byte) error {
	return r.Put(ctx, table, key, value)
}

func (r backendRaw) Get(ctx context.Context, table string, key []byte) (bool, error) {
	rows, err := r.b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{})
	if err != nil {
		return false, err
	}
	return len(rows) == 1 && len(rows[0].Cells) > 0, nil
}

func (r backendRaw) Scan(ctx context.Context, table string, start, end []byte, batch int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		for row, err := range r.b.Scan(ctx, table, backends.Range{Start: start, End: end}, backends.ScanOptions{BatchSize: batch}) {
			if !yield(row.Key, err) || err != nil {
				return
			}
		}
	}
}

// counting wraps brine's backend to count what the client asks of it: Read calls and keys, Apply
// calls and rows, Scan calls and the rows they yielded.
// Reads of the rebucket directory (client.DirTable: a table handle reads its row again at most once
// per client.WithRouteRefresh) are counted apart, as dirReads: they belong to the handle, not to a call.
type counting struct {
	backends.Backend
	reads, readKeys, dirReads, applies, applyRows, scans, scanRows atomic.Int64
	// cams and incs: CheckAndMutate and Increment calls; condBatches and condRows: CheckAndMutateBatch
	// calls and their rows (counted in index.go).
	cams, incs, condBatches, condRows atomic.Int64
}

type counts struct {
	reads, readKeys, dirReads, applies, applyRows, scans, scanRows, cams, incs, condBatches, condRows int64
}

func (c *counting) snapshot() counts {
	return counts{
		reads: c.reads.Load(), readKeys: c.readKeys.Load(), dirReads: c.dirReads.Load(), applies: c.applies.Load(),
		applyRows: c.applyRows.Load(), scans: c.scans.Load(), scanRows: c.scanRows.Load(),
		cams: c.cams.Load(), incs: c.incs.Load(), condBatches: c.condBatches.Load(), condRows: c.condRows.Load(),
	}
}

// combine applies op to every pair of fields.
func (a counts) combine(b counts, op func(x, y int64) int64) counts {
	return counts{
		reads: op(a.reads, b.reads), readKeys: op(a.readKeys, b.readKeys), dirReads: op(a.dirReads, b.dirReads),
		applies: op(a.applies, b.applies), applyRows: op(a.applyRows, b.applyRows), scans: op(a.scans, b.scans),
		scanRows: op(a.scanRows, b.scanRows), cams: op(a.cams, b.cams), incs: op(a.incs, b.incs),
		condBatches: op(a.condBatches, b.condBatches), condRows: op(a.condRows, b.condRows),
	}
}

func (a counts) sub(b counts) counts { return a.combine(b, func(x, y int64) int64 { return x - y }) }
func (a counts) add(b counts) counts { return a.combine(b, func(x, y int64) int64 { return x + y }) }

// calls is the store calls made: reads, applies, conditional writes (one per batch), increments, scans.
func (a counts) calls() int64 {
	return a.reads + a.applies + a.cams + a.condBatches + a.incs + a.scans
}

// rowsWritten is the rows written by applies and conditional writes, batched or not.
func (a counts) rowsWritten() int64 { return a.applyRows + a.cams + a.condRows }

func (c *counting) Read(ctx context.Context, table string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	if table == client.DirTable {
		c.dirReads.Add(1)
	} else {
		c.reads.Add(1)
		c.readKeys.Add(int64(len(keys)))
	}
	return c.Backend.Read(ctx, table, keys, opts)
}

func (c *counting) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	c.applies.Add(1)
	c.applyRows.Add(int64(len(muts)))
	return c.Backend.Apply(ctx, table, muts)
}

func (c *counting) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	src := c.Backend.Scan(ctx, table, r, opts)
	return func(yield func(backends.Row, error) bool) {
		c.scans.Add(1)
		for row, err := range src {
			if err == nil {
				c.scanRows.Add(1)
			}
			if !yield(row, err) {
				return
			}
		}
	}
}

// regions returns the start keys of a table's regions from the driver when it can say (the first is
// empty), else from the split keys the table was created with.
func regions(ctx context.Context, b backends.Backend, table string, splits [][]byte) ([][]byte, error) {
	if rl, ok := b.(backends.RegionLister); ok {
		starts, err := rl.Regions(ctx, table)
		if err != nil {
			return nil, fmt.Errorf("bench: regions of %s: %w", table, err)
		}
		return starts, nil
	}
	return append([][]byte{nil}, splits...), nil
}
