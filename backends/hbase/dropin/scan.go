package dropin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/internal/saltscan"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Scan reads the logical range of s from every bucket that may hold it and merges the buckets by
// logical key (see the package comment). Errors that the request itself causes (ErrUnsupported, bad
// keys, no salter) are returned by the first Next, as gohbase reports its own scan errors.
func (c *Client) Scan(s *hrpc.Scan) hrpc.Scanner {
	if s == nil {
		return &scanner{err: fmt.Errorf("dropin: Scan: %w: nil request", backends.ErrInvalidArgument)}
	}
	ctx := s.Context()
	if err := c.begin(ctx); err != nil {
		return &scanner{err: err}
	}
	seq, metrics, err := c.scan(s)
	if err != nil {
		return &scanner{err: c.asGohbase(ctx, err)}
	}
	next, stop := iter.Pull2(seq)
	return &scanner{ctx: ctx, next: next, stop: stop, metrics: metrics, fix: func(err error) error { return c.asGohbase(ctx, err) }}
}

func (c *Client) scan(s *hrpc.Scan) (iter.Seq2[*hrpc.Result, error], *scanMetrics, error) {
	p, err := c.planScan(s)
	if err != nil || p.reversed {
		return p.reverse, p.metrics, err
	}
	if p.empty {
		return func(func(*hrpc.Result, error) bool) {}, p.metrics, nil
	}
	t, hide := p.t, p.hide
	stream := func(ctx context.Context, r salting.BucketRange) iter.Seq2[*hrpc.Result, error] {
		return func(yield func(*hrpc.Result, error) bool) {
			bs, err := p.bucketScan(ctx, r)
			if err != nil {
				yield(nil, fmt.Errorf("bucket %d: %w", r.Bucket, err))
				return
			}
			sc := c.inner.Scan(bs)
			defer func() {
				sc.Close()
				p.metrics.add(sc.GetScanMetrics())
			}()
			for {
				res, err := sc.Next()
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					yield(nil, fmt.Errorf("bucket %d: %w", r.Bucket, gohbaseError{err}))
					return
				}
				if res != nil && hide {
					res.Cells = t.visible(res.Cells)
				}
				if res == nil || len(res.Cells) == 0 {
					continue // no cells, no row to place (gohbase does not return such results)
				}
				if err := logicalResult(t.salter, res); err != nil {
					yield(nil, fmt.Errorf("bucket %d: %w", r.Bucket, err))
					return
				}
				if !yield(res, nil) {
					return
				}
			}
		}
	}
	return merge(s.Context(), c, p.table, p.ranges, stream, rowOf, false), p.metrics, nil
}

// scanPlan is a Scan checked and split into the physical ranges of its buckets, with the options
// every bucket's scan is built with.
type scanPlan struct {
	s       *hrpc.Scan
	t       tableInfo
	table   string
	want    *pb.ScanRequest // s's request, as sent to the first bucket
	ranges  []salting.BucketRange
	opts    []func(hrpc.Call) error
	hide    bool         // drop the version column (tableInfo.hides)
	empty   bool         // no bucket can hold a row of the range
	metrics *scanMetrics // nil without TrackScanMetrics

	// prefixed: the Scan's filter, whose PrefixFilters each bucket's scan carries salted
	// (saltPrefixes), over the Scan's own range; nil when they became the range (see planScan).
	prefixed *pb.Filter

	// reversed: s is reversed, and read as one stream of whole rows, reverse, through the driver.
	reversed bool
	reverse  iter.Seq2[*hrpc.Result, error]
}

