package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"iter"
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
	if cfg.has(SectionCluster) {
		if err := r.cluster(ctx); err != nil {
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
		client: client.New(cnt, client.WithLogger(log)),
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

// cleanup deletes every table the run created, even when ctx has ended.
func (r *runner) cleanup(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	for _, t := range r.tables {
		if err := r.store.Backend.DeleteTable(dctx, t); err != nil {
			r.log.Warn("bench: could not delete table", "table", t, "err", err)
		}
	}
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
				if err := r.store.Raw.Put(gctx, table, Key(i), r.value); err != nil {
					return fmt.Errorf("bench: raw put row %d: %w", i, err)
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
	rows := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			row := client.ImportRow{Mutation: client.Mutation{Key: Key(i), Cells: []client.Cell{
				{Family: family, Qualifier: qualifier, Value: r.value},
			}}}
			if !yield(row, nil) {
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

	var naive, raw, brine []float64
	var batches int64
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
	for rep := range cfg.Repeat {
		// Rotate the order so that each writer runs first, second and third in turn.
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

// gets reads the same sample of keys raw (unsalted table) and through brine (salted table),
// alternating which side goes first, and counts what one salted Get costs below the client.
func (r *runner) gets(ctx context.Context, rng *rand.Rand) error {
	cfg := r.cfg
	keys := make([][]byte, cfg.Gets)
	for i := range keys {
		keys[i] = Key(rng.IntN(cfg.Rows))
	}
	rawGet := func(k []byte) (time.Duration, error) {
		began := time.Now()
		found, err := r.store.Raw.Get(ctx, r.plain, k)
		el := time.Since(began)
		if err == nil && !found {
			err = fmt.Errorf("bench: raw get %x: row not found", k)
		}
		return el, err
	}
	brineGet := func(k []byte) (time.Duration, error) {
		began := time.Now()
		_, err := r.salted.Get(ctx, k)
		return time.Since(began), err
	}
	r.log.Info("bench: point gets", "keys", len(keys))
	for _, k := range keys[:min(len(keys), 100)] { // warm-up: connections, region caches
		if _, err := rawGet(k); err != nil {
			return err
		}
		if _, err := brineGet(k); err != nil {
			return err
		}
	}
	// The third side is brine's own driver on the unsalted table, no client: it tells the cost of the
	// driver apart from the cost of salting. The fourth is raw again, on the salted table with the
	// physical keys: a salted table spreads the rows over many regions, which costs the server
	// something on its own; brine against this side is what the client adds.
	driverGet := func(k []byte) (time.Duration, error) {
		began := time.Now()
		rows, err := r.store.Backend.Read(ctx, r.plain, [][]byte{k}, backends.ReadOptions{})
		el := time.Since(began)
		if err == nil && (len(rows) != 1 || len(rows[0].Cells) == 0) {
			err = fmt.Errorf("bench: driver get %x: row not found", k)
		}
		return el, err
	}
	phys := make([][]byte, len(keys))
	for i, k := range keys {
		pk, err := r.salted.Salter().AppendPhysical(nil, k)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		phys[i] = pk
	}
	rawSaltedGet := func(i int) (time.Duration, error) {
		began := time.Now()
		found, err := r.store.Raw.Get(ctx, r.salted.Name(), phys[i])
		el := time.Since(began)
		if err == nil && !found {
			err = fmt.Errorf("bench: raw get %x: row not found", phys[i])
		}
		return el, err
	}
	const sides = 4
	var p50s, p99s [sides][]time.Duration
	var brineCounts counts
	var brineWire int64
	for rep := range cfg.Repeat {
		var lat [sides][]time.Duration
		for i, k := range keys {
			for step := range sides {
				// Rotate which side reads first, so none always follows another's cache warming.
				side := (i + rep + step) % sides
				var el time.Duration
				var err error
				switch side {
				case 0:
					el, err = rawGet(k)
				case 1:
					before, wire := r.count.snapshot(), r.wireCalls()
					el, err = brineGet(k)
					d := r.count.snapshot().sub(before)
					brineCounts.reads += d.reads
					brineCounts.readKeys += d.readKeys
					brineWire += r.wireCalls() - wire
				case 2:
					el, err = driverGet(k)
				case 3:
					el, err = rawSaltedGet(i)
				}
				if err != nil {
					return fmt.Errorf("bench: %w", err)
				}
				lat[side] = append(lat[side], el)
			}
		}
		for side := range lat {
			p50s[side] = append(p50s[side], Percentile(lat[side], 50))
			p99s[side] = append(p99s[side], Percentile(lat[side], 99))
		}
	}
	n := float64(cfg.Repeat * len(keys))
	g := &GetResult{
		Gets:        len(keys),
		RawP50us:    us(MedianDuration(p50s[0])),
		RawP99us:    us(MedianDuration(p99s[0])),
		BrineP50us:  us(MedianDuration(p50s[1])),
		BrineP99us:  us(MedianDuration(p99s[1])),
		DriverP50us: us(MedianDuration(p50s[2])),
		DriverP99us: us(MedianDuration(p99s[2])),

		RawSaltedP50us: us(MedianDuration(p50s[3])),
		RawSaltedP99us: us(MedianDuration(p99s[3])),

		BackendReadsPerGet: float64(brineCounts.reads) / n,
		BackendKeysPerGet:  float64(brineCounts.readKeys) / n,
		DriverRPCsPerGet:   -1,
	}
	if r.store.Wire != nil {
		g.DriverRPCsPerGet = float64(brineWire) / n
	}
	g.P50Ratio = Ratio(g.BrineP50us, g.RawP50us)
	g.P99Ratio = Ratio(g.BrineP99us, g.RawP99us)
	g.ClientP50Ratio = Ratio(g.BrineP50us, g.RawSaltedP50us)
	r.rep.Get = g
	return nil
}

func (r *runner) wireCalls() int64 {
	if r.store.Wire == nil {
		return 0
	}
	return r.store.Wire.Calls()
}

func (r *runner) wireScanRows() int64 {
	if r.store.Wire == nil {
		return -1
	}
	return r.store.Wire.ScanRows()
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// scanPhase loads one hash:N table per bucket count (untimed) and runs the scan sections on them.
func (r *runner) scanPhase(ctx context.Context) error {
	cfg := r.cfg
	counts := slices.Clone(cfg.ScanBuckets)
	if cfg.has(SectionLimit) && !slices.Contains(counts, cfg.LimitBuckets) {
		counts = append(counts, cfg.LimitBuckets)
	}
	if !cfg.has(SectionScan) {
		counts = []int{cfg.LimitBuckets}
	}
	tables := map[int]*client.Table{}
	for _, n := range counts {
		s, err := salting.ParseSpec("hash:" + strconv.Itoa(n))
		if err != nil {
			return err
		}
		t, err := r.createTable(ctx, "scan"+strconv.Itoa(n), s, nil)
		if err != nil {
			return err
		}
		r.log.Info("bench: loading scan table (untimed)", "table", t.Name(), "rows", cfg.Rows)
		if _, err := r.importRows(ctx, t, cfg.Rows); err != nil {
			return err
		}
		tables[n] = t
	}
	if cfg.has(SectionScan) {
		for _, n := range cfg.ScanBuckets {
			res, err := r.scans(ctx, tables[n])
			if err != nil {
				return err
			}
			r.rep.Scans = append(r.rep.Scans, res)
		}
	}
	if cfg.has(SectionLimit) {
		for _, prefetch := range cfg.LimitPrefetch {
			for _, limit := range cfg.Limits {
				res, err := r.limitScan(ctx, tables[cfg.LimitBuckets], limit, prefetch)
				if err != nil {
					return err
				}
				r.rep.Limits = append(r.rep.Limits, res)
			}
		}
	}
	return nil
}

// scanRun is one timed scan: rows, total time, time to the first row.
type scanRun struct {
	rows    int64
	elapsed time.Duration
	first   time.Duration
}

// timeScan drains keys, checking that they come in ascending order.
func timeScan(keys iter.Seq2[[]byte, error]) (scanRun, error) {
	var run scanRun
	var last []byte
	began := time.Now()
	for k, err := range keys {
		if err != nil {
			return run, err
		}
		if run.rows == 0 {
			run.first = time.Since(began)
		} else if bytes.Compare(last, k) >= 0 {
			return run, fmt.Errorf("bench: scan out of order: %x after %x", k, last)
		}
		last = k
		run.rows++
	}
	run.elapsed = time.Since(began)
	return run, nil
}

func brineKeys(ctx context.Context, t *client.Table, rg client.Range, opts ...client.ReadOption) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		for row, err := range t.Scan(ctx, rg, opts...) {
			if !yield(row.Key, err) || err != nil {
				return
			}
		}
	}
}

// scans reads the same logical range raw from the unsalted table and through brine from t.
func (r *runner) scans(ctx context.Context, t *client.Table) (ScanResult, error) {
	cfg := r.cfg
	lo, hi := cfg.scanRange()
	start, end := Key(lo), Key(hi)
	want := int64(hi - lo)
	buckets := t.Salter().Buckets()
	raw := func() (scanRun, error) {
		run, err := timeScan(r.store.Raw.Scan(ctx, r.plain, start, end, cfg.ScanBatch))
		if err == nil && run.rows != want {
			err = fmt.Errorf("bench: raw scan returned %d rows, want %d", run.rows, want)
		}
		return run, err
	}
	brine := func() (scanRun, error) {
		run, err := timeScan(brineKeys(ctx, t, client.RowRange(start, end), client.BatchSize(cfg.ScanBatch)))
		if err == nil && run.rows != want {
			err = fmt.Errorf("bench: brine scan of %s returned %d rows, want %d", t.Name(), run.rows, want)
		}
		return run, err
	}
	r.log.Info("bench: range scans", "buckets", buckets, "rows", want)
	if _, err := raw(); err != nil { // warm-up, and a check of both sides' results
		return ScanResult{}, err
	}
	if _, err := brine(); err != nil {
		return ScanResult{}, err
	}
	var rawRate, brineRate []float64
	var rawFirst, brineFirst []time.Duration
	for rep := range cfg.Repeat {
		for side := range 2 {
			if (rep+side)%2 == 0 {
				run, err := raw()
				if err != nil {
					return ScanResult{}, err
				}
				rawRate = append(rawRate, RowsPerSecond(run.rows, run.elapsed))
				rawFirst = append(rawFirst, run.first)
				continue
			}
			run, err := brine()
			if err != nil {
				return ScanResult{}, err
			}
			brineRate = append(brineRate, RowsPerSecond(run.rows, run.elapsed))
			brineFirst = append(brineFirst, run.first)
		}
	}
	res := ScanResult{
		Buckets: buckets, Rows: want,
		RawRowsPerS: Median(rawRate), BrineRowsPerS: Median(brineRate),
		RawFirstRowMs: ms(MedianDuration(rawFirst)), BrineFirstRowMs: ms(MedianDuration(brineFirst)),
	}
	res.Ratio = Ratio(res.BrineRowsPerS, res.RawRowsPerS)
	res.FirstRowRatio = Ratio(res.BrineFirstRowMs, res.RawFirstRowMs)
	return res, nil
}

// limitScan runs a limited scan over t's buckets and counts the rows read for those returned: the
// rows the backend yielded to the client, and (when the driver is observable) the rows the server
// sent. The worst repeat is kept.
func (r *runner) limitScan(ctx context.Context, t *client.Table, limit, prefetch int) (LimitResult, error) {
	cfg := r.cfg
	lo, hi := cfg.scanRange()
	rg := client.RowRange(Key(lo), Key(hi))
	c := r.client
	shownPrefetch := client.DefaultPrefetch
	if prefetch > 0 {
		// A second client over the same counting backend; it owns nothing, so it is not closed.
		c = client.New(r.count, client.WithLogger(r.log), client.WithPrefetch(prefetch))
		shownPrefetch = prefetch
	}
	tt, err := c.OpenTable(ctx, t.Name(), t.Salter())
	if err != nil {
		return LimitResult{}, fmt.Errorf("bench: %w", err)
	}
	buckets := t.Salter().Buckets()
	res := LimitResult{
		Limit: limit, Buckets: buckets, Batch: cfg.LimitBatch, Prefetch: shownPrefetch,
		Bound: 2*limit + buckets, ServerRows: -1,
	}
	want := min(limit, hi-lo)
	for range cfg.Repeat {
		before, wire := r.count.snapshot(), r.wireScanRows()
		returned := 0
		for _, err := range tt.Scan(ctx, rg, client.Limit(limit), client.BatchSize(cfg.LimitBatch)) {
			if err != nil {
				return res, fmt.Errorf("bench: %w", err)
			}
			returned++
		}
		if returned != want {
			return res, fmt.Errorf("bench: limit %d scan returned %d rows, want %d", limit, returned, want)
		}
		res.Returned = returned
		res.BackendRows = max(res.BackendRows, r.count.snapshot().sub(before).scanRows)
		if wire >= 0 {
			res.ServerRows = max(res.ServerRows, r.wireScanRows()-wire)
		}
	}
	res.ReadPerRow = Ratio(float64(res.read()), float64(res.Returned))
	r.log.Info("bench: limit scan", "limit", limit, "prefetch", shownPrefetch, "backend_rows", res.BackendRows, "server_rows", res.ServerRows)
	return res, nil
}
