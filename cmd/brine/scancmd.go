package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/records"
)

func runScan(ctx context.Context, env *cliEnv, args []string) error {
	fs, tc := newRowCommand(env, "scan")
	start := fs.String("start", "", "first key (inclusive); with a key schema, a key's leading values")
	end := fs.String("end", "", "end key (exclusive); with a key schema, a key's leading values")
	prefix := fs.String("prefix", "", "scan only keys with this prefix (instead of --start/--end); with a key schema, the leading values, each matched whole (a number or fixed-width value last is refused: use --start/--end)")
	limit := fs.Int("limit", 0, "most rows to return (0: all)")
	reverse := fs.Bool("reverse", false, "descending key order")
	after := fs.String("after", "", "resume after this key (the cursor a previous page printed)")
	keysOnly := fs.Bool("keys-only", false, "print keys only")
	format := fs.String("format", "text", "output: text, or jsonl or csv as import reads them (key fields by name, a column per qualifier, the cells' timestamp in _ts), or cells (every cell, any bytes, as JSON lines)")
	strict := fs.Bool("strict", false, "a --filter column no row in the range has, or values a comparison cannot read, is an error (exit 1), not a warning")
	var byIndex indexFlag
	byIndex.register(fs, true)
	filterExpr := fs.String("filter", "", "only rows passing this filter, e.g. 'status = paid and ts > 2026-01-01' (=, !=, <, <=, >, >=, ~ regex; and, or, not, parentheses; family:qualifier or a qualifier in family "+client.DefaultFamily+"; each comparison compares numbers with a number (12.5 = 12.50), times (ms, date or RFC 3339 values) with a date, else text; @key ~ regex for the key as printed; @family ~ re, @qualifier ~ re or op value, @cells <= N or > N trim each row's cells)")
	if err := tc.open(ctx, env, fs, args, func(n int) bool { return n == 0 }, "usage: brine scan --table T [flags] (no positional arguments)"); err != nil {
		return err
	}
	defer tc.c.Close()
	if *prefix != "" && (*start != "" || *end != "") {
		return errors.New("--prefix and --start/--end exclude each other")
	}
	if *limit < 0 {
		return fmt.Errorf("--limit %d: want 0 (all) or more", *limit)
	}
	out, err := newRowOutput(env.stdout, *format, *keysOnly, tc)
	if err != nil {
		return err
	}
	if byIndex.name != "" {
		return byIndex.scan(ctx, env, tc, indexScan{start: *start, end: *end, prefix: *prefix, after: *after,
			filter: *filterExpr, limit: *limit, reverse: *reverse, out: out})
	}
	r, err := scanRange(tc.kf, *start, *end, *prefix)
	if err != nil {
		return err
	}
	var opts []client.ReadOption
	var sf *scanFilter
	if *filterExpr != "" {
		f, err := parseFilter(*filterExpr)
		if err != nil {
			return err
		}
		sf = newScanFilter(f, tc.kf, tc.t.KeySchema())
		opts = append(opts, sf.options()...)
	}
	if *limit > 0 && (sf == nil || !sf.local) {
		opts = append(opts, client.Limit(*limit+1)) // one more: does a next page hold rows?
	}
	if *reverse {
		opts = append(opts, client.Reverse())
	}
	if *after != "" {
		k, err := tc.kf.parse(*after)
		if err != nil {
			return fmt.Errorf("--after: %w", err)
		}
		opts = append(opts, client.ResumeAfter(k))
	}
	began := time.Now()
	var n int
	var last []byte
	more := false
	for row, err := range tc.t.Scan(ctx, r, opts...) {
		if err != nil {
			return err
		}
		if sf != nil {
			var ok bool
			if row, ok = sf.apply(row); !ok {
				continue
			}
		}
		if *limit > 0 && n == *limit {
			more = true
			break
		}
		n++
		last = row.Key
		if err := out.put(row); err != nil {
			return err
		}
	}
	if err := out.flush(); err != nil {
		return err
	}
	if sf != nil {
		if err := sf.warn(ctx, env.stderr, tc.t, r, *strict); err != nil {
			return err
		}
	}
	fmt.Fprintf(env.stderr, "%d rows in %v", n, time.Since(began).Round(time.Microsecond))
	switch {
	case more:
		fmt.Fprintf(env.stderr, "; next page: --after %s", shellQuote(tc.kf.format(last)))
	case *limit > 0:
		fmt.Fprint(env.stderr, "; last page")
	}
	fmt.Fprintln(env.stderr)
	return nil
}

// rowOutput prints the rows of scan and get: as text, or in a format a program reads (--format).
type rowOutput struct {
	put   func(client.Row) error
	flush func() error
}

// newRowOutput is the output --format and --keys-only ask for. jsonl and csv are import's formats,
// so a scan imports back (import --ts-column _ts); a row they cannot hold equal (cells of several
// families or timestamps, values that are not text) fails the command, naming cells, which holds any.
func newRowOutput(w io.Writer, format string, keysOnly bool, tc *tableCommand) (rowOutput, error) {
	if keysOnly && format != "text" {
		return rowOutput{}, errors.New("--keys-only prints keys as text: leave out --format")
	}
	kf := tc.kf
	switch format {
	case "text":
		put := func(row client.Row) error { printRow(w, kf, row); return nil }
		if keysOnly {
			put = func(row client.Row) error { _, err := fmt.Fprintln(w, kf.format(row.Key)); return err }
		}
		return rowOutput{put: put, flush: func() error { return nil }}, nil
	case "cells":
		return rowOutput{put: records.CellsWriter(w, kf.format), flush: func() error { return nil }}, nil
	case "jsonl", "csv":
		if kf.schema == nil {
			return rowOutput{}, fmt.Errorf("--format %s writes a key's fields by their names, as import reads them, and %s stores no key schema (give --key, or use --format cells)", format, tc.table)
		}
		write := rowsWriter(w, format, kf)
		return rowOutput{
			put: func(row client.Row) error {
				if err := write(row); err != nil {
					return fmt.Errorf("row %s: %w", kf.format(row.Key), err)
				}
				return nil
			},
			flush: func() error { return write(client.Row{}) },
		}, nil
	}
	return rowOutput{}, fmt.Errorf("--format %q: want text, jsonl, csv or cells", format)
}
