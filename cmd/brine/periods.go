package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
	"github.com/brine-kv/brine/salting"
)

// periodsOrTable returns the period table name when it is one, else t: the row commands
// then read and write a period table by its logical name.
func periodsOrTable(ctx context.Context, c *client.Client, name string, t client.TableAPI) (client.TableAPI, error) {
	p, err := openPeriods(ctx, c, name)
	if err != nil || p == nil {
		return t, err
	}
	return p, nil
}

// openPeriods opens the table name as a period table, or returns nil when it is not one.
func openPeriods(ctx context.Context, c *client.Client, name string) (*periods.Table, error) {
	meta, err := c.Backend().TableMeta(ctx, servingTable(ctx, c, name))
	if err != nil {
		return nil, err
	}
	if !periods.IsTable(meta) {
		return nil, nil
	}
	return periods.Open(ctx, c, name, nil)
}

// dropTableOrPeriods drops a table, or a period table with every period.
func dropTableOrPeriods(ctx context.Context, c *client.Client, name string) error {
	meta, err := c.Backend().TableMeta(ctx, servingTable(ctx, c, name))
	if err != nil {
		return err
	}
	if !periods.IsTable(meta) {
		return c.DeleteTable(ctx, name)
	}
	p, err := periods.Open(ctx, c, name, nil)
	if err != nil {
		return err
	}
	return p.Drop(ctx)
}

const periodsUsage = `usage: brine periods SUBCOMMAND TABLE [flags]
  declare TABLE --period month --time-field N --salt SPEC [--retain keep=12|older=720h] [--key SCHEMA]
  list TABLE [--now TIME]                    the periods, and which the retention expires at --now
  create-ahead TABLE [--ahead N] [--now TIME] [--salt SPEC] [--ttl D] [--compression C] [--read-cu N --write-cu N]
  tune TABLE PERIOD_TABLE [--read-cu N] [--write-cu N] [--ttl D]   Tablestore: cool an old period
  expire TABLE [--now TIME] [--export DIR --format jsonl|csv|cells]   export (when asked), then drop`

func runPeriods(ctx context.Context, env *cliEnv, args []string) error {
	sub, args, err := groupVerb(env, "periods", periodsUsage, args, "declare", "list", "create-ahead", "tune", "expire")
	if err != nil {
		return err
	}
	fs := newFlagSet(env, "periods "+sub)
	var sf storeFlags
	sf.register(fs)
	now := fs.String("now", "", "the time retention and create-ahead count from, RFC 3339 (default: the clock)")
	// run gets the period table and, for tune, the period's table (the second argument).
	var run func(ctx context.Context, c *client.Client, p *periods.Table, at time.Time, period string) error
	nargs := 1
	switch sub {
	case "declare":
		return runPeriodsDeclare(ctx, env, fs, &sf, args)
	case "list":
		run = func(ctx context.Context, c *client.Client, p *periods.Table, at time.Time, _ string) error {
			return periodsList(env, p, at)
		}
	case "create-ahead":
		ahead := fs.Int("ahead", 1, "periods to create after the current one")
		salt := fs.String("salt", "", "salting spec of the new periods (default: the table's)")
		ttl := fs.Duration("ttl", 0, "data TTL of the new periods (HBase: per family; Tablestore: the table's), e.g. 2160h")
		compression := fs.String("compression", "", "store-file compression of the new periods' families (HBase): GZ, SNAPPY, LZ4, ZSTD...")
		tune := registerTuning(fs)
		run = func(ctx context.Context, c *client.Client, p *periods.Table, at time.Time, _ string) error {
			tn := *tune
			if *ttl > 0 {
				tn.TTL = *ttl
			}
			return periodsCreateAhead(ctx, env, c, p, at, *ahead, *salt, *ttl, *compression, tn)
		}
	case "tune":
		tune := registerTuning(fs)
		ttl := fs.Duration("ttl", -1, "data TTL of the period's table (Tablestore), 0: forever")
		nargs = 2
		run = func(ctx context.Context, c *client.Client, p *periods.Table, at time.Time, period string) error {
			if _, err := p.PeriodTable(period); err != nil {
				return err
			}
			tn := *tune
			tn.TTL = *ttl
			if err := c.TuneTable(ctx, period, tn); err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "tuned %s\n", period)
			return nil
		}
	case "expire":
		dir := fs.String("export", "", "directory to export each expired period to before it is dropped")
		format := fs.String("format", "jsonl", "export format: jsonl or csv (rows as brine import reads them: import back with --ts-column "+exportTSColumn+"), or cells (every cell, values in base64)")
		var kf keyFormat
		run = func(ctx context.Context, c *client.Client, p *periods.Table, at time.Time, _ string) error {
			return periodsExpire(ctx, env, c, p, at, *dir, *format, kf)
		}
		fs.BoolVar(&kf.hex, "hex", false, "write keys in hex (default: with the table's key schema, else as text)")
	}
	pos, err := sf.parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != nargs {
		return errors.New(periodsUsage)
	}
	pos = append(pos, "")
	at := time.Now()
	if *now != "" {
		if at, err = time.Parse(time.RFC3339Nano, *now); err != nil {
			return fmt.Errorf("--now: %w", err)
		}
	}
	c, err := sf.openClient(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	p, err := periods.Open(ctx, c, pos[0], nil)
	if err != nil {
		return err
	}
	return run(ctx, c, p, at, pos[1])
}

