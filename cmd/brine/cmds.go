package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// storeFlags are the flags every table command shares.
type storeFlags struct {
	store   string
	table   string
	hex     bool
	keySpec string
	verbose bool
}

func (f *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.store, "store", defaultStore, "store URL")
	fs.StringVar(&f.table, "table", "", "table name")
	fs.BoolVar(&f.verbose, "v", false, "verbose: the drivers' logs and whole server errors")
}

// parse parses a command's flags (fs holds f's), wherever they stand among its arguments, and turns
// on -v; it returns the positional arguments.
func (f *storeFlags) parse(env *cliEnv, fs *flag.FlagSet, args []string) ([]string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return nil, err
	}
	env.applyVerbose(f.verbose)
	return pos, nil
}

// registerKeys adds the flags saying how keys are written: hex, or typed values through a key schema
// (default: the schema stored with the table by `import --create --key`, else text).
func (f *storeFlags) registerKeys(fs *flag.FlagSet) {
	fs.BoolVar(&f.hex, "hex", false, "keys are given and printed in hex")
	fs.StringVar(&f.keySpec, "key", "", "key schema, e.g. 'host,ts:int64': keys are given and printed as comma-separated typed values (default: the table's, if it has one)")
}

// keyFormat resolves how keys are written, from the flags and the schema stored with the table.
func (f *storeFlags) keyFormat(stored *keys.Schema) (keyFormat, error) {
	switch {
	case f.hex && f.keySpec != "":
		return keyFormat{}, errors.New("--hex and --key exclude each other")
	case f.hex:
		return keyFormat{hex: true}, nil
	case f.keySpec != "":
		s, err := keys.ParseSchema(f.keySpec)
		if err != nil {
			return keyFormat{}, fmt.Errorf("--key: %w", err)
		}
		return keyFormat{schema: s}, nil
	}
	return keyFormat{schema: stored}, nil
}

// openTable opens the store and the table named by the flags, with the key schema stored with it (nil
// when it has none); close the returned client when done.
func (f *storeFlags) openTable(ctx context.Context, env *cliEnv, salt string) (*client.Client, saltedTable, *keys.Schema, error) {
	if f.table == "" {
		return nil, nil, nil, errors.New("--table is required")
	}
	var s salting.Salter
	if salt != "" {
		var err error
		if s, err = salting.ParseSpec(salt); err != nil {
			return nil, nil, nil, err
		}
	}
	c, err := f.openClient(ctx, env)
	if err != nil {
		return nil, nil, nil, err
	}
	fail := func(err error) (*client.Client, saltedTable, *keys.Schema, error) {
		c.Close()
		switch {
		case errors.Is(err, client.ErrTableNotFound):
			err = fmt.Errorf("%w\n(no table %q in %s: 'brine tables' lists them; 'brine create' or 'brine import --create' makes one)", err, f.table, f.store)
		case errors.Is(err, client.ErrNoSpec):
			err = fmt.Errorf("%w\n(brine did not create table %q: give its spec with --salt, '--salt none' to read it unsalted)", err, f.table)
		}
		return nil, nil, nil, err
	}
	t, err := openSalted(ctx, c, f.table, s)
	if err != nil {
		return fail(err)
	}
	return c, t, t.KeySchema(), nil
}

// openClient opens an existing store: read commands and writes to existing tables never create one.
func (f *storeFlags) openClient(ctx context.Context, env *cliEnv) (*client.Client, error) {
	b, err := openStore(ctx, env, f.store, true)
	if err != nil {
		return nil, err
	}
	return env.newClient(b), nil
}

// tableCommand parses a table command's flags and opens its table and key format.
type tableCommand struct {
	storeFlags
	salt string // --salt: the spec of a table brine did not create (checked against a stored one)
	c    *client.Client
	t    client.TableAPI // a salted table, or a period table by its logical name
	kf   keyFormat
	pos  []string
}

// registerSalt adds --salt, for tables without a stored spec (brine refuses to guess theirs).
func (tc *tableCommand) registerSalt(fs *flag.FlagSet) {
	fs.StringVar(&tc.salt, "salt", "", "salting spec of a table brine did not create ('none': unsalted); checked against the table's when it has one")
}

// newRowCommand returns the flag set of a command on a table's rows (put, get, delete, scan), with
// the flags they share registered.
func newRowCommand(env *cliEnv, name string) (*flag.FlagSet, *tableCommand) {
	fs := newFlagSet(env, name)
	tc := &tableCommand{}
	tc.register(fs)
	tc.registerKeys(fs)
	tc.registerSalt(fs)
	return fs, tc
}

