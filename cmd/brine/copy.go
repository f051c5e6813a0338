package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/salting"
)

const copyUsage = "usage: brine copy --from STORE --to STORE TABLE [--as NAME] [--salt SPEC] [--start K] [--end K | --prefix P] [--since TIME] [--versions latest|all] [--shard I/N] [--resume[=auto]]"

// runCopy copies a table to another store (or name, or salting): migrate.Copy, with its progress on
// stderr, and on an interrupt the command that resumes it.
func runCopy(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "copy")
	var p pairFlags
	p.register(fs, "copied", "store URL the copy goes to")
	salt := fs.String("salt", "", "the copy's salting spec, when copy creates it (default: the table's)")
	since := fs.String("since", "", "copy only cells stamped after this time (RFC 3339, a date, or ms since 1970): a catch-up pass")
	var resume resumeFlag
	fs.Var(&resume, "resume", "finish an interrupted copy, from its checkpoint (the same flags as it had); =auto: if it is there, else start the copy")
	workers := fs.Int("workers", 0, "source buckets copied at once (0: 8)")
	skew := fs.Duration("clock-skew", migrate.DefaultClockSkew, "how far the stores' clocks may run behind this machine's: the next catch-up's --since is the copy's first start less this")
	if err := p.parse(env, fs, args, copyUsage); err != nil {
		return err
	}
	from, target := p.from, p.to
	opts := migrate.Options{As: target.table, AllVersions: p.allVersions(), Workers: *workers, ClockSkew: *skew, Shard: p.shard.Shard}
	if *skew < 0 {
		return fmt.Errorf("--clock-skew %v: want a duration of 0 or more", *skew)
	}
	var err error
	if *salt != "" {
		if opts.Salter, err = salting.ParseSpec(*salt); err != nil {
			return fmt.Errorf("--salt: %w", err)
		}
	}
	if *since != "" {
		if opts.Since, err = parseSince(*since); err != nil {
			return err
		}
	}
	if p.sameTable() {
		return fmt.Errorf("copy %s: %w (give the copy another name with --as, or another store with --to)", from.table, migrate.ErrSameTable)
	}
	newFile := "" // --to's file, when this copy makes it: removed again if the copy fails before writing
	if path, ok := localPath(target.store); ok && !p.sameStore() {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			newFile = path
		}
	}
	ca, cb, closeStores, err := p.open(ctx, env, true)
	if err != nil {
		return err
	}
	closeFn := sync.OnceFunc(closeStores)
	defer closeFn()
	if opts.Resume, err = resume.resolve(ctx, func(ctx context.Context) (bool, error) {
		return migrate.Interrupted(ctx, cb, migrate.CheckpointTable(target.table), p.shard.Shard)
	}); err != nil {
		return err
	}
	if p.ranged() {
		cfg, err := ca.Describe(ctx, from.table)
		if err != nil {
			return fmt.Errorf("--from: %w", err)
		}
		kf, err := from.keyFormat(cfg.KeySchema)
		if err != nil {
			return err
		}
		if opts.Range, err = scanRange(kf, *p.start, *p.end, *p.prefix); err != nil {
			return err
		}
	}
	began := time.Now()
	opts.Progress = copyProgress(env, began)
	if env.watchCopy != nil {
		progress := opts.Progress
		opts.Progress = func(p migrate.Progress) { progress(p); env.watchCopy(p) }
	}
	st, err := migrate.Copy(ctx, ca, cb, from.table, opts)
	if err != nil && ctx.Err() != nil {
		cp := migrate.ShardCheckpoint(migrate.CheckpointTable(target.table), p.shard.Shard)
		if _, cerr := cb.OpenTable(context.WithoutCancel(ctx), cp, nil); cerr != nil {
			return interrupted(ctx, "copy of %s%s interrupted before it wrote anything: run it again", from.table, p.shard.of())
		}
		fmt.Fprintf(env.stdout, "copy%s interrupted after %d rows; its checkpoint is kept on --to: resume with:\n  %s\n", p.shard.of(), st.Rows,
			commandLine(fs, "brine copy", []string{"resume"}, "--resume", from.table))
		return interrupted(ctx, "copy of %s%s interrupted after %d rows: run the command above (the same flags, and --resume) to finish it", from.table, p.shard.of(), st.Rows)
	}
	if err != nil {
		if names, terr := cb.Tables(context.WithoutCancel(ctx)); newFile != "" && terr == nil && len(names) == 0 {
			closeFn()
			_ = os.Remove(newFile) // nothing was written into the store this copy made
		}
		return err
	}
	fmt.Fprintf(env.stderr, "copied %d rows (%d cells) of %s%s to %s in %v", st.Rows, st.Cells, from.table, p.shard.of(), target.table, st.Elapsed.Round(time.Millisecond))
	if len(st.Indexes) > 0 {
		fmt.Fprintf(env.stderr, "; built and verified indexes %s", strings.Join(st.Indexes, ", "))
	}
	if st.Since.IsZero() {
		fmt.Fprintf(env.stderr, "\nthe next catch-up pass: unknown (the resumed checkpoint did not record when its copy began): give the --since of that copy's start, less %v\n", *skew)
		return nil
	}
	if p.shard.Sharded() {
		fmt.Fprintf(env.stderr, "\nthis shard's --since: %s (the start of its first run, less %v for the stores' clocks): the next catch-up pass takes the earliest of all the shards'\n",
			st.Since.UTC().Format("2006-01-02T15:04:05.000Z"), *skew)
		return nil
	}
	fmt.Fprintf(env.stderr, "\nthe next catch-up pass: --since %s (the start of this copy's first run, less %v for the stores' clocks)\n",
		st.Since.UTC().Format("2006-01-02T15:04:05.000Z"), *skew)
	return nil
}

// parseSince reads --since: a date, RFC 3339, or milliseconds since 1970.
func parseSince(s string) (time.Time, error) {
	if t, ok := parseTime(s); ok {
		return t, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a date (2026-11-28), RFC 3339 (2026-11-28T10:00:00Z) or milliseconds since 1970", s)
}

// copyProgress prints the rows copied and the buckets done, at most every few seconds.
func copyProgress(env *cliEnv, began time.Time) func(migrate.Progress) {
	var mu sync.Mutex
	last, lastPhase := began, ""
	return func(p migrate.Progress) {
		mu.Lock()
		defer mu.Unlock()
		phase := p.Phase + " " + p.Index
		// A new phase is shown at once: after the rows, an indexed copy writes nothing for a while.
		if time.Since(last) < 3*time.Second && phase == lastPhase {
			return
		}
		last, lastPhase = time.Now(), phase
		switch p.Phase {
		case migrate.PhaseIndexes:
			fmt.Fprintf(env.stderr, "copy: %d rows copied; building the target's indexes (%v), in %v\n", p.Rows,
				p.Elapsed.Round(time.Second), time.Since(began).Round(time.Second))
		case migrate.PhaseVerifyIndex:
			fmt.Fprintf(env.stderr, "copy: %d rows copied; verifying index %s (%v), in %v\n", p.Rows, p.Index,
				p.Elapsed.Round(time.Second), time.Since(began).Round(time.Second))
		default:
			fmt.Fprintf(env.stderr, "copy: %d rows, %d of %d buckets done, in %v\n", p.Rows, p.Buckets, p.Total, time.Since(began).Round(time.Second))
		}
	}
}
