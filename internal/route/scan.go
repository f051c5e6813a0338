package route

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
	"github.com/brine-kv/brine/internal/saltscan"
	"github.com/brine-kv/brine/internal/telemetry"
	"github.com/brine-kv/brine/salting"
)

// scan is Table.Scan of this physical table alone: a rebucket's reads of its two tables.
func (pt *Phys) scan(ctx context.Context, r backends.Range, rc ReadConfig) iter.Seq2[backends.Row, error] {
	return Merged(ctx, pt.core, pt.Name, "scan "+pt.Name, []Source{pt}, r, rc)
}

// Source is what a fan-out scan reads: a logical table, through its Router, or a physical table, by
// bucket. The scan goes down from the one to the other, never back up.
type Source interface {
	// scanParts returns the streams that read the source's rows of rr (r resumed by rc), and its
	// bucket count.
	scanParts(ctx context.Context, rr, r backends.Range, rc ReadConfig) ([]scanPart, int, error)
	tableName() string
	PrintKey(k []byte) string
}

func (r *Router) tableName() string { return r.logical }
func (pt *Phys) tableName() string  { return pt.Name }

// Merged is the scan of srcs as one stream: Table.Scan and client.ScanTables. name is its table in
// telemetry ("": several); what starts its errors and names the table when it reads one ("scan t"),
// else each stream names its own. rc prints keys by the key schema already (PrintedKeys).
func Merged(ctx context.Context, core *Core, name, what string, srcs []Source, r backends.Range, rc ReadConfig) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		ctx, tc := core.Tel.Begin(ctx, "scan", name)
		defer tc.EndScan(ctx)
		fail := func(err error) {
			tc.Fail(err)
			yield(backends.Row{}, err)
		}
		printKey := KeyText
		if len(srcs) == 1 {
			printKey = srcs[0].PrintKey
		}
		if err := CheckRange(what, r, printKey); err != nil {
			fail(err)
			return
		}
		if err := CheckCursor(what, r, rc.After, printKey); err != nil {
			fail(err)
			return
		}
		rr := rc.Resume(r)
		if len(rr.End) > 0 && bytes.Compare(rr.Start, rr.End) >= 0 {
			return // empty range: nothing to read
		}
		var parts []scanPart
		read, total := 0, 0
		for _, src := range srcs {
			tparts, n, err := src.scanParts(ctx, rr, r, rc)
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
		fanScan(ctx, core, tc, what, name, rc, parts, yield)
	}
}

// scanParts reads the table from the physical table serving it, bucket by bucket, or, while a
// rebucket moves its rows between two tables, as one stream of r whole that merges the two
// (migratingScan).
func (rt *Router) scanParts(ctx context.Context, rr, r backends.Range, rc ReadConfig) ([]scanPart, int, error) {
	v, err := rt.readView(ctx)
	if err != nil {
		return nil, 0, err
	}
	if v.row.state == stateServing || v.row.state == statePause {
		return v.old.scanParts(ctx, rr, r, rc)
	}
	if rc.Buckets != nil {
		return nil, 0, fmt.Errorf("%w: Buckets: a rebucket is moving the table's rows to another salter; scan it whole, or after the rebucket", backends.ErrInvalidArgument)
	}
	whole := func(ctx context.Context) iter.Seq2[backends.Row, error] { return rt.migratingScan(ctx, v, r, rc) }
	return []scanPart{{scan: whole}}, 1, nil
}

// scanParts is one stream per bucket range of rr.
func (pt *Phys) scanParts(_ context.Context, rr, _ backends.Range, rc ReadConfig) ([]scanPart, int, error) {
	ranges, err := pt.Salter.BucketRanges(rr.Start, rr.End)
	if err != nil {
		return nil, 0, err
	}
	if only := rc.Buckets; only != nil {
		n := pt.Salter.Buckets()
		for _, b := range only {
			if b < 0 || b >= n {
				return nil, 0, fmt.Errorf("%w: bucket %d: the table has buckets 0 to %d", backends.ErrInvalidArgument, b, n-1)
			}
		}
		ranges = slices.DeleteFunc(ranges, func(br salting.BucketRange) bool { return !slices.Contains(only, br.Bucket) })
	}
	parts := make([]scanPart, len(ranges))
	for i, br := range ranges {
		parts[i] = scanPart{t: pt, br: br}
	}
	return parts, pt.Salter.Buckets(), nil
}

// CheckRange refuses a range whose start is after its end. Reverse() is how a scan reads
// descending; its range is still given ascending. A range whose start equals its end is empty.
// what starts the error ("scan t"); printKey prints the bounds (KeyText, or a table's printKey).
func CheckRange(what string, r backends.Range, printKey func([]byte) string) error {
	if len(r.End) > 0 && bytes.Compare(r.Start, r.End) > 0 {
		return fmt.Errorf("%s: %w: range start %s is after its end %s (a descending scan takes the ascending range and Reverse())",
			what, backends.ErrInvalidArgument, printKey(r.Start), printKey(r.End))
	}
	return nil
}

