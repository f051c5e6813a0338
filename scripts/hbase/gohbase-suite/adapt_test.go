//go:build integration && gohbasesuite

// The adaptation that scripts/hbase/gohbase-suite.sh adds to a copy of gohbase's own integration_test.go
// (package gohbase_test) for its drop-in run: how the test table is created. The other adaptation is
// the one-line swap of gohbase.NewClient for dropin.NewClient, made by the script in the copy itself.
// Nothing else of gohbase's file changes.
package gohbase_test

import (
	"context"
	"os"
	"time"

	"github.com/tsuna/gohbase"

	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// suiteCreateTable stands for TestMain's CreateTable: brine creates the table, salted by
// $BRINE_SUITE_SALT (default hash:8), with the family settings gohbase's CreateTable gives
// (hrpc.NewCreateTable's defaults: 3 versions, ROW bloom filter, block cache, no compression, no TTL).
// gohbase pre-splits its table into 4 regions at its REVTEST keys, which are logical keys and
// meaningless on a salted table; brine splits it into as many regions (len(keySplits)+1) at bucket
// boundaries, so that tests counting the table's regions (TestCacheRegions) count the same.
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
	_, err = client.New(b).CreateTable(ctx, table, client.TableConfig{Salter: s, Families: families, FamilyOptions: fo, Regions: len(keySplits) + 1})
	return err
}
