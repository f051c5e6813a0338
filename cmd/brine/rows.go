package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/brine-kv/brine/client"
)

// The row commands: put, get and delete one row.

func runPut(ctx context.Context, env *cliEnv, args []string) error {
	fs, tc := newRowCommand(env, "put")
	ts := fs.Int64("ts", 0, "cell timestamp in ms (0: server time)")
	const usage = "usage: brine put --table T [--key SCHEMA] KEY FAMILY:QUALIFIER=VALUE [FAMILY:QUALIFIER=VALUE ...]"
	if err := tc.open(ctx, env, fs, args, func(n int) bool { return n >= 2 }, usage); err != nil {
		return err
	}
	defer tc.c.Close()
	if *ts < 0 {
		return fmt.Errorf("--ts %d: want milliseconds since 1970, or 0", *ts)
	}
	key, err := tc.kf.parse(tc.pos[0])
	if err != nil {
		return err
	}
	var cells []client.Cell
	for _, a := range tc.pos[1:] {
		col, val, ok := strings.Cut(a, "=")
		fam, qual, ok2 := strings.Cut(col, ":")
		if !ok || !ok2 || fam == "" {
			return fmt.Errorf("cell %q: want FAMILY:QUALIFIER=VALUE", a)
		}
		cells = append(cells, client.Cell{Family: fam, Qualifier: qual, Value: []byte(val), Timestamp: *ts})
	}
	return tc.kf.keyErr(key, tc.t.Put(ctx, key, cells...))
}

func runGet(ctx context.Context, env *cliEnv, args []string) error {
	fs, tc := newRowCommand(env, "get")
	var byIndex indexFlag
	byIndex.register(fs, false)
	format := fs.String("format", "text", "output: text, jsonl or csv as import reads them, or cells (see scan -h)")
	if err := tc.open(ctx, env, fs, args, func(n int) bool { return n == 1 }, "usage: brine get --table T [--key SCHEMA] KEY | --index NAME VALUES"); err != nil {
		return err
	}
	defer tc.c.Close()
	out, err := newRowOutput(env.stdout, *format, false, tc)
	if err != nil {
		return err
	}
	if byIndex.name != "" {
		return byIndex.get(ctx, tc, tc.pos[0], out)
	}
	key, err := tc.kf.parse(tc.pos[0])
	if err != nil {
		return err
	}
	row, err := tc.t.Get(ctx, key)
	if err != nil {
		return tc.kf.keyErr(key, err)
	}
	if err := out.put(row); err != nil {
		return err
	}
	return out.flush()
}

func runDelete(ctx context.Context, env *cliEnv, args []string) error {
	fs, tc := newRowCommand(env, "delete")
	const usage = "usage: brine delete --table T [--key SCHEMA] KEY [FAMILY[:QUALIFIER] ...]"
	if err := tc.open(ctx, env, fs, args, func(n int) bool { return n >= 1 }, usage); err != nil {
		return err
	}
	defer tc.c.Close()
	key, err := tc.kf.parse(tc.pos[0])
	if err != nil {
		return err
	}
	var cols []client.Column
	for _, a := range tc.pos[1:] {
		fam, qual, _ := strings.Cut(a, ":")
		if fam == "" {
			return fmt.Errorf("column %q: want FAMILY or FAMILY:QUALIFIER", a)
		}
		cols = append(cols, client.Column{Family: fam, Qualifier: qual})
	}
	return tc.kf.keyErr(key, tc.t.Delete(ctx, key, cols...))
}

func printRow(w io.Writer, kf keyFormat, row client.Row) {
	fmt.Fprint(w, kf.format(row.Key))
	for _, c := range row.Cells {
		fmt.Fprintf(w, "  %s:%s=%s@%d", c.Family, c.Qualifier, printable(c.Value), c.Timestamp)
	}
	fmt.Fprintln(w)
}
