package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
)

// indexFlags collects create's repeatable --index NAME=SPEC.
type indexFlags []client.IndexConfig

func (f *indexFlags) String() string { return fmt.Sprint(len(*f), " index(es)") }

func (f *indexFlags) Set(v string) error {
	name, spec, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want NAME=SPEC, got %q", v)
	}
	cfg, err := client.ParseIndexConfig(name, spec)
	if err != nil {
		return err
	}
	*f = append(*f, cfg)
	return nil
}

const indexUsage = "usage: brine index list|verify|rebuild [--store URL] [--grace DURATION] [--exclusive [--resume]] TABLE [INDEX]\n" +
	"       brine index add|drop ... (brine index add -h)"

// runIndex lists a table's indexes, verifies them against the main table (exit code 3 when a
// problem is found), or rebuilds them online.
func runIndex(ctx context.Context, env *cliEnv, args []string) error {
	verb, args, err := groupVerb(env, "index", indexUsage, args, "list", "verify", "rebuild", "add", "drop")
	if err != nil {
		return err
	}
	if verb == "add" || verb == "drop" {
		return runIndexChange(ctx, env, verb, args)
	}
	fs := newFlagSet(env, "index "+verb)
	var sf storeFlags
	sf.register(fs)
	grace := fs.Duration("grace", client.DefaultIndexGrace, "pending entries older than this are a writer's that died: verify counts them as problems, rebuild repairs them (0 when no writer runs)")
	exclusive, resume := registerExclusive(fs)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	env.applyVerbose(sf.verbose)
	if len(pos) > 0 && sf.table == "" {
		sf.table, pos = pos[0], pos[1:]
	}
	if sf.table == "" || len(pos) > 1 {
		return errors.New(indexUsage)
	}
	c, st, _, err := sf.openTable(ctx, env, "")
	if err != nil {
		return err
	}
	defer c.Close()
	t, ok := st.(*client.Table) // not a period table
	if !ok || len(t.Indexes()) == 0 {
		fmt.Fprintf(env.stdout, "table %s has no indexes\n", sf.table)
		return nil
	}
	indexes := t.Indexes()
	if len(pos) == 1 {
		ix, err := t.Index(pos[0])
		if err != nil {
			return err
		}
		indexes = []*client.Index{ix}
	}
	if verb == "rebuild" && (*exclusive || *resume) {
		return rebuildExclusive(ctx, env, c, sf.table, indexes, *exclusive, *resume)
	}
	problems := int64(0)
	for _, ix := range indexes {
		switch verb {
		case "list":
			fmt.Fprintf(env.stdout, "%s\t%s\ttable %s\t%s\n", ix.Name(), ix.Spec(), client.IndexTableName(sf.table, ix.Name()), ix.State())
		case "verify":
			rep, err := ix.WithGrace(*grace).Verify(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintln(env.stdout, rep)
			for _, e := range rep.Examples {
				fmt.Fprintf(env.stdout, "  %s\n", e)
			}
			problems += rep.Problems()
		case "rebuild":
			start := time.Now()
			p, err := ix.WithGrace(*grace).Rebuild(ctx, rebuildProgress(env))
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "index %s rebuilt: %d rows, %d entries checked in %s\n", p.Index, p.Rows, p.Entries, time.Since(start).Round(time.Millisecond))
		}
	}
	if problems > 0 {
		return &exitError{code: 3, err: fmt.Errorf("%d index problem(s): 'brine index rebuild %s' repairs them", problems, sf.table)}
	}
	return nil
}

// rebuildExclusive rebuilds indexes under the fence, as plain batches, then releases it: also how
// the indexes a killed exclusive job left building are made exact and active again.
func rebuildExclusive(ctx context.Context, env *cliEnv, c *client.Client, table string, indexes []*client.Index, exclusive, resume bool) error {
	x, err := exclusiveTable(ctx, env, c, table, exclusive, resume)
	if err != nil {
		return err
	}
	return underFence(ctx, env, x, func() error {
		for _, ix := range indexes {
			start := time.Now()
			p, err := x.Rebuild(ctx, ix.Name(), rebuildProgress(env))
			if err != nil {
				return err
			}
			fmt.Fprintf(env.stdout, "index %s rebuilt: %d rows, %d entries checked in %s\n", p.Index, p.Rows, p.Entries, time.Since(start).Round(time.Millisecond))
		}
		return nil
	})
}
