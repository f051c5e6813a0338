//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

// copyStore is one store a copy goes from or to: a client on it, and the names its tables take.
type copyStore struct {
	kind string
	c    *client.Client
	name func() string
}

// TestCopyEveryPair copies a table (two versions of every cell, two families) between every pair of
// HBase, the Tablestore server, the embedded store and the memory store, and each to itself under
// another name, re-salted; compare.Tables then finds the two equal, every version included. The
// HBase-to-Tablestore and Tablestore-to-HBase copies carry an index, built on the target and
// verified by the copy.
func TestCopyEveryPair(t *testing.T) {
	stores := everyStore(t, "cp")
	for _, from := range stores {
		for _, to := range stores {
			indexed := (from.kind == "hbase" && to.kind == "tablestore") || (from.kind == "tablestore" && to.kind == "hbase")
			t.Run(from.kind+"-to-"+to.kind, func(t *testing.T) { copyPair(t, from, to, indexed) })
		}
	}
}

// everyStore opens a client on each kind of store, HBase, the Tablestore server, the embedded store
// and the memory store, whose tables are named with prefix.
func everyStore(t *testing.T, prefix string) []copyStore {
	he := openHBase(t)
	srv := tablestoretest.Start(t)
	ts := (&tsTarget{name: "local", srv: srv, cfg: tablestore.Config{
		Endpoint: srv.Endpoint(), Instance: srv.Instance(), AccessKeyID: srv.AccessKeyID(), AccessKeySecret: srv.AccessKeySecret(),
	}}).open(t, nil)
	lb, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "db"), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	logger := client.WithLogger(testkit.Logger(t, slog.LevelWarn))
	lc, mc := client.New(lb, logger), client.New(memory.New(), logger)
	t.Cleanup(func() { _ = lc.Close(); _ = mc.Close() })
	n := 0
	seq := func(kind string) func() string {
		return func() string {
			n++
			return fmt.Sprintf("brine_%s_%s_%d_%d", prefix, kind, time.Now().UnixNano()%1e9, n)
		}
	}
	return []copyStore{
		{"hbase", he.client, func() string { return hbasetest.Table("brine_" + prefix) }},
		{"tablestore", ts.client, func() string { return tsTableName(prefix) }},
		{"local", lc, seq("l")},
		{"memory", mc, seq("m")},
	}
}

func copyPair(t *testing.T, from, to copyStore, indexed bool) {
	ctx := testkit.Context(t, 3*time.Minute)
	src, dst := from.name(), to.name()
	drop := func(c *client.Client, name string) {
		testkit.DeleteAtEnd(t, name, c.DeleteTable, backends.ErrTableNotFound)
	}
	drop(from.c, src)
	drop(to.c, dst)
	cfg := client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Families: []string{"d", "m"}, MaxVersions: 2,
		KeySchema: testkit.Schema(t, "id:string")}
	if indexed {
		ix, perr := client.ParseIndexConfig("by_buyer", "salt=hash:2|key=c:d:buyer")
		if perr != nil {
			t.Fatal(perr)
		}
		cfg.Indexes = []client.IndexConfig{ix}
	}
	tbl, err := from.c.CreateTable(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 300
	// Recent versions: Tablestore refuses a timestamp far from its clock (its max time deviation).
	now := time.Now().UnixMilli()
	for v, ts := range []int64{now - 7_200_000, now - 3_600_000} {
		muts := make([]client.Mutation, rows)
		for i := range muts {
			muts[i] = client.Mutation{Key: fmt.Appendf(nil, "o%04d", i), Cells: []client.Cell{
				{Family: "d", Qualifier: "buyer", Value: fmt.Appendf(nil, "b%d", i%7), Timestamp: ts},
				{Family: "m", Qualifier: "v", Value: fmt.Appendf(nil, "%d", v), Timestamp: ts},
			}}
		}
		if rowErrs, err := tbl.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
			t.Fatal(err, errors.Join(rowErrs...))
		}
	}
	st, err := migrate.Copy(ctx, from.c, to.c, src, migrate.Options{As: dst, Salter: testkit.Salter(t, "hash:3"), AllVersions: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Rows != rows || st.Cells != 4*rows || (indexed && len(st.Indexes) != 1) {
		t.Errorf("copy stats %+v, want %d rows, %d cells, indexed %t", st, rows, 4*rows, indexed)
	}
	var target compare.Source
	if indexed {
		it, err := to.c.OpenTable(ctx, dst, nil)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := it.Index("by_buyer")
		if err != nil {
			t.Fatal(err)
		}
		if n := testkit.Count(t, ix.Scan(ctx, client.Range{})); n != rows {
			t.Errorf("query by the copy's index: %d rows, want %d", n, rows)
		}
		target = it
	} else if target, err = to.c.OpenTable(ctx, dst, nil); err != nil {
		t.Fatal(err)
	}
	var cs compare.Stats
	for d, err := range compare.Tables(ctx, tbl, target, client.Range{}, compare.Options{AllVersions: true, Stats: &cs}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("differ: %v at %q", d.Kind, d.Key)
	}
	if cs.RowsA != rows || cs.RowsB != rows {
		t.Errorf("compared %d and %d rows, want %d each", cs.RowsA, cs.RowsB, rows)
	}
}
