package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/internal/telemetry"
	"github.com/brine-kv/brine/salting"
)

// Scan returns the rows of the logical range r in logical key order (descending with Reverse). It
// scans every bucket that may hold rows of r in parallel and merges the streams; the sequence yields at
// most one error, last. Breaking out of the loop stops every bucket scan before Scan's iterator returns.
// A range whose start is after its end fails with ErrInvalidArgument (Reverse takes the ascending
// range); one whose start equals its end holds no key and returns no rows.
func (t *Table) Scan(ctx context.Context, r Range, opts ...ReadOption) iter.Seq2[Row, error] {
	return t.c.merged(ctx, t.name, "scan "+t.name, []scanSource{t}, r, printedKeys(t.keySchema, opts))
}

// scan is Table.Scan of this physical table alone: a rebucket's reads of its two tables.
func (pt *physTable) scan(ctx context.Context, r Range, opts []ReadOption) iter.Seq2[Row, error] {
	return pt.c.merged(ctx, pt.name, "scan "+pt.name, []scanSource{pt}, r, opts)
}

// scanSource is what a fan-out scan reads: a Table, through its router, or a physical table, by
// bucket. The scan goes down from the one to the other, never back up.
type scanSource interface {
	// scanParts returns the streams that read the source's rows of rr (r resumed by opts), and its
	// bucket count.
	scanParts(ctx context.Context, rr, r Range, opts []ReadOption) ([]scanPart, int, error)
	tableName() string
	printKey(k []byte) string
}

func (t *Table) tableName() string      { return t.name }
func (pt *physTable) tableName() string { return pt.name }

// ScanTables returns the rows of the logical range r in every table of tables, merged into one stream
// in logical key order (descending with Reverse): it is Table.Scan over several tables, with one k-way
// merge over every bucket of every table, so tables whose keys interleave come out in order too (such
// as one table per month whose keys do not start with the time). A key held by several tables is
// yielded once for each, in the order of tables. Limit and ResumeAfter apply to the merged stream, and
// KeyRegexFilter matches keys as the first table with a key schema prints them. The tables may be of
// other clients; c's scan settings (WithScanConcurrency, WithPrefetch) and telemetry apply to the
// merge, whose span names no table when it reads several (each bucket's span names its own). An
// error names the table it came from ("scan: table b: bucket 2: ...").
func (c *Client) ScanTables(ctx context.Context, tables []*Table, r Range, opts ...ReadOption) iter.Seq2[Row, error] {
	name := "" // the call's span and metrics name no table when it reads several; its buckets' do
	if len(tables) == 1 {
		name = tables[0].name
	}
	srcs := make([]scanSource, len(tables))
	printed := false
	for i, t := range tables {
		srcs[i] = t
		if t.keySchema != nil && !printed {
			opts, printed = printedKeys(t.keySchema, opts), true
		}
	}
	return c.merged(ctx, name, "scan", srcs, r, opts)
}

// merged is the scan of srcs as one stream. name is its table in telemetry ("": several); what
// starts its errors and names the table when it reads one ("scan t"), else each stream names its own.
func (c *Client) merged(ctx context.Context, name, what string, srcs []scanSource, r Range, opts []ReadOption) iter.Seq2[Row, error] {
	cfg := newReadConfig(opts)
	return func(yield func(Row, error) bool) {
		ctx, tc := c.tel.Begin(ctx, "scan", name)
		defer tc.EndScan(ctx)
		fail := func(err error) {
			tc.Fail(err)
			yield(Row{}, err)
		}
		printKey := keyText
		if len(srcs) == 1 {
			printKey = srcs[0].printKey
		}
		if err := checkRange(what, r, printKey); err != nil {
			fail(err)
			return
		}
		rr := cfg.resume(r)
		if len(rr.End) > 0 && bytes.Compare(rr.Start, rr.End) >= 0 {
			return // empty range: nothing to read
		}
		var parts []scanPart
		read, total := 0, 0
		for _, src := range srcs {
			tparts, n, err := src.scanParts(ctx, rr, r, opts)
			if err != nil {
				fail(fmt.Errorf("%s: table %s: %w", what, src.tableName(), err))
				return
			}
			if what == "scan" {
				for i := range tparts {
					tparts[i].table = src.tableName()
				}
			}
			parts = append(parts, tparts...)
			read, total = read+len(tparts), total+n
		}
		tc.ScanBuckets(read, total)
		c.fanScan(ctx, tc, what, name, cfg, parts, yield)
	}
}

