package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// TablePrefix starts the name of every table a run creates; the run deletes them when it ends.
const TablePrefix = "bench_"

const (
	family    = client.DefaultFamily
	qualifier = "v"
	// stepMillis spaces the synthetic timestamps: strictly monotonic keys, a store's worst case.
	stepMillis = 10
)

// epoch is where the synthetic time series starts. Its keys all begin with byte 0x00, so on a table
// pre-split at a 1-byte salt's boundaries every unsalted row lands in the first region.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// Key is the logical key of row i: its millisecond timestamp, 8 bytes big-endian.
func Key(i int) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(epoch+int64(i)*stepMillis))
}

// runner is one run in progress.
type runner struct {
	cfg    Config
	store  *Store
	count  *counting
	client *client.Client
	log    *slog.Logger
	value  []byte
	rep    *Report
	suffix string
	tables []string
	// viaClient are tables deleted through the client, so that their index tables, or what a
	// rebucket made of them, go too.
	viaClient []string

	plain  string // unsalted, pre-split at the salter's boundaries: the raw side
	salted *client.Table
	splits [][]byte
}

// Run benchmarks brine against the store's raw driver. Raw and brine runs alternate within each repeat
// (the order flips from one repeat to the next) after a warm-up of both, so neither side gets a
// systematically quieter machine. Tables it creates are named TablePrefix+... and deleted at the end,
// also on failure.
func Run(ctx context.Context, store *Store, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil || store.Backend == nil || store.Raw == nil {
		return nil, fmt.Errorf("bench: %w: store needs a backend and a raw driver", backends.ErrInvalidArgument)
	}
	s, err := salting.ParseSpec(cfg.Salt)
	if err != nil {
		return nil, fmt.Errorf("bench: salt: %w", err)
	}
	r := newRunner(store, cfg)
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	defer r.cleanup(ctx)

	if err := r.writePhase(ctx, s); err != nil {
		return nil, err
	}
	if cfg.has(SectionSpread) {
		if err := r.spread(ctx); err != nil {
			return nil, err
		}
	}
	if cfg.has(SectionGet) {
		if err := r.gets(ctx, rng); err != nil {
			return nil, err
		}
	}
	if cfg.has(SectionScan) || cfg.has(SectionLimit) {
		if err := r.scanPhase(ctx); err != nil {
			return nil, err
		}
	}
	// The other sections, in AllSections' order.
	for _, sec := range []struct {
		name string
		run  func(context.Context) error
	}{
		{SectionIndex, r.index}, {SectionRebucket, r.rebucket}, {SectionVerify, r.verify}, {SectionSync, r.syncs},
		{SectionCopy, r.copies}, {SectionShards, r.shards}, {SectionFilter, r.filter}, {SectionCluster, r.cluster},
	} {
		if !cfg.has(sec.name) {
			continue
		}
		if err := sec.run(ctx); err != nil {
			return nil, err
		}
	}
	r.rep.Duration = time.Since(r.rep.Started).Seconds()
	r.rep.Goals = Evaluate(r.rep)
	return r.rep, nil
}

func newRunner(store *Store, cfg Config) *runner {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cnt := &counting{Backend: store.Backend}
	r := &runner{
		cfg: cfg, store: store, count: cnt, log: log,
		client: client.New(cnt, append([]client.Option{client.WithLogger(log)}, cfg.ClientOptions...)...),
		value:  make([]byte, cfg.ValueSize),
		suffix: strconv.FormatInt(time.Now().UnixNano()%1e12, 36) + "_" + strconv.Itoa(os.Getpid()),
		rep: &Report{
			Store: store.Name, Raw: store.RawName, Started: time.Now(), Config: cfg,
		},
	}
	// The value's bytes are fixed by the seed; they are random so that no store compresses them away.
	rng := rand.New(rand.NewPCG(cfg.Seed, 0))
	for i := range r.value {
		r.value[i] = byte(rng.Uint32())
	}
	return r
}

// cleanup deletes every table the run created, even when ctx has ended, but the store's rebucket
// directory (client.DirTable), which the rebucket section may have created: it is the store's, not
// the run's, and another program's rebucket may be starting on it (deleting it then would fail that
// rebucket's first directory write). Deleting the run's rebucketed tables removes their rows in it.
func (r *runner) cleanup(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	for _, t := range r.viaClient {
		if err := r.client.DeleteTable(dctx, t); err != nil {
			r.log.Warn("bench: could not delete table", "table", t, "err", err)
		}
	}
	for _, t := range r.tables {
		if err := r.store.Backend.DeleteTable(dctx, t); err != nil {
			r.log.Warn("bench: could not delete table", "table", t, "err", err)
		}
	}
}

