package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// servingTable is the physical table that serves a logical one: its own name unless it was
// rebucketed.
func servingTable(ctx context.Context, c *client.Client, name string) string {
	if st, err := c.RebucketStatus(ctx, name); err == nil && st.Table != "" {
		return st.Table
	}
	return name
}

// runRebucket moves a live table to a new salting spec (client.Table.Rebucket), printing each step
// and copied bucket; a rebucket that stopped resumes with --resume.
func runRebucket(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "rebucket")
	var sf storeFlags
	sf.register(fs)
	to := fs.String("to", "", "the new salting spec, e.g. hash:32")
	resume := fs.Bool("resume", false, "continue the rebucket under way (its spec is recorded; --to may be left out)")
	families := fs.String("families", client.DefaultFamily, "the table's column families, comma-separated (a whole-row delete during the rebucket deletes these)")
	maxVersions := fs.Int("max-versions", 0, "versions of each column the new table keeps and the copy moves (0: 1)")
	fence := fs.Duration("fence", client.DefaultRebucketFence, "wait after each step for every client to see it: longer than the clients' directory refresh plus the longest write")
	grace := fs.Duration("grace", 0, "keep the old table this long after the switch (0: --fence; negative: keep it)")
	workers := fs.Int("workers", 0, "old buckets copied at once (0: the client's concurrency)")
	pos, err := sf.parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 1 && sf.table == "" {
		sf.table = pos[0]
	} else if len(pos) > 1 || (len(pos) == 1 && sf.table != pos[0]) {
		return errors.New("usage: brine rebucket [--store URL] TABLE --to SPEC [--resume]")
	}
	if sf.table == "" {
		return errors.New("usage: brine rebucket [--store URL] TABLE --to SPEC [--resume]")
	}
	c, err := sf.openClient(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := c.RebucketStatus(ctx, sf.table)
	if err != nil {
		return err
	}
	underWay := st.State != "" || st.Target != ""
	switch {
	case underWay && !*resume:
		return fmt.Errorf("a rebucket of %s to %s is under way (step %s): pass --resume to finish it", sf.table, st.TargetSpec, st.State)
	case !underWay && *resume && *to == "":
		return fmt.Errorf("no rebucket of %s is under way: give --to SPEC to start one", sf.table)
	case underWay && *to == "":
		*to = st.TargetSpec
	case *to == "":
		return errors.New("--to SPEC is required, e.g. --to hash:32")
	}
	target, err := salting.ParseSpec(*to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	rebucket, err := openRebucket(ctx, c, sf.table)
	if err != nil {
		return err
	}
	began := time.Now()
	opts := client.RebucketOptions{
		Families: strings.Split(*families, ","), MaxVersions: *maxVersions,
		Fence: *fence, Grace: *grace, Workers: *workers,
		Progress: func(p client.RebucketProgress) {
			step := p.State
			if step == "" {
				step = "serving from " + p.Table
			}
			fmt.Fprintf(env.stderr, "rebucket %s -> %s: %s, %d/%d buckets copied, %d rows copied (%s)\n",
				sf.table, target.Spec(), step, p.BucketsDone, p.Buckets, p.RowsCopied, time.Since(began).Round(time.Millisecond))
		},
	}
	if err := rebucket(ctx, target, opts); err != nil {
		// A refusal (a bad flag, a table it cannot move) started nothing that --resume could finish.
		if st, serr := c.RebucketStatus(context.WithoutCancel(ctx), sf.table); serr == nil && (st.State != "" || st.Target != "") {
			return fmt.Errorf("%w\n(run the same command with --resume to continue where it stopped)", err)
		}
		return err
	}
	fmt.Fprintf(env.stdout, "%s\tsalt %s\n", sf.table, target.Spec())
	return nil
}

type rebucketFunc func(context.Context, salting.Salter, client.RebucketOptions) error

// openRebucket returns the rebucket of name: of a plain table, of the main table of a table with
// indexes, or of an index's table (TABLE__ix_INDEX), whose entries the index's writers must route
// through the rebucket, which only Table.RebucketIndex makes them do.
func openRebucket(ctx context.Context, c *client.Client, name string) (rebucketFunc, error) {
	table, index, err := c.IndexTableOf(ctx, name)
	if err != nil {
		return nil, err
	}
	if index != "" {
		it, err := c.OpenTable(ctx, table, nil)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, to salting.Salter, opts client.RebucketOptions) error {
			return it.RebucketIndex(ctx, index, to, opts)
		}, nil
	}
	t, err := openSalted(ctx, c, name, nil)
	if err != nil {
		return nil, err
	}
	return t.Rebucket, nil
}