// scanParts reads t from the physical table serving it, bucket by bucket, or, while a rebucket moves
// t's rows between two tables, as one stream of r whole that merges the two (migratingScan).
func (t *Table) scanParts(ctx context.Context, rr, r Range, opts []ReadOption) ([]scanPart, int, error) {
	v, err := t.rt.readView(ctx)
	if err != nil {
		return nil, 0, err
	}
	if v.row.state == stateServing || v.row.state == statePause {
		return v.old.scanParts(ctx, rr, r, opts)
	}
	if newReadConfig(opts).buckets != nil {
		return nil, 0, fmt.Errorf("%w: Buckets: a rebucket is moving the table's rows to another salter; scan it whole, or after the rebucket", ErrInvalidArgument)
	}
	whole := func(ctx context.Context) iter.Seq2[Row, error] { return t.rt.migratingScan(ctx, v, r, opts) }
	return []scanPart{{scan: whole}}, 1, nil
}

// scanParts is one stream per bucket range of rr.
func (pt *physTable) scanParts(_ context.Context, rr, _ Range, opts []ReadOption) ([]scanPart, int, error) {
	ranges, err := pt.salter.BucketRanges(rr.Start, rr.End)
	if err != nil {
		return nil, 0, err
	}
	if only := newReadConfig(opts).buckets; only != nil {
		n := pt.salter.Buckets()
		for _, b := range only {
			if b < 0 || b >= n {
				return nil, 0, fmt.Errorf("%w: bucket %d: the table has buckets 0 to %d", ErrInvalidArgument, b, n-1)
			}
		}
		ranges = slices.DeleteFunc(ranges, func(br salting.BucketRange) bool { return !slices.Contains(only, br.Bucket) })
	}
	parts := make([]scanPart, len(ranges))
	for i, br := range ranges {
		parts[i] = scanPart{t: pt, br: br}
	}
	return parts, pt.salter.Buckets(), nil
}

// checkRange refuses a range whose start is after its end. Reverse() is how a scan reads
// descending; its range is still given ascending. A range whose start equals its end is empty.
// what starts the error ("scan t"); printKey prints the bounds (keyText, or a table's printKey).
func checkRange(what string, r Range, printKey func([]byte) string) error {
	if len(r.End) > 0 && bytes.Compare(r.Start, r.End) > 0 {
		return fmt.Errorf("%s: %w: range start %s is after its end %s (a descending scan takes the ascending range and Reverse())",
			what, ErrInvalidArgument, printKey(r.Start), printKey(r.End))
	}
	return nil
}

// scanPart is one stream of a fan-out scan: one bucket range of one physical table, or a whole table
// read by scan; table, when set, names the table in the stream's error.
type scanPart struct {
	t     *physTable
	br    salting.BucketRange
	scan  func(ctx context.Context) iter.Seq2[Row, error]
	table string
}

