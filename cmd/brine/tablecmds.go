package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// The commands about tables rather than rows: tables, describe, drop.

// storeCommand parses the flags of a command that names at most one table, positionally or by
// --table, and opens the store (never creating one).
func storeCommand(ctx context.Context, env *cliEnv, name string, args []string, wantTable bool) (*storeFlags, *client.Client, error) {
	fs := newFlagSet(env, name)
	var sf storeFlags
	sf.register(fs)
	pos, err := sf.parse(env, fs, args)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case !wantTable && len(pos) > 0:
		return nil, nil, fmt.Errorf("usage: brine %s [--store URL] (no arguments, got %q)", name, pos)
	case !wantTable, len(pos) == 0 && sf.table != "":
	case len(pos) == 1 && (sf.table == "" || sf.table == pos[0]):
		sf.table = pos[0]
	default:
		return nil, nil, fmt.Errorf("usage: brine %s [--store URL] TABLE", name)
	}
	c, err := sf.openClient(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	return &sf, c, nil
}

func runTables(ctx context.Context, env *cliEnv, args []string) error {
	_, c, err := storeCommand(ctx, env, "tables", args, false)
	if err != nil {
		return err
	}
	defer c.Close()
	names, err := c.Tables(ctx)
	if err != nil {
		return err
	}
	for _, name := range names {
		spec := "(no brine spec: read unsalted)"
		if meta, err := c.Backend().TableMeta(ctx, name); err == nil {
			if s, ok := meta[client.MetaSaltSpec]; ok {
				spec = "salt " + salting.CanonicalSpec(s) // an earlier brine's spelling, as brine spells it now
			}
			if k, ok := meta[client.MetaKeySchema]; ok {
				spec += ", key " + k
			}
		}
		fmt.Fprintf(env.stdout, "%s\t%s\n", name, spec)
	}
	fmt.Fprintf(env.stderr, "%d tables\n", len(names))
	return nil
}

func runDescribe(ctx context.Context, env *cliEnv, args []string) error {
	sf, c, err := storeCommand(ctx, env, "describe", args, true)
	if err != nil {
		return err
	}
	c.Close() // openTable opens its own
	c, t, schema, err := sf.openTable(ctx, env, "")
	if errors.Is(err, client.ErrNoSpec) { // describe any table: without a stored spec there is no salt to show
		c, t, schema, err = sf.openTable(ctx, env, "none")
	}
	if err != nil {
		return err
	}
	defer c.Close()
	physical := servingTable(ctx, c, sf.table)
	meta, err := c.Backend().TableMeta(ctx, physical)
	if err != nil {
		return err
	}
	s := t.Salter()
	fmt.Fprintf(env.stdout, "table   %s\n", sf.table)
	if stored, ok := meta[client.MetaSaltSpec]; ok && stored != s.Spec() {
		fmt.Fprintf(env.stdout, "salt    %s (%d buckets; stored as %s, brine's old spelling)\n", s.Spec(), s.Buckets(), stored)
	} else if ok {
		fmt.Fprintf(env.stdout, "salt    %s (%d buckets)\n", s.Spec(), s.Buckets())
	} else {
		fmt.Fprintln(env.stdout, "salt    none stored (not created by brine: get/scan need --salt, '--salt none' reads it unsalted)")
	}
	if schema != nil {
		fmt.Fprintf(env.stdout, "key     %s (get/put/scan/delete take and print typed values)\n", schema)
	} else {
		fmt.Fprintln(env.stdout, "key     no schema stored (keys are text; --key or --hex to say otherwise)")
	}
	if cfg, err := c.Describe(ctx, physical); err == nil && cfg.Families != nil {
		fmt.Fprintf(env.stdout, "families %s\n", familiesText(cfg))
	}
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if k != client.MetaSaltSpec && k != client.MetaKeySchema && k != client.MetaLayout {
			fmt.Fprintf(env.stdout, "meta    %s=%s\n", k, meta[k])
		}
	}
	rl, ok := c.Backend().(backends.RegionLister)
	if !ok {
		fmt.Fprintln(env.stdout, "regions the store does not say how the table is split")
		return nil
	}
	starts, err := rl.Regions(ctx, physical)
	if err != nil {
		return err
	}
	perBucket, err := regionsPerBucket(s, starts)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "regions %d\n", len(starts))
	if len(perBucket) <= 64 {
		for b, n := range perBucket {
			fmt.Fprintf(env.stdout, "  bucket %d: %d region(s)\n", b, n)
		}
		return nil
	}
	hist := map[int]int{}
	for _, n := range perBucket {
		hist[n]++
	}
	for _, n := range slices.Sorted(maps.Keys(hist)) {
		fmt.Fprintf(env.stdout, "  %d buckets span %d region(s) each\n", hist[n], n)
	}
	return nil
}

// regionsPerBucket counts, for every bucket, the regions its physical key range overlaps: more than one
// means the bucket is split; buckets sharing a region show 1 each.
func regionsPerBucket(s salting.Salter, starts [][]byte) ([]int, error) {
	ranges, err := s.BucketRanges(nil, nil)
	if err != nil {
		return nil, err
	}
	out := make([]int, s.Buckets())
	for _, br := range ranges {
		// Regions starting strictly inside the bucket's range, plus the one holding its start.
		from := sort.Search(len(starts), func(i int) bool { return bytes.Compare(starts[i], br.Start) > 0 })
		to := len(starts)
		if len(br.End) > 0 {
			to = sort.Search(len(starts), func(i int) bool { return bytes.Compare(starts[i], br.End) >= 0 })
		}
		out[br.Bucket] = 1 + max(0, to-from)
	}
	return out, nil
}

func runDrop(ctx context.Context, env *cliEnv, args []string) error {
	sf, c, err := storeCommand(ctx, env, "drop", args, true)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := dropTableOrPeriods(ctx, c, sf.table); err != nil {
		if errors.Is(err, client.ErrTableNotFound) {
			return fmt.Errorf("%w ('brine tables' lists the tables of %s)", err, sf.store)
		}
		return err
	}
	fmt.Fprintf(env.stdout, "dropped %s\n", sf.table)
	return nil
}

// familiesText is describe's line of families: each with the settings it was created with.
func familiesText(cfg client.TableConfig) string {
	parts := make([]string, len(cfg.Families))
	for i, f := range cfg.Families {
		var set []string
		o := cfg.FamilyOptions[f]
		if v := cmp.Or(o.MaxVersions, cfg.MaxVersions); v > 1 {
			set = append(set, fmt.Sprintf("versions %d", v))
		}
		if o.TTL > 0 {
			set = append(set, "ttl "+o.TTL.String())
		}
		if o.Compression != "" {
			set = append(set, "compression "+o.Compression)
		}
		if o.BloomFilter != "" {
			set = append(set, "bloom "+o.BloomFilter)
		}
		if o.BlockCache != nil && !*o.BlockCache {
			set = append(set, "no block cache")
		}
		parts[i] = f
		if len(set) > 0 {
			parts[i] += " (" + strings.Join(set, ", ") + ")"
		}
	}
	return strings.Join(parts, ", ")
}