// dropSince deletes, through c, the tables added to r.viaClient from position from on (what a
// measure just created), so that the next measure finds the server holding what the one before it
// found (on HBase, memstores kept in the server's heap until flushed). Without settling, the
// cleanup deletes them, as every other section's.
func (r *runner) dropSince(ctx context.Context, c *client.Client, from int) {
	if r.cfg.Settle <= 0 {
		return
	}
	kept := r.viaClient[:from]
	for _, t := range r.viaClient[from:] {
		if err := c.DeleteTable(ctx, t); err != nil {
			r.log.Warn("bench: could not delete table; the cleanup tries again", "table", t, "err", err)
			kept = append(kept, t)
		}
	}
	r.viaClient = kept
}

// createTable creates a table and remembers it for cleanup.
func (r *runner) createTable(ctx context.Context, kind string, s salting.Salter, splits [][]byte) (*client.Table, error) {
	name := TablePrefix + kind + "_" + r.suffix
	t, err := r.client.CreateTable(ctx, name, client.TableConfig{Salter: s, SplitKeys: splits})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	r.tables = append(r.tables, name)
	return t, nil
}

// writePhase creates the unsalted and salted tables at the same split keys and fills both with the
// same Rows keys: timed (section write), or untimed when only later sections need the data.
func (r *runner) writePhase(ctx context.Context, s salting.Salter) error {
	r.splits = s.SplitKeys(0)
	none, err := salting.ParseSpec("none")
	if err != nil {
		return err
	}
	plain, err := r.createTable(ctx, "raw", none, r.splits)
	if err != nil {
		return err
	}
	r.plain = plain.Name()
	if r.salted, err = r.createTable(ctx, "brine", s, nil); err != nil {
		return err
	}
	if !r.cfg.has(SectionWrite) {
		r.log.Info("bench: loading the write tables (untimed)", "rows", r.cfg.Rows)
		if _, err := r.rawWrite(ctx, r.plain, r.cfg.Rows, slices.Max(r.cfg.RawConcurrency)); err != nil {
			return err
		}
		_, err := r.importRows(ctx, r.salted, r.cfg.Rows)
		return err
	}
	return r.writes(ctx)
}

// rawWrite writes rows [0, n) through the raw driver from conc goroutines, each waiting for its Put.
func (r *runner) rawWrite(ctx context.Context, table string, n, conc int) (time.Duration, error) {
	return parallelN(ctx, n, conc, func(ctx context.Context, i int) error {
		if err := r.store.Raw.Put(ctx, table, Key(i), r.value); err != nil {
			return fmt.Errorf("bench: raw put row %d: %w", i, err)
		}
		return nil
	})
}

// rawBatchWrite writes rows [0, n) through the raw driver's batch call, batch rows per call, from
// writers goroutines.
func (r *runner) rawBatchWrite(ctx context.Context, br BatchRaw, table string, n, batch, writers int) (time.Duration, error) {
	calls := (n + batch - 1) / batch
	return parallelN(ctx, calls, writers, func(ctx context.Context, c int) error {
		lo, hi := c*batch, min(n, (c+1)*batch)
		keys := make([][]byte, 0, hi-lo)
		for i := lo; i < hi; i++ {
			keys = append(keys, Key(i))
		}
		if err := br.PutBatch(ctx, table, keys, r.value); err != nil {
			return fmt.Errorf("bench: raw batch of rows %d-%d: %w", lo, hi-1, err)
		}
		return nil
	})
}

// rawBatchPoints are the (rows per call, writers) pairs the raw batch call is tried at.
var rawBatchPoints = [][2]int{{256, 4}, {1024, 4}, {256, 16}, {1024, 16}}

