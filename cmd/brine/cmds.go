package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// storeFlags are the flags every table command shares.
type storeFlags struct {
	store string
	table string
	hex   bool
}

func (f *storeFlags) register(fs interface {
	StringVar(*string, string, string, string)
	BoolVar(*bool, string, bool, string)
}) {
	fs.StringVar(&f.store, "store", defaultStore, "store URL")
	fs.StringVar(&f.table, "table", "", "table name")
	fs.BoolVar(&f.hex, "hex", false, "keys are given and printed in hex")
}

func (f *storeFlags) key(s string) ([]byte, error) {
	if !f.hex {
		return []byte(s), nil
	}
	k, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("key %q is not hex: %w", s, err)
	}
	return k, nil
}

func (f *storeFlags) formatKey(k []byte) string {
	if f.hex {
		return hex.EncodeToString(k)
	}
	return printable(k)
}

// printable shows a key as text when it is text, quoted with escapes when it is not.
func printable(b []byte) string {
	s := string(b)
	if strconv.CanBackquote(s) && !strings.ContainsAny(s, "` ") {
		return s
	}
	return strconv.Quote(s)
}

// openTable opens the store and the table named by the flags; close the returned client when done.
func (f *storeFlags) openTable(ctx context.Context, env *cliEnv, salt string) (*client.Client, *client.Table, error) {
	if f.table == "" {
		return nil, nil, errors.New("--table is required")
	}
	var s salting.Salter
	if salt != "" {
		var err error
		if s, err = salting.ParseSpec(salt); err != nil {
			return nil, nil, err
		}
	}
	b, err := openStore(ctx, env, f.store)
	if err != nil {
		return nil, nil, err
	}
	c := client.New(b, client.WithLogger(env.logger))
	t, err := c.OpenTable(ctx, f.table, s)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, t, nil
}

func runCreate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "create")
	var sf storeFlags
	sf.register(fs)
	salt := fs.String("salt", "hash:16", "salting spec: hash:N[:prefix=L|:fields=K], md5hex:C, mod:N:..., reverse, phoenix:N, opentsdb:N, none")
	families := fs.String("families", client.DefaultFamily, "comma-separated column families")
	regions := fs.Int("regions", 0, "pre-split regions (0: one per bucket)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if sf.table == "" {
		return errors.New("--table is required")
	}
	s, err := salting.ParseSpec(*salt)
	if err != nil {
		return err
	}
	b, err := openStore(ctx, env, sf.store)
	if err != nil {
		return err
	}
	c := client.New(b, client.WithLogger(env.logger))
	defer c.Close()
	if _, err := c.CreateTable(ctx, sf.table, client.TableConfig{
		Salter: s, Families: strings.Split(*families, ","), Regions: *regions,
	}); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "created %s (salt %s, %d buckets, %d split keys)\n", sf.table, s.Spec(), s.Buckets(), len(s.SplitKeys(*regions)))
	return nil
}

func runPut(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "put")
	var sf storeFlags
	sf.register(fs)
	ts := fs.Int64("ts", 0, "cell timestamp in ms (0: server time)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return errors.New("usage: brine put --table T KEY FAMILY:QUALIFIER=VALUE [FAMILY:QUALIFIER=VALUE ...]")
	}
	key, err := sf.key(fs.Arg(0))
	if err != nil {
		return err
	}
	var cells []client.Cell
	for _, a := range fs.Args()[1:] {
		col, val, ok := strings.Cut(a, "=")
		fam, qual, ok2 := strings.Cut(col, ":")
		if !ok || !ok2 {
			return fmt.Errorf("cell %q: want FAMILY:QUALIFIER=VALUE", a)
		}
		cells = append(cells, client.Cell{Family: fam, Qualifier: qual, Value: []byte(val), Timestamp: *ts})
	}
	c, t, err := sf.openTable(ctx, env, "")
	if err != nil {
		return err
	}
	defer c.Close()
	return t.Put(ctx, key, cells...)
}

func runGet(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "get")
	var sf storeFlags
	sf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: brine get --table T KEY")
	}
	key, err := sf.key(fs.Arg(0))
	if err != nil {
		return err
	}
	c, t, err := sf.openTable(ctx, env, "")
	if err != nil {
		return err
	}
	defer c.Close()
	row, err := t.Get(ctx, key)
	if err != nil {
		return err
	}
	printRow(env.stdout, &sf, row)
	return nil
}

func printRow(w io.Writer, sf *storeFlags, row client.Row) {
	fmt.Fprint(w, sf.formatKey(row.Key))
	for _, c := range row.Cells {
		fmt.Fprintf(w, "  %s:%s=%s@%d", c.Family, c.Qualifier, printable(c.Value), c.Timestamp)
	}
	fmt.Fprintln(w)
}

func runScan(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "scan")
	var sf storeFlags
	sf.register(fs)
	start := fs.String("start", "", "first key (inclusive)")
	end := fs.String("end", "", "end key (exclusive)")
	prefix := fs.String("prefix", "", "scan only keys with this prefix (instead of --start/--end)")
	limit := fs.Int("limit", 0, "most rows to return (0: all)")
	reverse := fs.Bool("reverse", false, "descending key order")
	after := fs.String("after", "", "resume after this key (the cursor a previous page printed)")
	keysOnly := fs.Bool("keys-only", false, "print keys only")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var r client.Range
	switch {
	case *prefix != "":
		p, err := sf.key(*prefix)
		if err != nil {
			return err
		}
		r = client.PrefixRange(p)
	default:
		var err error
		if r.Start, err = sf.key(*start); err != nil {
			return err
		}
		if r.End, err = sf.key(*end); err != nil {
			return err
		}
	}
	var opts []client.ReadOption
	if *limit > 0 {
		opts = append(opts, client.Limit(*limit))
	}
	if *reverse {
		opts = append(opts, client.Reverse())
	}
	if *after != "" {
		k, err := sf.key(*after)
		if err != nil {
			return err
		}
		opts = append(opts, client.ResumeAfter(k))
	}
	c, t, err := sf.openTable(ctx, env, "")
	if err != nil {
		return err
	}
	defer c.Close()
	began := time.Now()
	var n int
	var last []byte
	for row, err := range t.Scan(ctx, r, opts...) {
		if err != nil {
			return err
		}
		n++
		last = row.Key
		if *keysOnly {
			fmt.Fprintln(env.stdout, sf.formatKey(row.Key))
			continue
		}
		printRow(env.stdout, &sf, row)
	}
	fmt.Fprintf(env.stderr, "%d rows in %v", n, time.Since(began).Round(time.Microsecond))
	if *limit > 0 && n == *limit {
		fmt.Fprintf(env.stderr, "; next page: --after %s", sf.formatKey(last))
	}
	fmt.Fprintln(env.stderr)
	return nil
}

func runAnalyze(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "analyze")
	salt := fs.String("salt", "hash:16", "salting spec to evaluate")
	regions := fs.Int("regions", 0, "regions to group buckets into (0: one per bucket)")
	hexKeys := fs.Bool("hex", false, "keys are hex, one per line")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := salting.ParseSpec(*salt)
	if err != nil {
		return err
	}
	in := env.stdin
	if fs.NArg() > 0 && fs.Arg(0) != "-" {
		f, err := os.Open(fs.Arg(0))
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

// Wrap a backend's error for the one-line CLI report without losing errors.Is.