// planScan checks s and plans its bucket scans (forward), or its reversed read.
func (c *Client) planScan(s *hrpc.Scan) (scanPlan, error) {
	table := string(s.Table())
	ctx := s.Context()
	t, err := c.table(ctx, table)
	if err != nil {
		return scanPlan{}, err
	}
	salter := t.salter
	want, ok := requestProto(s).(*pb.ScanRequest)
	switch {
	case !ok:
		return scanPlan{}, unsupported("Scan", table, "request of unexpected form")
	case want.ScannerId != nil:
		return scanPlan{}, unsupported("Scan", table, "option ScannerID (a scanner of gohbase's own)")
	case want.GetCloseScanner():
		return scanPlan{}, unsupported("Scan", table, "option CloseScanner")
	case want.GetRenew():
		return scanPlan{}, unsupported("Scan", table, "option RenewalScan (a request of gohbase's own scanner)")
	case want.Scan == nil:
		return scanPlan{}, unsupported("Scan", table, "request of unexpected form")
	}
	p := scanPlan{s: s, t: t, table: table, want: want}
	if s.TrackScanMetrics() {
		p.metrics = &scanMetrics{m: map[string]int64{}}
	}
	if s.Reversed() {
		if err := checkFilter(want.Scan.Filter, true); err != nil {
			return scanPlan{}, unsupported("Scan", table, err.Error())
		}
		p.reversed = true
		p.reverse, err = c.reverseScan(s, t, want)
		return p, err
	}

	start, stop, opts := s.StartRow(), s.StopRow(), s.Options()
	if !unsalted(salter) {
		rest, pre, err := prefixes(want.Scan.Filter)
		if err != nil {
			return scanPlan{}, unsupported("Scan", table, err.Error())
		}
		if err := checkFilter(rest, true); err != nil {
			return scanPlan{}, unsupported("Scan", table, err.Error())
		}
		if len(pre) > 0 {
			if _, layout := salting.BucketPrefix(salter, 0); layout && s.TrackScanMetrics() {
				// Scan metrics count what the server reads and filters: read what it reads on an
				// unsalted table, the Scan's own range, and let it filter by the salted prefixes.
				p.prefixed = want.Scan.Filter
			} else {
				// The same rows for less: only the prefixes' range is read, and no row is filtered.
				if start, stop, p.empty = prefixRange(start, stop, pre); p.empty {
					return p, nil
				}
				want.Scan.Filter = rest
				opts = append(opts, hrpc.Filters(pbFilter{rest}))
			}
		}
	}
	ranges, err := salter.BucketRanges(start, stop)
	if err != nil {
		return scanPlan{}, fmt.Errorf("dropin: Scan %q: %w: %w", table, backends.ErrInvalidKey, err)
	}
	if err := checkBounds("Scan", table, ranges); err != nil {
		return scanPlan{}, err
	}
	if len(ranges) == 0 {
		p.empty = true
		return p, nil
	}
	// The bucket scans are s rebuilt on each bucket's physical range (and salted prefixes); check
	// once that the rebuild keeps everything else.
	probe, err := p.bucketScanWith(ctx, ranges[0], opts)
	if err != nil {
		return scanPlan{}, fmt.Errorf("dropin: Scan %q: %w", table, err)
	}
	want.Scan.StartRow, want.Scan.StopRow = ranges[0].Start, ranges[0].End
	if p.prefixed != nil {
		want.Scan.Filter = requestProto(probe).(*pb.ScanRequest).Scan.Filter
	}
	if d := protoDiff(normalize(want), normalize(requestProto(probe))); len(d) > 0 {
		return scanPlan{}, unsupported("Scan", table, "cannot carry over "+strings.Join(d, ", "))
	}
	if probe.AllowPartialResults() != s.AllowPartialResults() {
		return scanPlan{}, unsupported("Scan", table, "cannot carry over AllowPartialResults")
	}
	if h := s.ScanStatsHandler(); h != nil {
		// gohbase calls the handler from its one scanner's goroutine; the buckets' scanners run in
		// goroutines of their own, so their calls are made one at a time.
		var mu sync.Mutex
		opts = append(opts, hrpc.WithScanStatsHandler(func(st *hrpc.ScanStats) {
			mu.Lock()
			defer mu.Unlock()
			h(st)
		}))
	}
	// Every bucket scan reports as the one scan gohbase would have made.
	p.opts = append(opts, hrpc.ScanStatsID(s.ScanStatsID()))
	p.ranges, p.hide = ranges, t.hides(want.Scan.Column)
	return p, nil
}

// bucketScan is the scan of one bucket's range. Its options are clipped: gohbase's scanner appends
// to a Scan's Options() when it moves to the next region (scanner.makeScanRequest), and the bucket
// scans, whose scanners run at once, would otherwise append into the one array they share (a data
// race the HBase tests caught under -race).
func (p scanPlan) bucketScan(ctx context.Context, r salting.BucketRange) (*hrpc.Scan, error) {
	return p.bucketScanWith(ctx, r, p.opts)
}

// bucketScanWith is bucketScan with opts for the Scan's, and the bucket's salted prefixes if any.
func (p scanPlan) bucketScanWith(ctx context.Context, r salting.BucketRange, opts []func(hrpc.Call) error) (*hrpc.Scan, error) {
	opts = slices.Clip(opts)
	if p.prefixed != nil {
		pfx, ok := salting.BucketPrefix(p.t.salter, r.Bucket)
		if !ok {
			return nil, fmt.Errorf("no prefix for bucket %d", r.Bucket)
		}
		f, err := saltPrefixes(p.prefixed, pfx)
		if err != nil {
			return nil, err
		}
		opts = append(opts, hrpc.Filters(pbFilter{f}))
	}
	return hrpc.NewScanRange(ctx, p.s.Table(), r.Start, r.End, opts...)
}