// tuneRawBatch tries the raw batch call at each of rawBatchPoints, twice in opposite orders keeping
// each point's better try, as the concurrency sweep does, and returns the fastest.
func (r *runner) tuneRawBatch(ctx context.Context, br BatchRaw, n int) ([2]int, error) {
	bestOf := map[[2]int]float64{}
	for round := range 2 {
		order := slices.Clone(rawBatchPoints)
		if round == 1 {
			slices.Reverse(order)
		}
		for _, pt := range order {
			el, err := r.rawBatchWrite(ctx, br, r.plain, n, pt[0], pt[1])
			if err != nil {
				return pt, err
			}
			bestOf[pt] = max(bestOf[pt], RowsPerSecond(int64(n), el))
		}
	}
	best := rawBatchPoints[0]
	for _, pt := range rawBatchPoints {
		r.rep.Tuning = append(r.rep.Tuning, TuningResult{Concurrency: pt[1], BatchRows: pt[0], Rows: n, RowsPerS: bestOf[pt]})
		r.log.Info("bench: raw batch sweep", "rows_per_call", pt[0], "writers", pt[1], "rows_per_s", int(bestOf[pt]))
		if bestOf[pt] > bestOf[best] {
			best = pt
		}
	}
	return best, nil
}

// parallelN runs fn for i in [0, n) from conc goroutines, each taking the next i, and returns how
// long it took; the first error stops the others.
func parallelN(ctx context.Context, n, conc int, fn func(ctx context.Context, i int) error) (time.Duration, error) {
	var next atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	began := time.Now()
	for range conc {
		g.Go(func() error {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return nil
				}
				if err := fn(gctx, i); err != nil {
					return err
				}
			}
		})
	}
	err := g.Wait()
	return time.Since(began), err
}

// naiveWrite writes rows [0, n) one at a time, waiting for each.
func (r *runner) naiveWrite(ctx context.Context, table string, n int) (time.Duration, error) {
	began := time.Now()
	for i := range n {
		if err := r.store.Raw.PutSequential(ctx, table, Key(i), r.value); err != nil {
			return 0, fmt.Errorf("bench: naive put row %d: %w", i, err)
		}
	}
	return time.Since(began), nil
}

// importRows writes rows [0, n) with Table.Import at its default options (Workers aside, when set).
func (r *runner) importRows(ctx context.Context, t *client.Table, n int) (client.ImportStats, error) {
	return r.importN(ctx, t, n, func(i int) client.Mutation {
		return client.Mutation{Key: Key(i), Cells: []client.Cell{{Family: family, Qualifier: qualifier, Value: r.value}}}
	})
}

// importN imports row(i) for i in [0, n) into t with Import's default options (Workers aside, when
// set), and fails unless every row was written.
func (r *runner) importN(ctx context.Context, t client.TableAPI, n int, row func(i int) client.Mutation) (client.ImportStats, error) {
	rows := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			if !yield(client.ImportRow{Mutation: row(i)}, nil) {
				return
			}
		}
	}
	stats, err := t.Import(ctx, rows, client.ImportOptions{Workers: r.cfg.ImportWorkers})
	if err != nil {
		return stats, fmt.Errorf("bench: import into %s: %w", t.Name(), err)
	}
	if stats.Written != int64(n) {
		return stats, fmt.Errorf("bench: import into %s wrote %d of %d rows", t.Name(), stats.Written, n)
	}
	return stats, nil
}

