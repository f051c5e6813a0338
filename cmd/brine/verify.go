package main

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/keys"
)

const verifyUsage = "usage: brine verify --from STORE --to STORE TABLE [--as NAME] [--start K] [--end K | --prefix P] [--versions latest|all]"

// runVerify compares a table on one store with a table on another (or the same), whatever their
// salting: it prints each key whose rows differ, as get prints it, and exits 3 when any does.
func runVerify(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "verify")
	var p pairFlags
	p.register(fs, "compared from", "store URL of the table compared with")
	chunk := fs.Int("chunk", compare.DefaultChunk, "mean rows per hashed chunk: about this many rows of each side are read again around a difference")
	if err := p.parse(env, fs, args, verifyUsage); err != nil {
		return err
	}
	if *chunk <= 0 {
		return fmt.Errorf("--chunk %d: want a positive row count", *chunk)
	}
	from, target := p.from, p.to
	ca, cb, closeFn, err := p.open(ctx, env, false)
	if err != nil {
		return err
	}
	defer closeFn()
	a, stored, err := openCompared(ctx, ca, from.table)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	b, _, err := openCompared(ctx, cb, target.table)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	kf, err := from.keyFormat(stored)
	if err != nil {
		return err
	}
	r, err := scanRange(kf, *p.start, *p.end, *p.prefix)
	if err != nil {
		return err
	}

	began := time.Now()
	var st compare.Stats
	opts := compare.Options{Chunk: *chunk, AllVersions: p.allVersions(), Stats: &st, Progress: verifyProgress(env, began)}
	for d, err := range compare.Tables(ctx, a, b, r, opts) {
		if err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, describeDifference(kf, d))
	}
	fmt.Fprintf(env.stderr, "compared %d rows of %s with %d rows of %s in %v: %d differences\n",
		st.RowsA, from.table, st.RowsB, target.table, time.Since(began).Round(time.Millisecond), st.Differences)
	if st.Differences > 0 {
		return &exitError{code: 3, err: fmt.Errorf("the tables differ at %d keys", st.Differences)}
	}
	return nil
}

// openCompared opens one side of a comparison: a salted table or a period table, by its name.
func openCompared(ctx context.Context, c *client.Client, name string) (client.TableAPI, *keys.Schema, error) {
	t, err := openSalted(ctx, c, name, nil)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := periodsOrTable(ctx, c, name, t)
	if err != nil {
		return nil, nil, err
	}
	return tbl, t.KeySchema(), nil
}

// describeDifference is one line of verify's output: the kind and the key as get prints it, and for
// a changed row its first differing cell.
func describeDifference(kf keyFormat, d compare.Difference) string {
	key := kf.format(d.Key)
	switch d.Kind {
	case compare.OnlyInA:
		return "only in --from: " + key
	case compare.OnlyInB:
		return "only in --to: " + key
	}
	return "changed: " + key + " (" + firstCellDiff(d.A.Cells, d.B.Cells) + ")"
}

// firstCellDiff names the first cell (in canonical order) that one row has and the other has not.
func firstCellDiff(a, b []client.Cell) string {
	cell := func(c client.Cell) string {
		return fmt.Sprintf("%s:%s=%s@%d", c.Family, c.Qualifier, printable(c.Value), c.Timestamp)
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		switch {
		case i == len(b):
			return cell(a[i]) + " only in --from"
		case i == len(a):
			return cell(b[i]) + " only in --to"
		case cell(a[i]) != cell(b[i]):
			return cell(a[i]) + " in --from, " + cell(b[i]) + " in --to"
		}
	}
	return "cells in another order"
}

// verifyProgress prints how many rows each side has read, at most every few seconds.
func verifyProgress(env *cliEnv, began time.Time) func(a, b int64) {
	var mu sync.Mutex
	last := began
	return func(a, b int64) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < 3*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(env.stderr, "verify: %d rows of --from and %d of --to read in %v\n", a, b, time.Since(began).Round(time.Second))
	}
}

// scanRange is the range scan's --start, --end and --prefix flags give, in kf's key format.
func scanRange(kf keyFormat, start, end, prefix string) (client.Range, error) {
	if prefix != "" {
		return kf.prefix(prefix)
	}
	var r client.Range
	var err error
	if start != "" {
		if r.Start, err = kf.bound(start); err != nil {
			return r, fmt.Errorf("--start: %w", err)
		}
	}
	if end != "" {
		if r.End, err = kf.bound(end); err != nil {
			return r, fmt.Errorf("--end: %w", err)
		}
	}
	if r.Start != nil && r.End != nil && bytes.Compare(r.Start, r.End) > 0 {
		return r, fmt.Errorf("--start %s is after --end %s (the range is [start, end) in key order, with --reverse too)", start, end)
	}
	return r, nil
}