// scanMetrics sums the scan metrics of a Scan's bucket scanners, each added when its scanner ends.
type scanMetrics struct {
	mu sync.Mutex
	m  map[string]int64
}

func (sm *scanMetrics) add(m map[string]int64) {
	if sm == nil {
		return
	}
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for k, v := range m {
		sm.m[k] += v
	}
}

// get is the sums so far (nil without TrackScanMetrics, as gohbase's).
func (sm *scanMetrics) get() map[string]int64 {
	if sm == nil {
		return nil
	}
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return maps.Clone(sm.m)
}

// merge is the salted fan-out and merge of every scan of brine (internal/saltscan) over the bucket
// ranges, each read by stream; key is a result's logical row key.
func merge[T any](ctx context.Context, c *Client, table string, ranges []salting.BucketRange,
	stream func(context.Context, salting.BucketRange) iter.Seq2[T, error],
	key func(T) []byte, reverse bool) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		opts := fanout.Options{Concurrency: c.concurrency, Prefetch: c.prefetch}
		for res, err := range saltscan.Merge(ctx, ranges, stream, key, reverse, opts) {
			if err != nil {
				yield(zero, fmt.Errorf("dropin: Scan %q: %w", table, err))
				return
			}
			if !yield(res, nil) {
				return
			}
		}
	}
}

func rowOf(r *hrpc.Result) []byte { return r.Cells[0].Row }

// reverseScan reads (StopRow, StartRow] newest key first, each bucket through package hbase's
// reverse scan (see the package comment for why not gohbase's).
func (c *Client) reverseScan(s *hrpc.Scan, t tableInfo, want *pb.ScanRequest) (iter.Seq2[*hrpc.Result, error], error) {
	const call = "Scan (Reversed)"
	salter := t.salter
	table := string(s.Table())
	ctx := s.Context()
	if c.backend == nil {
		return nil, unsupported(call, table, "a reversed scan needs the brine HBase driver (Open or "+
			"WithBackend): gohbase's own reversed scanner skips rows at region boundaries")
	}
	// What the driver's scan carries: columns and rows per RPC. Anything else in the request is refused.
	var cols []backends.Column
	fams := map[string][]string{}
	for _, col := range want.Scan.Column {
		f := string(col.Family)
		fams[f] = nil
		if len(col.Qualifier) == 0 {
			cols = append(cols, backends.Column{Family: f})
		}
		for _, q := range col.Qualifier {
			if len(q) == 0 {
				return nil, unsupported(call, table, "the empty qualifier of family "+f)
			}
			cols = append(cols, backends.Column{Family: f, Qualifier: string(q)})
			fams[f] = append(fams[f], string(q))
		}
	}
	carried := []func(hrpc.Call) error{hrpc.Reversed(), hrpc.NumberOfRows(s.NumberOfRows())}
	if len(fams) > 0 {
		carried = append(carried, hrpc.Families(fams))
	}
	ref, err := hrpc.NewScanRange(ctx, s.Table(), s.StartRow(), s.StopRow(), carried...)
	if err != nil {
		return nil, fmt.Errorf("dropin: %s %q: %w", call, table, err)
	}
	if d := protoDiff(normalize(want), normalize(requestProto(ref))); len(d) > 0 {
		return nil, unsupported(call, table, "cannot carry over "+strings.Join(d, ", "))
	}
	batch := 0
	if n := s.NumberOfRows(); n > 0 && n != hrpc.DefaultNumberOfRows {
		batch = int(n)
	}

	// HBase reads a reversed scan from StartRow (inclusive) down to StopRow (exclusive): the logical
	// range [StopRow+0x00, StartRow+0x00), empty bounds unbounded.
	ranges, err := salter.BucketRanges(successor(s.StopRow()), successor(s.StartRow()))
	if err != nil {
		return nil, fmt.Errorf("dropin: %s %q: %w: %w", call, table, backends.ErrInvalidKey, err)
	}
	if err := checkBounds(call, table, ranges); err != nil {
		return nil, err
	}
	opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{Columns: cols}, Reverse: true, BatchSize: batch}
	hide := t.hides(want.Scan.Column)
	stream := func(ctx context.Context, r salting.BucketRange) iter.Seq2[*hrpc.Result, error] {
		return func(yield func(*hrpc.Result, error) bool) {
			for row, err := range c.backend.Scan(ctx, table, backends.Range{Start: r.Start, End: r.End}, opts) {
				if err != nil {
					yield(nil, fmt.Errorf("bucket %d: %w", r.Bucket, err))
					return
				}
				res, err := rowResult(salter, row)
				if err != nil {
					yield(nil, fmt.Errorf("bucket %d: %w", r.Bucket, err))
					return
				}
				if hide {
					res.Cells = t.visible(res.Cells)
				}
				if len(res.Cells) == 0 {
					continue
				}
				if !yield(res, nil) {
					return
				}
			}
		}
	}
	return merge(ctx, c, table, ranges, stream, rowOf, true), nil
}

