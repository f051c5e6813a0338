package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/keys"
)

const verifyUsage = "usage: brine verify --from STORE --to STORE TABLE [--as NAME] [--start K] [--end K | --prefix P] [--versions latest|all] [--shard I/N]"

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
	opts := compare.Options{Chunk: *chunk, AllVersions: p.allVersions(), Stats: &st, Progress: verifyProgress(env, began), Shard: p.shard.Shard}
	for d, err := range compare.Tables(ctx, a, b, r, opts) {
		if err != nil && ctx.Err() != nil {
			// A verify writes nothing and keeps no checkpoint: it is run again from the start.
			return interrupted(ctx, "verify of %s%s interrupted after comparing %d rows (%d differences so far): it keeps no checkpoint; run it again", from.table, p.shard.of(), st.RowsA, st.Differences)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(env.stdout, describeDifference(kf, d))
	}
	fmt.Fprintf(env.stderr, "compared %d rows of %s%s with %d rows of %s in %v: %d differences\n",
		st.RowsA, from.table, p.shard.of(), st.RowsB, target.table, time.Since(began).Round(time.Millisecond), st.Differences)
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
// a changed row the cells that differ.
func describeDifference(kf keyFormat, d compare.Difference) string {
	key := kf.format(d.Key)
	switch d.Kind {
	case compare.OnlyInA:
		return "only in --from: " + key
	case compare.OnlyInB:
		return "only in --to: " + key
	}
	return "changed: " + key + " (" + cellDiffText(d.A.Cells, d.B.Cells) + ")"
}

// maxDiffColumns is how many differing columns a changed row's line names.
const maxDiffColumns = 3

// cellDiffText names the cells that one row has and the other has not (compare.CellDiff), column by
// column: "d:b=2@1000 only in --to", or "d:v=1@5 in --from, d:v=2@7 in --to" where both have it.
func cellDiffText(a, b []client.Cell) string {
	onlyA, onlyB := compare.CellDiff(a, b)
	type column struct{ a, b []string }
	var order []client.Column
	cols := map[client.Column]*column{}
	add := func(c client.Cell, side int) {
		name := c.Family + ":" + c.Qualifier
		col := cols[client.Column{Family: c.Family, Qualifier: c.Qualifier}]
		if col == nil {
			col = &column{}
			cols[client.Column{Family: c.Family, Qualifier: c.Qualifier}] = col
			order = append(order, client.Column{Family: c.Family, Qualifier: c.Qualifier})
		}
		text := fmt.Sprintf("%s=%s@%d", name, printable(c.Value), c.Timestamp)
		if side == 0 {
			col.a = append(col.a, text)
		} else {
			col.b = append(col.b, text)
		}
	}
	for _, c := range onlyA {
		add(c, 0)
	}
	for _, c := range onlyB {
		add(c, 1)
	}
	slices.SortFunc(order, func(x, y client.Column) int { // the canonical order
		return cmp.Or(cmp.Compare(x.Family, y.Family), cmp.Compare(x.Qualifier, y.Qualifier))
	})
	var parts []string
	for i, name := range order {
		if i == maxDiffColumns {
			parts = append(parts, fmt.Sprintf("and %d more %s", len(order)-i, map[bool]string{true: "column", false: "columns"}[len(order)-i == 1]))
			break
		}
		col := cols[name]
		switch {
		case col.b == nil:
			parts = append(parts, strings.Join(col.a, " ")+" only in --from")
		case col.a == nil:
			parts = append(parts, strings.Join(col.b, " ")+" only in --to")
		default:
			parts = append(parts, strings.Join(col.a, " ")+" in --from, "+strings.Join(col.b, " ")+" in --to")
		}
	}
	if len(parts) == 0 {
		return "cells in another order"
	}
	return strings.Join(parts, "; ")
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
