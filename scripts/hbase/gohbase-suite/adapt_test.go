//go:build integration && gohbasesuite

// The adaptation that scripts/hbase/gohbase-suite.sh adds to a copy of gohbase's own integration_test.go
// (package gohbase_test) for its drop-in run: how a client is made and how the test table is created.
// Nothing else of gohbase's file changes.
package gohbase_test

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/tsuna/gohbase"

	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/backends/hbase/dropin"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// suiteAdmin is one admin client for every drop-in: the pinned gohbase's admin client cannot be closed.
var suiteAdmin = sync.OnceValue(func() gohbase.AdminClient { return gohbase.NewAdminClient(*host) })

// suiteClient stands for gohbase.NewClient(zk, opts...): the drop-in over a gohbase client made with
// the test's own options. WithUnsalted lets tables brine did not create (hbase:meta, hbase:namespace)
// through as they are.
func suiteClient(zk string, opts ...gohbase.Option) gohbase.Client {
	inner := gohbase.NewClient(zk, opts...)
	b, err := hbase.New(inner, suiteAdmin(), hbase.Options{})
	if err != nil {
		panic(err)
	}
	return dropin.New(inner, dropin.WithBackend(b), dropin.WithUnsalted())
}

// suiteCreateTable stands for TestMain's CreateTable: brine creates the table, salted by
// $BRINE_SUITE_SALT (default hash:8) and pre-split at its buckets (gohbase's REVTEST split keys are
// logical keys, meaningless on a salted table), with the family settings gohbase's CreateTable gives
// (hrpc.NewCreateTable's defaults: 3 versions, ROW bloom filter, block cache, no compression, no TTL).
func suiteCreateTable(_ gohbase.AdminClient, table string, families []string) error {
	spec := os.Getenv("BRINE_SUITE_SALT")
	if spec == "" {
		spec = "hash:8"
	}
	s, err := salting.ParseSpec(spec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: *host})
	if err != nil {
		return err
	}
	defer b.Close()
	cache := true
	fo := map[string]client.FamilyOptions{}
	for _, f := range families {
		fo[f] = client.FamilyOptions{MaxVersions: 3, BloomFilter: "ROW", BlockCache: &cache, Compression: "NONE"}
	}
	_, err = client.New(b).CreateTable(ctx, table, client.TableConfig{Salter: s, Families: families, FamilyOptions: fo})
	return err
}