// writes measures the three writers. Every run rewrites the same keys, so both tables end up holding
// exactly Rows rows for the sections after.
func (r *runner) writes(ctx context.Context) error {
	cfg := r.cfg
	r.log.Info("bench: write warm-up")
	// The server's JIT and caches warm up too: a few thousand rows each before anything is timed.
	warm := min(cfg.Rows, 5000)
	if _, err := r.naiveWrite(ctx, r.plain, min(cfg.NaiveRows, 100)); err != nil {
		return err
	}
	if _, err := r.rawWrite(ctx, r.plain, warm, slices.Max(cfg.RawConcurrency)); err != nil {
		return err
	}
	if _, err := r.importRows(ctx, r.salted, warm); err != nil {
		return err
	}

	// The raw side gets its best concurrency (each point tried twice, in opposite orders, keeping its
	// better try); brine gets its defaults.
	bestOf := make(map[int]float64, len(cfg.RawConcurrency))
	n := cfg.tuneRows()
	for round := range 2 {
		order := slices.Clone(cfg.RawConcurrency)
		if round == 1 {
			slices.Reverse(order)
		}
		for _, conc := range order {
			el, err := r.rawWrite(ctx, r.plain, n, conc)
			if err != nil {
				return err
			}
			bestOf[conc] = max(bestOf[conc], RowsPerSecond(int64(n), el))
		}
	}
	best, bestRate := cfg.RawConcurrency[0], -1.0
	for _, conc := range cfg.RawConcurrency {
		rate := bestOf[conc]
		r.rep.Tuning = append(r.rep.Tuning, TuningResult{Concurrency: conc, Rows: n, RowsPerS: rate})
		r.log.Info("bench: raw concurrency sweep", "concurrency", conc, "rows_per_s", int(rate))
		if rate > bestRate {
			best, bestRate = conc, rate
		}
	}

	var naive, raw, brine, rawBatch []float64
	var batches int64
	batchRaw, hasBatch := r.store.Raw.(BatchRaw)
	var bestBatch [2]int
	if hasBatch {
		var err error
		if bestBatch, err = r.tuneRawBatch(ctx, batchRaw, n); err != nil {
			return err
		}
	}
	steps := []func() error{
		func() error {
			el, err := r.naiveWrite(ctx, r.plain, cfg.NaiveRows)
			naive = append(naive, RowsPerSecond(int64(cfg.NaiveRows), el))
			return err
		},
		func() error {
			el, err := r.rawWrite(ctx, r.plain, cfg.Rows, best)
			raw = append(raw, RowsPerSecond(int64(cfg.Rows), el))
			return err
		},
		func() error {
			began := time.Now()
			st, err := r.importRows(ctx, r.salted, cfg.Rows)
			brine = append(brine, RowsPerSecond(int64(cfg.Rows), time.Since(began)))
			batches = st.Batches
			return err
		},
	}
	if hasBatch {
		steps = append(steps, func() error {
			el, err := r.rawBatchWrite(ctx, batchRaw, r.plain, cfg.Rows, bestBatch[0], bestBatch[1])
			rawBatch = append(rawBatch, RowsPerSecond(int64(cfg.Rows), el))
			return err
		})
	}
	for rep := range cfg.Repeat {
		// Rotate the order so that each writer runs first, second, ... in turn.
		for k := range steps {
			if err := steps[(k+rep)%len(steps)](); err != nil {
				return err
			}
		}
		r.log.Info("bench: write repeat", "repeat", rep+1, "naive", int(naive[rep]), "raw", int(raw[rep]), "brine", int(brine[rep]))
	}
	w := &WriteResult{
		Rows: cfg.Rows, NaiveRows: cfg.NaiveRows, RawConcurrency: best,
		NaiveRowsPerS: Median(naive), RawRowsPerS: Median(raw), BrineRowsPerS: Median(brine),
		BrineBatches: batches,
	}
	w.BrineOverNaive = Ratio(w.BrineRowsPerS, w.NaiveRowsPerS)
	w.BrineOverRaw = Ratio(w.BrineRowsPerS, w.RawRowsPerS)
	if hasBatch {
		w.RawBatchRows, w.RawBatchWriters, w.RawBatchRowsPerS = bestBatch[0], bestBatch[1], Median(rawBatch)
		w.BrineOverRawBatch = Ratio(w.BrineRowsPerS, w.RawBatchRowsPerS)
	}
	r.rep.Write = w
	return nil
}

// spread counts the rows of every region of both write tables, scanning each region's range raw.
func (r *runner) spread(ctx context.Context) error {
	r.log.Info("bench: counting rows per region")
	salted, err := r.countRegions(ctx, r.salted.Name())
	if err != nil {
		return err
	}
	plain, err := r.countRegions(ctx, r.plain)
	if err != nil {
		return err
	}
	sp := &SpreadResult{
		Rows: int64(r.cfg.Rows), Salt: r.salted.Salter().Spec(), Regions: len(salted),
		Salted: salted, Unsalted: plain,
		SaltedMaxMean: MaxOverMean(salted), UnsaltedMaxMean: MaxOverMean(plain),
	}
	var total int64
	for _, c := range plain {
		total += c
	}
	sp.UnsaltedMaxShare = Ratio(float64(slices.Max(plain)), float64(total))
	r.rep.Spread = sp
	return nil
}

func (r *runner) countRegions(ctx context.Context, table string) ([]int64, error) {
	starts, err := regions(ctx, r.store.Backend, table, r.splits)
	if err != nil {
		return nil, err
	}
	return r.countRanges(ctx, table, starts)
}

// countRanges counts the rows of table from each of starts (sorted) to the next, scanning raw.
func (r *runner) countRanges(ctx context.Context, table string, starts [][]byte) ([]int64, error) {
	counts := make([]int64, len(starts))
	for i, start := range starts {
		var end []byte
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		for _, err := range r.store.Raw.Scan(ctx, table, start, end, 1000) {
			if err != nil {
				return nil, fmt.Errorf("bench: count region %d of %s: %w", i, table, err)
			}
			counts[i]++
		}
	}
	return counts, nil
}