// successor is the least key greater than k (nil, "unbounded", for an empty k).
func successor(k []byte) []byte {
	if len(k) == 0 {
		return nil
	}
	return keys.Successor(k)
}

// checkBounds refuses physical scan bounds gohbase could never locate a region for.
func checkBounds(call, table string, ranges []salting.BucketRange) error {
	for _, r := range ranges {
		if len(r.Start) > hbase.MaxKeyLen || len(r.End) > hbase.MaxKeyLen {
			return fmt.Errorf("dropin: %s %q: %w: salted range bound longer than %d bytes", call, table, backends.ErrInvalidKey, hbase.MaxKeyLen)
		}
	}
	return nil
}

// logicalResult replaces the physical row key of every cell of res (one row) by the logical one.
func logicalResult(salter salting.Salter, res *hrpc.Result) error {
	phys := res.Cells[0].Row
	logical, err := salter.AppendLogical(nil, phys)
	if err != nil {
		return err
	}
	for _, cell := range res.Cells {
		if !bytes.Equal(cell.Row, phys) {
			return fmt.Errorf("one result holds rows %q and %q", phys, cell.Row)
		}
	}
	for _, cell := range res.Cells {
		cell.Row = logical
	}
	return nil
}

// rowResult turns a row of the driver into gohbase's result form, under its logical key.
func rowResult(salter salting.Salter, row backends.Row) (*hrpc.Result, error) {
	logical, err := salter.AppendLogical(nil, row.Key)
	if err != nil {
		return nil, err
	}
	res := &hrpc.Result{Cells: make([]*hrpc.Cell, len(row.Cells))}
	for i, cell := range row.Cells {
		ts, typ := uint64(cell.Timestamp), pb.CellType_PUT
		res.Cells[i] = &hrpc.Cell{
			Row: logical, Family: []byte(cell.Family), Qualifier: []byte(cell.Qualifier),
			Value: cell.Value, Timestamp: &ts, CellType: &typ,
		}
	}
	return res, nil
}

// scanner is the hrpc.Scanner of one Scan: a pull over the merged buckets. Like gohbase's scanner it
// is for one goroutine at a time.
type scanner struct {
	ctx     context.Context // the Scan's; nil for a scanner that only reports err
	next    func() (*hrpc.Result, error, bool)
	stop    func()
	fix     func(error) error // to the error gohbase would have returned (asGohbase)
	err     error             // reported by the first Next (a request the wrapper refused)
	done    bool
	metrics *scanMetrics
}

// Next returns the next row in logical order; io.EOF after the last one, and after an error.
func (s *scanner) Next() (*hrpc.Result, error) {
	if s.err != nil {
		err := s.err
		s.err, s.done = nil, true
		return nil, err
	}
	if s.done {
		return nil, io.EOF
	}
	if err := s.ctx.Err(); err != nil {
		// As gohbase's scanner: a done context ends the scan at the next call, rows buffered or not.
		s.Close()
		return nil, err
	}
	res, err, ok := s.next()
	if !ok || err != nil {
		s.Close()
		if err != nil {
			return nil, s.fix(err)
		}
		return nil, io.EOF
	}
	return res, nil
}

// Close stops every bucket scan and returns once their goroutines have ended.
func (s *scanner) Close() error {
	s.done = true
	if s.stop != nil {
		s.stop()
	}
	return nil
}

// GetScanMetrics is the sum of the metrics of the buckets' scanners (nil unless the Scan has
// TrackScanMetrics). As gohbase's, it is complete once the scanner is closed or at io.EOF: a bucket's
// metrics are added when its scanner ends.
func (s *scanner) GetScanMetrics() map[string]int64 { return s.metrics.get() }
