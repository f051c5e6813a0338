package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/migrate"
)

const syncUsage = "usage: brine sync --from STORE --to STORE TABLE [--as NAME] [--start K] [--end K | --prefix P] [--versions latest|all] [--shard I/N] [--dry-run] [--resume[=auto]]"

// runSync makes a table on --to equal to the table on --from: migrate.Sync, each change printed as
// it is made (or, with --dry-run, as it would be), with its progress on stderr, and on an interrupt
// the command that resumes it.
func runSync(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "sync")
	var p pairFlags
	p.register(fs, "synced from", "store URL of the table made equal to --from's")
	chunk := fs.Int("chunk", compare.DefaultChunk, "mean rows per hashed chunk, as verify's")
	dryRun := fs.Bool("dry-run", false, "list the changes, write nothing")
	var resume resumeFlag
	fs.Var(&resume, "resume", "finish an interrupted sync, from its checkpoint (the same flags as it had); =auto: if it is there, else start the sync")
	if err := p.parse(env, fs, args, syncUsage); err != nil {
		return err
	}
	if *chunk <= 0 {
		return fmt.Errorf("--chunk %d: want a positive row count", *chunk)
	}
	if *dryRun && (resume.on || resume.auto) {
		return fmt.Errorf("--dry-run and --resume exclude each other: a dry run keeps no checkpoint")
	}
	from, target := p.from, p.to
	if p.sameTable() {
		return fmt.Errorf("sync %s: %w (give the target another name with --as, or another store with --to)", from.table, migrate.ErrSameTable)
	}
	ca, cb, closeFn, err := p.open(ctx, env, false)
	if err != nil {
		return err
	}
	defer closeFn()
	cfg, err := ca.Describe(ctx, from.table)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	kf, err := from.keyFormat(cfg.KeySchema)
	if err != nil {
		return err
	}
	opts := migrate.SyncOptions{As: target.table, AllVersions: p.allVersions(), DryRun: *dryRun, Chunk: *chunk, Shard: p.shard.Shard}
	if opts.Range, err = scanRange(kf, *p.start, *p.end, *p.prefix); err != nil {
		return err
	}
	if opts.Resume, err = resume.resolve(ctx, func(ctx context.Context) (bool, error) {
		return migrate.SyncInterrupted(ctx, ca, cb, from.table, target.table, p.shard.Shard)
	}); err != nil {
		return err
	}
	began := time.Now()
	opts.Progress = syncProgress(env, began)
	opts.OnChange = func(ch migrate.Change) { fmt.Fprintln(env.stdout, describeChange(kf, ch)) }
	st, err := migrate.Sync(ctx, ca, cb, from.table, opts)
	if err != nil && ctx.Err() != nil && !*dryRun {
		if kept, cerr := migrate.SyncInterrupted(context.WithoutCancel(ctx), ca, cb, from.table, target.table, p.shard.Shard); cerr != nil || !kept {
			return interrupted(ctx, "sync of %s%s interrupted before it kept a checkpoint: run it again (the rows it changed compare equal, and are left alone)", from.table, p.shard.of())
		}
		fmt.Fprintf(env.stdout, "sync%s interrupted after %d changes; its checkpoint is kept on --to: resume with:\n  %s\n", p.shard.of(), st.Changes,
			commandLine(fs, "brine sync", []string{"resume"}, "--resume", from.table))
		return interrupted(ctx, "sync of %s%s interrupted after %d changes: run the command above (the same flags, and --resume) to finish it", from.table, p.shard.of(), st.Changes)
	}
	if err != nil && ctx.Err() != nil {
		return interrupted(ctx, "dry run of a sync of %s interrupted after %d changes listed: it wrote nothing; run it again", from.table, st.Changes)
	}
	if err != nil {
		return err
	}
	verb := "changed"
	if *dryRun {
		verb = "would change (a dry run: nothing written)"
	}
	fmt.Fprintf(env.stderr, "synced %s%s to %s: %d rows compared, %d %s, %d cells put, %d columns, versions and rows deleted, in %v\n",
		from.table, p.shard.of(), target.table, st.Compared, st.Changes, verb, st.Puts, st.Deletes, st.Elapsed.Round(time.Millisecond))
	return nil
}

// describeChange is one line of sync's output: "delete: KEY" for a row only in the target, else
// "change: KEY (delete the row; delete d:b; delete d:c@2000; put d:a=1@1000 ...)", the key as get
// prints it.
func describeChange(kf keyFormat, ch migrate.Change) string {
	key := kf.format(ch.Key)
	if ch.DeleteRow && len(ch.Put) == 0 {
		return "delete: " + key
	}
	var parts []string
	if ch.DeleteRow {
		parts = append(parts, "delete the row")
	}
	for _, c := range ch.Delete {
		parts = append(parts, "delete "+columnText(c))
	}
	for _, c := range ch.DeleteVersions {
		parts = append(parts, fmt.Sprintf("delete %s:%s@%d", c.Family, c.Qualifier, c.Timestamp))
	}
	if len(ch.Put) > 0 {
		cells := make([]string, len(ch.Put))
		for i, c := range ch.Put {
			cells[i] = fmt.Sprintf("%s:%s=%s@%d", c.Family, c.Qualifier, printable(c.Value), c.Timestamp)
		}
		parts = append(parts, "put "+strings.Join(cells, " "))
	}
	return "change: " + key + " (" + strings.Join(parts, "; ") + ")"
}

func columnText(c client.Column) string {
	if c.Qualifier == "" {
		return c.Family
	}
	return c.Family + ":" + c.Qualifier
}

// syncProgress prints the rows hashed and the changes made, at most every few seconds.
func syncProgress(env *cliEnv, began time.Time) func(migrate.SyncProgress) {
	var mu sync.Mutex
	last := began
	return func(p migrate.SyncProgress) {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < 3*time.Second {
			return
		}
		last = time.Now()
		fmt.Fprintf(env.stderr, "sync: %d rows of --from and %d of --to hashed, %d changes, in %v\n",
			p.RowsFrom, p.RowsTo, p.Changes, time.Since(began).Round(time.Second))
	}
}
