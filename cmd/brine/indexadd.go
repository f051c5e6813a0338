package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
)

const indexChangeUsage = "usage: brine index add [--store URL] [--fence DURATION] [--no-plain-writers | --exclusive [--resume]] TABLE --index NAME=SPEC\n" +
	"       brine index drop [--store URL] [--fence DURATION] TABLE NAME"

// runIndexChange adds an index to a table in use (declared, built, verified, then active) or drops
// one; see client.AddIndex and client.DropIndex.
func runIndexChange(ctx context.Context, env *cliEnv, verb string, args []string) error {
	fs := newFlagSet(env, "index "+verb)
	var sf storeFlags
	sf.register(fs)
	fence := fs.Duration("fence", 0, "how long to wait for every writer to see the change (default: three of the client's refresh intervals, thirty for a table's first index)")
	var add indexFlags
	noPlain, exclusive, resume := new(bool), new(bool), new(bool)
	if verb == "add" {
		fs.Var(&add, "index", "the index to add, NAME=SPEC as for create --index")
		noPlain = fs.Bool("no-plain-writers", false, "promise that no plain (unindexed) handle writes the table: required for its first index")
		exclusive, resume = registerExclusive(fs)
	}
	pos, err := sf.parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 && sf.table == "" {
		sf.table, pos = pos[0], pos[1:]
	}
	if sf.table == "" || verb == "add" && (len(add) != 1 || len(pos) != 0) || verb == "drop" && len(pos) != 1 {
		return errors.New(indexChangeUsage)
	}
	c, err := sf.openClient(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	if verb == "drop" {
		if err := c.DropIndex(ctx, sf.table, pos[0], client.DropIndexOptions{Fence: *fence}); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "index %s dropped from %s\n", pos[0], sf.table)
		return nil
	}
	start := time.Now()
	if *exclusive || *resume {
		return addExclusive(ctx, env, c, sf.table, add[0], *exclusive, *resume, start)
	}
	p, err := c.AddIndex(ctx, sf.table, add[0], client.AddIndexOptions{Fence: *fence, NoPlainWriters: *noPlain, Progress: rebuildProgress(env)})
	if errors.Is(err, client.ErrPlainWriters) {
		// The library's message names its Go option; this one names the flag.
		return fmt.Errorf("index add %s: %w: the table has no index yet, so a writer around brine's Table (a drop-in client, a raw driver) would not keep one: stop such writers, then run again with --no-plain-writers (brine's own handles keep the index by themselves)",
			sf.table, backends.ErrInvalidArgument)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "index %s added to %s: %d rows, %d entries checked in %s\n", p.Index, sf.table, p.Rows, p.Entries, time.Since(start).Round(time.Millisecond))
	return nil
}

// rebuildProgress prints a build's progress, one line per bucket, to stderr.
func rebuildProgress(env *cliEnv) func(client.RebuildProgress) {
	return func(p client.RebuildProgress) {
		fmt.Fprintf(env.stderr, "index %s: bucket %d/%d, %d rows, %d entries\n", p.Index, p.Buckets, p.Total, p.Rows, p.Entries)
	}
}

// registerExclusive adds --exclusive and --resume, the flags of the exclusive bulk mode.
func registerExclusive(fs *flag.FlagSet) (exclusive, resume *bool) {
	exclusive = fs.Bool("exclusive", false, "fence the table's other writers (theirs fail, retryably, until the end) and write the index entries as plain batches, at bulk speed; queries by its indexes wait for the end")
	resume = fs.Bool("resume", false, "with --exclusive: take over the fence a killed exclusive job left (its holder must be dead), and finish")
	return exclusive, resume
}

// exclusiveTable fences the indexed table name (--exclusive; --resume takes over a dead job's fence).
func exclusiveTable(ctx context.Context, env *cliEnv, c *client.Client, name string, exclusive, resume bool) (*client.ExclusiveTable, error) {
	if !exclusive {
		return nil, errors.New("--resume takes over an exclusive job's fence: give --exclusive too")
	}
	it, err := c.OpenTable(ctx, name, nil)
	if err != nil {
		return nil, err
	}
	if len(it.Indexes()) == 0 {
		return nil, fmt.Errorf("--exclusive: table %s has no index, and a fence is kept by the writers of tables with indexes only: add its first index without --exclusive (with --no-plain-writers)", name)
	}
	return fenceIndexed(ctx, env, it, resume)
}

// fenceIndexed takes it's exclusive fence (resume: over a dead job's) for a command's job.
func fenceIndexed(ctx context.Context, env *cliEnv, it *client.Table, resume bool) (*client.ExclusiveTable, error) {
	x, err := it.Exclusive(ctx, client.ExclusiveOptions{TakeOver: resume})
	if errors.Is(err, client.ErrFenced) {
		return nil, fmt.Errorf("%w\n(an exclusive job holds it; if that job was killed, run yours with --resume, or wait for its lease to run out)", err)
	}
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(env.stderr, "exclusive: the writers of %s are fenced; queries by its indexes wait for the end\n", it.Name())
	return x, nil
}

// addExclusive adds an index under the fence, then releases it.
func addExclusive(ctx context.Context, env *cliEnv, c *client.Client, table string, cfg client.IndexConfig, exclusive, resume bool, start time.Time) error {
	x, err := exclusiveTable(ctx, env, c, table, exclusive, resume)
	if err != nil {
		return err
	}
	return underFence(ctx, env, x, func() error {
		p, err := x.AddIndex(ctx, cfg, rebuildProgress(env))
		if err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "index %s added to %s: %d rows in %s\n", p.Index, table, p.Rows, time.Since(start).Round(time.Millisecond))
		return nil
	})
}

// underFence runs fn, the work of an exclusive job, then releases x's fence whatever fn's outcome.
func underFence(ctx context.Context, env *cliEnv, x *client.ExclusiveTable, fn func() error) error {
	err := fn()
	if rerr := releaseFence(ctx, env, x); err == nil {
		err = rerr
	}
	return err
}