// fanScan is the fan-out of Table.Scan and ScanTables: it checks the read before anything is
// sent, pushes into every part's scan what the store can do (limit, first batch, filter), and merges
// the parts in logical order, yielding at most one error, last, prefixed with what ("scan t")
// unless the store's own error names the operation and table already (the physical table is the
// logical one, table).
func (c *Client) fanScan(ctx context.Context, tc *telemetry.Call, what, table string, cfg readConfig, parts []scanPart, yield func(Row, error) bool) {
	if err := driverkit.CheckLogicalFilter(cfg.read.Filter, cfg.read.Columns); err != nil {
		err = fmt.Errorf("%s: %w", what, err)
		tc.Fail(err)
		yield(Row{}, err)
		return
	}
	sopts := backends.ScanOptions{
		ReadOptions: cfg.read, Reverse: cfg.reverse, Limit: cfg.limit, BatchSize: cfg.batchSize,
		FirstBatch: cfg.firstBatch(len(parts)),
	}
	var local *Filter
	if sopts.Filter, local = splitFilter(cfg.read.Filter); local != nil {
		// A bucket's rows may fail on their logical keys: it reads unlimited, in growing batches.
		sopts.Limit, sopts.FirstBatch = 0, scanFirstBatch
	}
	cmp := compareKeys
	if cfg.reverse {
		cmp = compareKeysDesc
	}
	open := func(sctx context.Context, i int) iter.Seq2[Row, error] {
		p := parts[i]
		var rows iter.Seq2[Row, error]
		if p.scan != nil {
			rows = p.scan(sctx)
		} else {
			rows = p.t.bucketScan(sctx, p.br, sopts, local)
		}
		if p.table != "" {
			rows = tableErrors(p.table, rows)
		}
		return rows
	}
	merged := fanout.MergeOpen(ctx, len(parts), open, cmp, fanout.Options{
		Concurrency: c.scanConcurrency, // 0: every bucket at once, whatever WithConcurrency says
		Prefetch:    cfg.prefetch(c.prefetch, len(parts)),
		Limit:       cfg.limit,
	})
	for row, err := range merged {
		if err != nil {
			if err = sameInEveryBucket(err); !storeNames(err, table) {
				err = fmt.Errorf("%s: %w", what, err)
			}
			tc.Fail(err)
			yield(Row{}, err)
			return
		}
		tc.AddRow()
		if !yield(row, nil) {
			return
		}
	}
}

// bucketScan reads one bucket's physical range and turns physical keys back into logical ones, in the
// bucket's own goroutine so that the merge only compares; it drops the rows local (the filter's part
// on logical keys, nil for none) fails.
func (pt *physTable) bucketScan(ctx context.Context, br salting.BucketRange, opts backends.ScanOptions, local *Filter) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		ctx, bc := pt.c.tel.BeginBucket(ctx, pt.name, br.Bucket)
		defer bc.End(ctx)
		for row, err := range pt.c.backend.Scan(ctx, pt.name, backends.Range{Start: br.Start, End: br.End}, opts) {
			if err != nil {
				err = &storeError{table: pt.name, err: err}
				if !errors.Is(err, backends.ErrInvalidArgument) {
					err = fmt.Errorf("bucket %d: %w", br.Bucket, err)
				}
				bc.Fail(err)
				yield(Row{}, err)
				return
			}
			bc.Row(row.Key, row.Cells)
			logical, err := pt.salter.AppendLogical(make([]byte, 0, len(row.Key)), row.Key)
			if err != nil {
				err = fmt.Errorf("bucket %d: row %s: %w", br.Bucket, keyText(row.Key), err)
				bc.Fail(err)
				yield(Row{}, err)
				return
			}
			row.Key = logical
			if row.Cells = driverkit.ApplyRow(local, logical, row.Cells); len(row.Cells) == 0 {
				continue
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}

func compareKeys(a, b Row) int     { return bytes.Compare(a.Key, b.Key) }
func compareKeysDesc(a, b Row) int { return bytes.Compare(b.Key, a.Key) }

// tableErrors names the table in a stream's error.
func tableErrors(table string, src iter.Seq2[Row, error]) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for row, err := range src {
			if err != nil {
				err = fmt.Errorf("table %s: %w", table, err)
			}
			if !yield(row, err) || err != nil {
				return
			}
		}
	}
}

// sameInEveryBucket drops the merge's stream number from an error that every bucket gives alike,
// bad input such as an unknown column family: the user's error names the table and the input once,
// not a bucket that changes from run to run (bucketScan leaves those errors without its bucket).
// storeError is an error of the store's own scan of table, which names the scan and the table
// (backends.Backend.Scan).
type storeError struct {
	table string
	err   error
}

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// storeNames reports whether err is the store's scan error about the physical table table: a
// prefix naming the scan and the table would name them twice.
func storeNames(err error, table string) bool {
	var se *storeError
	return table != "" && errors.As(err, &se) && se.table == table
}

func sameInEveryBucket(err error) error {
	var se *fanout.StreamError
	if errors.As(err, &se) && errors.Is(se.Err, backends.ErrInvalidArgument) {
		return se.Err
	}
	return err
}
