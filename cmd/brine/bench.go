package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/bench"
)

// intList is a comma-separated list of integers flag.
type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, n := range *l {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return fmt.Errorf("%q is not a comma-separated list of integers", s)
		}
		out = append(out, n)
	}
	*l = out
	return nil
}

func runBench(ctx context.Context, env *cliEnv, args []string) (err error) {
	fs := newFlagSet(env, "bench")
	cfg := bench.DefaultConfig()
	store := fs.String("store", "", "store URL, e.g. hbase://127.0.0.1:2181 (required; memory:// and local:// compare the driver with itself)")
	out := fs.String("out", "", "directory for bench.md and bench.json (default: print only)")
	flush := fs.Duration("flush-interval", 0, "HBase: gohbase FlushInterval for both sides' clients (0: send when no more calls are queued)")
	sections := fs.String("sections", strings.Join(bench.AllSections, ","), "sections to run")
	fs.IntVar(&cfg.Rows, "rows", cfg.Rows, "rows per write run and per table")
	fs.IntVar(&cfg.ValueSize, "value-size", cfg.ValueSize, "bytes per value")
	fs.IntVar(&cfg.NaiveRows, "naive-rows", cfg.NaiveRows, "rows of the one-Put-at-a-time loop")
	fs.IntVar(&cfg.Gets, "gets", cfg.Gets, "keys read by both sides per repeat")
	fs.IntVar(&cfg.Repeat, "repeat", cfg.Repeat, "measured runs per figure (medians are reported)")
	fs.StringVar(&cfg.Salt, "salt", cfg.Salt, "salting spec of the write/spread/get table")
	fs.Var((*intList)(&cfg.ScanBuckets), "scan-buckets", "bucket counts of the fan-out scan tables")
	fs.IntVar(&cfg.ScanRows, "scan-rows", cfg.ScanRows, "rows in the scanned range, centred (0: all)")
	fs.IntVar(&cfg.ScanBatch, "scan-batch", cfg.ScanBatch, "rows per round trip in range scans, both sides")
	fs.IntVar(&cfg.FirstRows, "first-rows", cfg.FirstRows, "samples of each scan table's first-row figures (medians are reported)")
	fs.Var((*intList)(&cfg.Limits), "limits", "limits of the limited scans")
	fs.IntVar(&cfg.LimitBuckets, "limit-buckets", cfg.LimitBuckets, "buckets of the limited-scan table")
	fs.IntVar(&cfg.LimitBatch, "limit-batch", cfg.LimitBatch, "rows per round trip in limited scans")
	fs.Var((*intList)(&cfg.LimitPrefetch), "limit-prefetch", "client prefetch settings tried in limited scans (0: the client's default)")
	fs.Var((*intList)(&cfg.RawConcurrency), "raw-concurrency", "concurrent raw writers tried; the fastest is used")
	fs.IntVar(&cfg.ImportWorkers, "import-workers", cfg.ImportWorkers, "Table.Import workers (0: the client's default)")
	fs.IntVar(&cfg.TuneRows, "tune-rows", cfg.TuneRows, "rows per point of the raw concurrency sweep (0: min(rows, 20000))")
	fs.DurationVar(&cfg.Settle, "settle", cfg.Settle, "longest wait, before each measure of the copy and exclusive sections, for the machine to be quiet (0: none)")
	fs.IntVar(&cfg.BulkRows, "bulk-rows", cfg.BulkRows, "rows per repeat of the indexed import, the rebucket copy, and the verify, sync, copy and shards tables (0: min(rows, 20000))")
	fs.Var((*intList)(&cfg.ServerPIDs), "server-pid", "pids of the store's server processes on this machine, comma-separated: the indexed import, the rebucket copy, the sync and the shards then report their CPU per row (Linux /proc)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run (this process: the client side) to this file, for go tool pprof")
	fs.BoolVar(&cfg.Cluster, "cluster", cfg.Cluster, "run the multi-server section even when every region is on one server (it runs by itself when they are on several)")
	var metrics metricsFlags
	metrics.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench takes no arguments, got %q", fs.Args())
	}
	if *store == "" {
		return errors.New("--store is required, e.g. --store hbase://127.0.0.1:2181")
	}
	cfg.Sections = strings.Split(*sections, ",")
	cfg.Logger = env.logger
	if err := cfg.Validate(); err != nil {
		return err
	}
	if *flush < 0 {
		return errors.New("--flush-interval must not be negative")
	}

	mr, err := metrics.start(env, *store)
	if err != nil {
		return err
	}
	cfg.ClientOptions = mr.opts
	defer func() {
		if serr := mr.stop(context.Background()); serr != nil && err == nil {
			err = serr
		}
	}()
	st, err := openBenchStore(ctx, env, *store, *flush)
	if err != nil {
		return err
	}
	defer func() {
		if st.Close != nil {
			_ = st.Close()
		}
	}()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	rep, err := bench.Run(ctx, st, cfg)
	if err != nil {
		return err
	}
	var md, js bytes.Buffer
	if err := rep.Markdown(&md); err != nil {
		return err
	}
	if err := rep.WriteJSON(&js); err != nil {
		return err
	}
	if _, err := env.stdout.Write(md.Bytes()); err != nil {
		return err
	}
	if *out == "" {
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"bench.md": md.Bytes(), "bench.json": js.Bytes()} {
		if err := os.WriteFile(filepath.Join(*out, name), data, 0o644); err != nil {
			return err
		}
	}
	env.logger.Info("bench: results written", "dir", *out)
	return nil
}

// openBenchStore opens both sides: on HBase brine's driver and raw gohbase clients on the same cluster;
// elsewhere the store's driver, which then is its own baseline.
func openBenchStore(ctx context.Context, env *cliEnv, raw string, flush time.Duration) (*bench.Store, error) {
	if rest, ok := strings.CutPrefix(raw, "hbase://"); ok {
		cfg, err := hbaseConfig(env, raw, rest)
		if err != nil {
			return nil, err
		}
		cfg.FlushInterval = flush
		return bench.OpenHBase(ctx, cfg)
	}
	b, err := openStore(ctx, env, raw, false)
	if err != nil {
		return nil, err
	}
	st := bench.BackendStore(raw, b)
	// The embedded stores are one process's alone: a second handle to a local:// file waits for the
	// first's lock, and a second memory:// is another store.
	if scheme, _, _ := strings.Cut(raw, "://"); scheme != "local" && scheme != "memory" {
		st.Connect = func(ctx context.Context) (backends.Backend, error) { return openStore(ctx, env, raw, false) }
	}
	return st, nil
}
