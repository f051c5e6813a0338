package bench

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/wait"
	"github.com/brine-kv/brine/salting"
)

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

// firstBatch is the rows a bucket scan's first round trip asks for in brine's client (its
// scanFirstBatch, unexported there).
const firstBatch = 8

// scanRun is one timed scan: rows and total time.
type scanRun struct {
	rows    int64
	elapsed time.Duration
}

// firstRowPause separates first-row samples.
const firstRowPause = 5 * time.Millisecond

// firstRow is the time until keys yields its first key; the scan stops there.
func firstRow(keys iter.Seq2[[]byte, error]) (time.Duration, error) {
	began := time.Now()
	for _, err := range keys {
		return time.Since(began), err
	}
	return 0, errors.New("bench: first-row scan returned no row")
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
		if run.rows > 0 && bytes.Compare(last, k) >= 0 {
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

// fullScan is one side of the full scans: how to run it, and where its rates go.
type fullScan struct {
	run   func() (scanRun, error)
	rates *[]float64
}

// scans reads the same logical range raw from the unsalted table (with each of the driver's
// scanners) and through brine from t.
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
	// The floor of brine's first row: raw scanners over the same buckets' physical ranges, all opened
	// at once with brine's first batch; the time until the last one has its first row.
	parallel := func() (time.Duration, error) {
		ranges, err := t.Salter().BucketRanges(start, end)
		if err != nil {
			return 0, err
		}
		return parallelFirstRows(ctx, r.store.Raw, t.Name(), ranges, firstBatch)
	}
	r.log.Info("bench: range scans", "buckets", buckets, "rows", want)
	if _, err := raw(); err != nil { // warm-up, and a check of both sides' results
		return ScanResult{}, err
	}
	if _, err := brine(); err != nil {
		return ScanResult{}, err
	}
	var rawRate, brineRate, rawV2Rate []float64
	full := []fullScan{{raw, &rawRate}, {brine, &brineRate}}
	if v2, ok := r.store.Raw.(ScanV2Raw); ok {
		rawV2 := func() (scanRun, error) {
			run, err := timeScan(v2.ScanV2(ctx, r.plain, start, end, cfg.ScanBatch))
			if err == nil && run.rows != want {
				err = fmt.Errorf("bench: raw ScanV2 returned %d rows, want %d", run.rows, want)
			}
			return run, err
		}
		if _, err := rawV2(); err != nil {
			return ScanResult{}, err
		}
		full = append(full, fullScan{rawV2, &rawV2Rate})
	}
	for rep := range cfg.Repeat {
		for side := range full {
			f := full[(rep+side)%len(full)]
			run, err := f.run()
			if err != nil {
				return ScanResult{}, err
			}
			*f.rates = append(*f.rates, RowsPerSecond(run.rows, run.elapsed))
		}
	}
	// The first rows, sampled apart from the full scans: each side in turn, scans broken off at
	// their first row, a pause between samples so that one's closing calls do not meet the next
	// one's openings.
	var rawFirst, brineFirst, parallelFirst []time.Duration
	sides := []func() error{
		func() error {
			d, err := firstRow(r.store.Raw.Scan(ctx, r.plain, start, end, cfg.ScanBatch))
			rawFirst = append(rawFirst, d)
			return err
		},
		func() error {
			d, err := firstRow(brineKeys(ctx, t, client.RowRange(start, end), client.BatchSize(cfg.ScanBatch)))
			brineFirst = append(brineFirst, d)
			return err
		},
	}
	if buckets > 1 {
		sides = append(sides, func() error {
			d, err := parallel()
			parallelFirst = append(parallelFirst, d)
			return err
		})
	}
	for i := range cfg.FirstRows {
		for j := range sides {
			if err := sides[(i+j)%len(sides)](); err != nil {
				return ScanResult{}, err
			}
			if err := wait.Sleep(ctx, firstRowPause); err != nil {
				return ScanResult{}, err
			}
		}
	}
	res := ScanResult{
		Buckets: buckets, Rows: want,
		RawRowsPerS: Median(rawRate), BrineRowsPerS: Median(brineRate),
		RawFirstRowMs: ms(MedianDuration(rawFirst)), BrineFirstRowMs: ms(MedianDuration(brineFirst)),
	}
	res.Ratio = Ratio(res.BrineRowsPerS, res.RawRowsPerS)
	if len(rawV2Rate) > 0 {
		res.RawV2RowsPerS = Median(rawV2Rate)
		res.RatioV2 = Ratio(res.BrineRowsPerS, res.RawV2RowsPerS)
	}
	res.FirstRowRatio = Ratio(res.BrineFirstRowMs, res.RawFirstRowMs)
	if len(parallelFirst) > 0 {
		res.RawParallelFirstRowMs = ms(MedianDuration(parallelFirst))
		res.FirstRowOverParallel = Ratio(res.BrineFirstRowMs, res.RawParallelFirstRowMs)
	}
	return res, nil
}

// parallelFirstRows opens one raw scanner per range at once, each asking for first rows, and returns
// the time until every one has its first row (or is empty). No scanner is closed before then, so
// closing RPCs do not compete with the openings being timed.
func parallelFirstRows(ctx context.Context, raw Raw, table string, ranges []salting.BucketRange, first int) (time.Duration, error) {
	var wg sync.WaitGroup
	heads := make(chan error, len(ranges))
	release := make(chan struct{})
	began := time.Now()
	for _, br := range ranges {
		wg.Go(func() {
			for _, err := range raw.Scan(ctx, table, br.Start, br.End, first) {
				heads <- err
				<-release // the scanner stays open until every head is in
				return
			}
			heads <- nil // an empty range
		})
	}
	var err error
	for range ranges {
		err = cmp.Or(err, <-heads)
	}
	took := time.Since(began)
	close(release)
	wg.Wait()
	return took, err
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
		c = client.New(r.count, append([]client.Option{client.WithLogger(r.log), client.WithPrefetch(prefetch)}, r.cfg.ClientOptions...)...)
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
