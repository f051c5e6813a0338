package client

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
)

// Scan returns the rows of the logical range r in logical key order (descending with Reverse). It
// scans every bucket that may hold rows of r in parallel and merges the streams; the sequence yields at
// most one error, last. Breaking out of the loop stops every bucket scan before Scan's iterator returns.
// A range whose start is after its end fails with ErrInvalidArgument (Reverse takes the ascending
// range); one whose start equals its end holds no key and returns no rows.
func (t *Table) Scan(ctx context.Context, r Range, opts ...ReadOption) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		it, err := t.indexed(ctx)
		switch {
		case err != nil:
			yield(Row{}, fmt.Errorf("scan %s: %w", t.name, err))
		case it != nil:
			it.Scan(ctx, r, opts...)(yield)
		default:
			t.scan(ctx, r, opts)(yield)
		}
	}
}

// scan is Scan on the router: a raw handle's.
func (t *Table) scan(ctx context.Context, r Range, opts []ReadOption) iter.Seq2[Row, error] {
	return route.Merged(ctx, t.c.core, t.name, "scan "+t.name, []route.Source{t.rt}, r, readConfig(t.keySchema, opts))
}

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
	srcs := make([]route.Source, len(tables))
	var (
		ks       *keys.Schema
		versions []Column // the version columns of the tables with indexes
	)
	for i, t := range tables {
		// The definitions as each handle last read them, not read again: a read keeps no index, and
		// a scan of many tables (one per period) would read them for every table.
		if t.view != nil {
			if it := t.view.cur.Load(); it.declared {
				versions = append(versions, it.versionColumn())
			}
		}
		srcs[i] = t.rt
		if ks == nil {
			ks = t.keySchema
		}
	}
	scan := func(opts []ReadOption) iter.Seq2[Row, error] {
		return route.Merged(ctx, c.core, name, "scan", srcs, r, readConfig(ks, opts))
	}
	if len(versions) == 0 || slices.ContainsFunc(versions, func(v Column) bool { return !hidesColumn(v, opts) }) {
		return scan(opts)
	}
	return hideVersion(scan, opts)
}