// CheckCursor refuses a ResumeAfter cursor outside r: a cursor is the index key of a row the query
// returned, so one outside its range comes from another query (another prefix, another index), and
// resuming there would return nothing or another query's page. Table.Scan and Index.Page refuse one
// alike.
func CheckCursor(what string, r backends.Range, after []byte, printKey func([]byte) string) error {
	if after == nil || (bytes.Compare(after, r.Start) >= 0 && (len(r.End) == 0 || bytes.Compare(after, r.End) < 0)) {
		return nil
	}
	end := "the end"
	if len(r.End) > 0 {
		end = printKey(r.End)
	}
	return fmt.Errorf("%s: %w: ResumeAfter cursor %s is outside the range [%s, %s): a cursor resumes the query that returned it",
		what, backends.ErrInvalidArgument, printKey(after), printKey(r.Start), end)
}

// scanPart is one stream of a fan-out scan: one bucket range of one physical table, or a whole table
// read by scan; table, when set, names the table in the stream's error.
type scanPart struct {
	t     *Phys
	br    salting.BucketRange
	scan  func(ctx context.Context) iter.Seq2[backends.Row, error]
	table string
}

// fanScan is the fan-out of Table.Scan and ScanTables: it checks the read before anything is
// sent, pushes into every part's scan what the store can do (limit, first batch, filter), and merges
// the parts in logical order, yielding at most one error, last, prefixed with what ("scan t")
// unless the store's own error names the operation and table already (the physical table is the
// logical one, table).
func fanScan(ctx context.Context, core *Core, tc *telemetry.Call, what, table string, rc ReadConfig, parts []scanPart, yield func(backends.Row, error) bool) {
	if err := driverkit.CheckLogicalFilter(rc.Read.Filter, rc.Read.Columns); err != nil {
		err = fmt.Errorf("%s: %w", what, err)
		tc.Fail(err)
		yield(backends.Row{}, err)
		return
	}
	sopts := backends.ScanOptions{
		ReadOptions: rc.Read, Reverse: rc.Reverse, Limit: rc.Limit, BatchSize: rc.BatchSize,
		FirstBatch: rc.firstBatch(len(parts)),
	}
	var local *backends.Filter
	if sopts.Filter, local = splitFilter(rc.Read.Filter); local != nil {
		// A bucket's rows may fail on their logical keys: it reads unlimited, in growing batches.
		sopts.Limit, sopts.FirstBatch = 0, scanFirstBatch
	}
	read := func(sctx context.Context, p scanPart) iter.Seq2[backends.Row, error] {
		var rows iter.Seq2[backends.Row, error]
		if p.scan != nil {
			rows = p.scan(sctx)
		} else {
			rows = p.t.BucketScan(sctx, p.br, sopts, local)
		}
		if p.table != "" {
			rows = tableErrors(p.table, rows)
		}
		return rows
	}
	merged := saltscan.Merge(ctx, parts, read, rowKey, rc.Reverse, fanout.Options{
		Concurrency: core.ScanConcurrency, // 0: every bucket at once, whatever WithConcurrency says
		Prefetch:    rc.prefetch(core.Prefetch, len(parts)),
		Limit:       rc.Limit,
	})
	for row, err := range merged {
		if err != nil {
			if err = sameInEveryBucket(err); !storeNames(err, table) {
				err = fmt.Errorf("%s: %w", what, err)
			}
			tc.Fail(err)
			yield(backends.Row{}, err)
			return
		}
		tc.AddRow()
		if !yield(row, nil) {
			return
		}
	}
}

// BucketScan reads one bucket's physical range and turns physical keys back into logical ones, in the
// bucket's own goroutine so that the merge only compares; it drops the rows local (the filter's part
// on logical keys, nil for none) fails.
func (pt *Phys) BucketScan(ctx context.Context, br salting.BucketRange, opts backends.ScanOptions, local *backends.Filter) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		ctx, bc := pt.core.Tel.BeginBucket(ctx, pt.Name, br.Bucket)
		defer bc.End(ctx)
		for row, err := range pt.core.Backend.Scan(ctx, pt.Name, backends.Range{Start: br.Start, End: br.End}, opts) {
			if err != nil {
				err = &storeError{table: pt.Name, err: err}
				if !errors.Is(err, backends.ErrInvalidArgument) {
					err = fmt.Errorf("bucket %d: %w", br.Bucket, err)
				}
				bc.Fail(err)
				yield(backends.Row{}, err)
				return
			}
			bc.Row(row.Key, row.Cells)
			logical, err := pt.Salter.AppendLogical(make([]byte, 0, len(row.Key)), row.Key)
			if err != nil {
				err = fmt.Errorf("bucket %d: row %s: %w", br.Bucket, KeyText(row.Key), err)
				bc.Fail(err)
				yield(backends.Row{}, err)
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

func rowKey(r backends.Row) []byte { return r.Key }

// tableErrors names the table in a stream's error.
func tableErrors(table string, src iter.Seq2[backends.Row, error]) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
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
// not a bucket that changes from run to run (BucketScan leaves those errors without its bucket).
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