func runPeriodsDeclare(ctx context.Context, env *cliEnv, fs *flag.FlagSet, sf *storeFlags, args []string) error {
	period := fs.String("period", "month", "period of one table: day, week, month, or a duration (6h)")
	field := fs.Int("time-field", 0, "index of the key field holding the time (int64 milliseconds since 1970)")
	salt := fs.String("salt", "hash:16", "salting spec of every period (create-ahead --salt changes it for new ones)")
	retain := fs.String("retain", "", "retention: keep=N (periods), older=DURATION, or both comma-separated")
	keySpec := fs.String("key", "", "key schema stored with the table, e.g. 'host,ts:int64'")
	families := fs.String("families", client.DefaultFamily, "comma-separated column families")
	pos, err := sf.parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(periodsUsage)
	}
	cfg := periods.Config{TimeField: *field, Table: client.TableConfig{Families: strings.Split(*families, ",")}}
	if cfg.Interval, err = periods.ParseInterval(*period); err != nil {
		return fmt.Errorf("--period: %w", err)
	}
	if cfg.Table.Salter, err = salting.ParseSpec(*salt); err != nil {
		return fmt.Errorf("--salt: %w", err)
	}
	if cfg.Retention, err = periods.ParseRetention(*retain); err != nil {
		return fmt.Errorf("--retain: %w", err)
	}
	if *keySpec != "" {
		ks, err := keys.ParseSchema(*keySpec)
		if err != nil {
			return fmt.Errorf("--key: %w", err)
		}
		if *field >= ks.Len() || ks.Fields()[*field].Kind != keys.KindInt64 {
			return fmt.Errorf("--time-field %d: field %d of key %s is not an int64", *field, *field, ks)
		}
		cfg.Table.KeySchema = ks
	}
	b, err := openStore(ctx, env, sf.store, false)
	if err != nil {
		return err
	}
	c := client.New(b, client.WithLogger(env.logger))
	defer c.Close()
	if _, err := periods.Create(ctx, c, pos[0], cfg); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "declared %s: a table per %s, time in key field %d, salt %s, retention %q\n",
		pos[0], cfg.Interval, cfg.TimeField, cfg.Table.Salter.Spec(), cfg.Retention.String())
	return nil
}

func periodsList(env *cliEnv, p *periods.Table, now time.Time) error {
	expired := map[string]bool{}
	for _, info := range p.Expired(now) {
		expired[info.Table] = true
	}
	for _, info := range p.Periods() {
		state := "live"
		switch {
		case expired[info.Table]:
			state = "expired"
		case info.Start.After(now):
			state = "ahead"
		}
		fmt.Fprintf(env.stdout, "%s\t%s\t%s\t%s\t%s\n", info.Table, info.Start.Format(time.RFC3339),
			info.End.Format(time.RFC3339), info.Spec, state)
	}
	fmt.Fprintf(env.stderr, "%d periods, %d expired at %s (retention %q)\n", len(p.Periods()), len(expired),
		now.UTC().Format(time.RFC3339), p.Config().Retention.String())
	return nil
}

// registerTuning adds the reserved-throughput flags (Tablestore); -1 leaves a setting as it is.
func registerTuning(fs *flag.FlagSet) *client.Tuning {
	t := backends.Keep
	fs.IntVar(&t.ReadCU, "read-cu", -1, "reserved read capacity units (Tablestore)")
	fs.IntVar(&t.WriteCU, "write-cu", -1, "reserved write capacity units (Tablestore)")
	return &t
}

func periodsCreateAhead(ctx context.Context, env *cliEnv, c *client.Client, p *periods.Table, now time.Time, ahead int, salt string, ttl time.Duration, compression string, tune client.Tuning) error {
	if ahead < 0 {
		return fmt.Errorf("--ahead %d: want 0 or more", ahead)
	}
	_, tunable := c.Backend().(backends.Tuner)
	if !tunable && (tune.ReadCU >= 0 || tune.WriteCU >= 0) {
		return fmt.Errorf("--read-cu/--write-cu: %w", backends.ErrNotTunable)
	}
	cfg := p.Config().Table
	if salt != "" {
		s, err := salting.ParseSpec(salt)
		if err != nil {
			return fmt.Errorf("--salt: %w", err)
		}
		cfg.Salter = s
	}
	if ttl != 0 || compression != "" {
		cfg.FamilyOptions = map[string]client.FamilyOptions{}
		for _, f := range cfg.Families {
			cfg.FamilyOptions[f] = client.FamilyOptions{TTL: ttl, Compression: compression}
		}
	}
	created, err := p.CreateAhead(ctx, now, ahead, &cfg)
	for _, info := range created {
		fmt.Fprintf(env.stdout, "created %s\t%s\t%s\t%s\n", info.Table, info.Start.Format(time.RFC3339),
			info.End.Format(time.RFC3339), info.Spec)
	}
	if err != nil {
		return err
	}
	if tunable && tune != backends.Keep {
		for _, info := range created {
			if err := c.TuneTable(ctx, info.Table, tune); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(env.stderr, "%d periods created\n", len(created))
	return nil
}

func periodsExpire(ctx context.Context, env *cliEnv, c *client.Client, p *periods.Table, now time.Time, dir, format string, kf keyFormat) error {
	if !slices.Contains(exportFormats, format) {
		return fmt.Errorf("--format %q: want one of %s", format, strings.Join(exportFormats, ", "))
	}
	if !kf.hex && p.KeySchema() != nil {
		kf.schema = p.KeySchema()
	}
	expired := p.Expired(now)
	for _, info := range expired {
		if dir != "" {
			if err := exportPeriod(ctx, env, p, info, dir, format, kf); err != nil {
				return fmt.Errorf("export %s (nothing dropped): %w", info.Table, err)
			}
		}
		if err := p.DropPeriod(ctx, info.Table); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "dropped %s\n", info.Table)
	}
	fmt.Fprintf(env.stderr, "%d periods expired at %s\n", len(expired), now.UTC().Format(time.RFC3339))
	return nil
}