func (tc *tableCommand) open(ctx context.Context, env *cliEnv, fs *flag.FlagSet, args []string, nargs func(int) bool, usage string) error {
	pos, err := tc.parse(env, fs, args)
	if err != nil {
		return err
	}
	if !nargs(len(pos)) {
		return errors.New(usage)
	}
	tc.pos = pos
	if _, err := tc.keyFormat(nil); err != nil { // flag errors before any store is opened
		return err
	}
	c, t, stored, err := tc.openTable(ctx, env, tc.salt)
	if err != nil {
		return err
	}
	tc.c = c
	if tc.t, err = periodsOrTable(ctx, c, tc.table, t); err != nil {
		c.Close()
		return err
	}
	if tc.kf, err = tc.keyFormat(stored); err != nil {
		c.Close()
		return err
	}
	return nil
}

func runCreate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "create")
	var sf storeFlags
	sf.register(fs)
	salt := fs.String("salt", "hash:16", "salting spec: hash:N[:prefix=L|:fields=K][:digits=D], md5hex:C, mod:N:offset=O,width=W or mod:N:field=kF (key field F, from 0), reverse, phoenix:N, opentsdb:N, none (README: Salting strategies)")
	families := fs.String("families", client.DefaultFamily, "comma-separated column families")
	regions := fs.Int("regions", 0, "pre-split regions (0: one per bucket)")
	keySpec := fs.String("key", "", "key schema stored with the table, e.g. 'host,ts:int64' (get/put/scan then take typed values)")
	var indexes indexFlags
	fs.Var(&indexes, "index", "an index kept with the table, NAME=salt=SPEC|key=PART,...[|cover=F:Q,...][|unique], repeatable (README: Index tables)")
	pos, err := sf.parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return fmt.Errorf("create takes no arguments, got %q (the table is --table)", pos)
	}
	if sf.table == "" {
		return errors.New("--table is required")
	}
	if *regions < 0 {
		return fmt.Errorf("--regions %d: want 0 or more", *regions)
	}
	s, err := salting.ParseSpec(*salt)
	if err != nil {
		return err
	}
	var ks *keys.Schema
	if *keySpec != "" {
		if ks, err = keys.ParseSchema(*keySpec); err != nil {
			return fmt.Errorf("--key: %w", err)
		}
	}
	b, err := openStore(ctx, env, sf.store, false)
	if err != nil {
		return err
	}
	c := client.New(b, client.WithLogger(env.logger))
	defer c.Close()
	cfg := client.TableConfig{
		Salter: s, Families: strings.Split(*families, ","), Regions: *regions, KeySchema: ks, Indexes: indexes,
	}
	if _, err = c.CreateTable(ctx, sf.table, cfg); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "created %s (salt %s, %d buckets, %d split keys)\n", sf.table, s.Spec(), s.Buckets(), len(s.SplitKeys(*regions)))
	return nil
}

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

func runAnalyze(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "analyze")
	salt := fs.String("salt", "hash:16", "salting spec to evaluate")
	regions := fs.Int("regions", 0, "regions to group buckets into (0: one per bucket)")
	hexKeys := fs.Bool("hex", false, "keys are hex, one per line")
	store := fs.String("store", "", "hbase://... : analyze TABLE's live load per bucket and server instead of keys")
	svg := fs.String("svg", "", "with --store: also draw the load as an SVG picture in this file")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *store != "" {
		if len(pos) != 1 {
			return fmt.Errorf("usage: brine analyze --store hbase://ZK TABLE [--svg FILE] (got %q)", pos)
		}
		return runAnalyzeLive(ctx, env, *store, pos[0], *svg)
	}
	if len(pos) > 1 {
		return fmt.Errorf("usage: brine analyze [flags] [FILE] (one file, got %q)", pos)
	}
	if *regions < 0 {
		return fmt.Errorf("--regions %d: want 0 or more", *regions)
	}
	s, err := salting.ParseSpec(*salt)
	if err != nil {
		return err
	}
	in := env.stdin
	if len(pos) == 1 && pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	var keys [][]byte
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" {
			continue
		}
		k := []byte(text)
		if *hexKeys {
			if k, err = hex.DecodeString(text); err != nil {
				return fmt.Errorf("line %d: not hex: %w", line, err)
			}
		}
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading keys: %w", err)
	}
	if len(keys) == 0 {
		return errors.New("no keys to analyze")
	}
	rep, err := analyzeKeys(keys, s, *regions)
	if err != nil {
		return err
	}
	rep.print(env.stdout)
	return nil
}
