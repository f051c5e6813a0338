package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// demoEpoch is where the demo's synthetic time series starts; keys are its millisecond timestamps.
var demoEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const demoStepMillis = 10 // one sample every 10 ms: strictly monotonic keys, the worst case for a store

func demoKey(i int) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(demoEpoch.UnixMilli()+int64(i)*demoStepMillis))
}

func demoTime(key []byte) string {
	if len(key) != 8 {
		return printable(key)
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(key))).UTC().Format("2006-01-02T15:04:05.000Z")
}

func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "demo")
	store := fs.String("store", "", "store URL (default: a fresh embedded store in a temporary directory)")
	rows := fs.Int("rows", 1_000_000, "rows to import")
	spec := fs.String("salt", "hash:16", "salting spec of the salted table")
	keep := fs.Bool("keep", false, "keep the temporary store")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := salting.ParseSpec(*spec)
	if err != nil {
		return err
	}
	if *rows < 1 {
		return fmt.Errorf("--rows must be positive")
	}
	url := *store
	if url == "" {
		dir, err := os.MkdirTemp("", "brine-demo-")
		if err != nil {
			return err
		}
		if !*keep {
			defer os.RemoveAll(dir)
		}
		url = "local://" + dir + "/demo.db?nosync=1"
	}
	b, err := openStore(ctx, env, url, false)
	if err != nil {
		return err
	}
	c := client.New(b, client.WithLogger(env.logger))
	defer c.Close()
	w := env.stdout
	fmt.Fprintf(w, "brine demo: %d monotonic time-series keys (one every %d ms from %s)\n", *rows, demoStepMillis, demoEpoch.Format(time.DateOnly))
	fmt.Fprintf(w, "store %s\n\n", url)

	// Both tables are pre-split at the same boundaries, so the only difference is the salt.
	splits := s.SplitKeys(0)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	salted, err := c.CreateTable(ctx, "metrics_salted_"+suffix, client.TableConfig{Salter: s})
	if err != nil {
		return err
	}
	none, err := salting.ParseSpec("none")
	if err != nil {
		return err
	}
	plain, err := c.CreateTable(ctx, "metrics_plain_"+suffix, client.TableConfig{Salter: none, SplitKeys: splits})
	if err != nil {
		return err
	}
	defer func() {
		// Demo tables on a user's store are cleaned up; a temporary store goes away anyway.
		_ = c.DeleteTable(context.WithoutCancel(ctx), salted.Name())
		_ = c.DeleteTable(context.WithoutCancel(ctx), plain.Name())
	}()

	for _, t := range []*client.Table{salted, plain} {
		began := time.Now()
		if err := demoImport(ctx, t, *rows); err != nil {
			return err
		}
		el := time.Since(began)
		fmt.Fprintf(w, "import %-6s %d rows in %v (%.0f rows/s)\n", saltName(t), *rows, el.Round(time.Millisecond), float64(*rows)/el.Seconds())
	}

	saltedSpread, err := countByRegion(ctx, b, salted.Name(), splits)
	if err != nil {
		return err
	}
	plainSpread, err := countByRegion(ctx, b, plain.Name(), splits)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nrows per region (%d regions, pre-split at the same keys):\n", len(splits)+1)
	fmt.Fprintf(w, "  %6s %12s %12s\n", "region", s.Spec(), "unsalted")
	for i := range saltedSpread.counts {
		fmt.Fprintf(w, "  %6d %12d %12d\n", i, saltedSpread.counts[i], plainSpread.counts[i])
	}
	fmt.Fprintf(w, "  %6s %12.3f %12.3f   (1.0 = perfectly even; %d = one hot region)\n", "max/mean",
		saltedSpread.maxOverMean(), plainSpread.maxOverMean(), len(splits)+1)

	// A logical range in the middle of the series: salted rows live in every bucket, so brine scans
	// all of them in parallel and merges by logical key.
	mid := *rows / 2
	r := client.RowRange(demoKey(mid), demoKey(min(mid+100_000, *rows)))
	for _, q := range []struct {
		name string
		opts []client.ReadOption
	}{
		{"limit 10", []client.ReadOption{client.Limit(10)}},
		{"limit 5, reverse", []client.ReadOption{client.Limit(5), client.Reverse()}},
		{"all", nil},
	} {
		fmt.Fprintf(w, "\nscan [%s, %s) %s:\n", demoTime(r.Start), demoTime(r.End), q.name)
		for _, t := range []*client.Table{salted, plain} {
			began := time.Now()
			var got []client.Row
			for row, err := range t.Scan(ctx, r, q.opts...) {
				if err != nil {
					return err
				}
				got = append(got, row)
			}
			el := time.Since(began)
			reverse := len(q.opts) > 1
			ordered := isOrdered(got, reverse)
			fmt.Fprintf(w, "  %-6s %6d rows in %-10v in order: %v\n", saltName(t), len(got), el.Round(time.Microsecond), ordered)
			if !ordered {
				return fmt.Errorf("scan of %s came back out of order", t.Name())
			}
			if t == salted && len(got) <= 10 {
				for _, row := range got {
					fmt.Fprintf(w, "           %s %s\n", demoTime(row.Key), row.Cells[0].Value)
				}
			}
		}
	}
	return nil
}

func saltName(t *client.Table) string {
	if t.Salter().Buckets() == 1 {
		return "plain"
	}
	return "salted"
}

func isOrdered(rows []client.Row, reverse bool) bool {
	for i := 1; i < len(rows); i++ {
		c := bytes.Compare(rows[i-1].Key, rows[i].Key)
		if (!reverse && c >= 0) || (reverse && c <= 0) {
			return false
		}
	}
	return true
}

// demoImport writes n synthetic samples in large chunks; the client groups each chunk by bucket and
// writes the per-bucket batches in parallel.
func demoImport(ctx context.Context, t *client.Table, n int) error {
	const chunk = 20_000
	for lo := 0; lo < n; lo += chunk {
		muts := make([]client.Mutation, 0, min(chunk, n-lo))
		for i := lo; i < min(lo+chunk, n); i++ {
			ts := demoEpoch.UnixMilli() + int64(i)*demoStepMillis
			muts = append(muts, client.Mutation{Key: demoKey(i), Cells: []client.Cell{
				{Family: client.DefaultFamily, Qualifier: "v", Value: strconv.AppendFloat(nil, 20+float64(i%1000)/100, 'f', 2, 64), Timestamp: ts},
			}})
		}
		rowErrs, err := t.Apply(ctx, muts)
		if err != nil {
			return err
		}
		for _, e := range rowErrs {
			if e != nil {
				return e
			}
		}
	}
	return nil
}

// countByRegion counts a table's rows per region, scanning each region's physical key range.
func countByRegion(ctx context.Context, b backends.Backend, table string, splits [][]byte) (spread, error) {
	sp := spread{counts: make([]int64, len(splits)+1)}
	for i := range sp.counts {
		var r backends.Range
		if i > 0 {
			r.Start = splits[i-1]
		}
		if i < len(splits) {
			r.End = splits[i]
		}
		for _, err := range b.Scan(ctx, table, r, backends.ScanOptions{}) {
			if err != nil {
				return sp, err
			}
			sp.counts[i]++
		}
	}
	return sp, nil
}
