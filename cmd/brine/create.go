package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

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
