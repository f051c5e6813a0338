//go:build integration

// Conformance of the driver against a real HBase (scripts/hbase/up.sh). Needs BRINE_HBASE_ZK; without
// it the tests skip, unless CI=true, where they fail. Run:
//
//	scripts/hbase/up.sh && BRINE_HBASE_ZK=127.0.0.1:2181 go test -tags integration ./backends/hbase/
package hbase_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestMain(m *testing.M) {
	// gohbase logs each new region connection at info level through the default slog logger (the
	// raw gohbase clients of these tests give it no other).
	slog.SetLogLoggerLevel(slog.LevelWarn)
	os.Exit(m.Run())
}

func openBackend(t *testing.T, opts hbase.Options) *hbase.Backend {
	t.Helper()
	zk := hbasetest.ZK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if opts.Logger == nil {
		opts.Logger = testkit.Logger(t, slog.LevelDebug)
	}
	b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: zk, Options: opts})
	if err != nil {
		t.Fatalf("Open(%s): %v", zk, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// newTable creates a uniquely named table, dropped when the test ends.
func newTable(t *testing.T, b *hbase.Backend, opts backends.TableOptions) string {
	t.Helper()
	name := hbasetest.Table("brine_it")
	if opts.Families == nil {
		opts.Families = []string{"d", "e"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := b.CreateTable(ctx, name, opts); err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	testkit.DeleteAtEnd(t, name, b.DeleteTable)
	return name
}

// testCtx is the context of one test's calls to HBase.
func testCtx(t *testing.T) context.Context { return testkit.Context(t, 90*time.Second) }

func put(key []byte, cells ...backends.Cell) backends.Mutation {
	return backends.Mutation{Key: key, Cells: cells}
}

func cell(fam, qual, val string) backends.Cell {
	return backends.Cell{Family: fam, Qualifier: qual, Value: []byte(val)}
}

func keysOf(rows []backends.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%q", r.Key)
	}
	return out
}

func TestTableLifecycle(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	name := hbasetest.Table("brine_it_life")

	if err := b.CreateTable(ctx, name, backends.TableOptions{Families: []string{"d"}}); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if err := b.CreateTable(ctx, name, backends.TableOptions{Families: []string{"d"}}); !errors.Is(err, backends.ErrTableExists) {
		t.Errorf("second CreateTable: got %v, want ErrTableExists", err)
	}
	meta, err := b.TableMeta(ctx, name)
	if err != nil || meta == nil || len(meta) != 0 {
		t.Errorf("TableMeta without meta: got %v, %v; want empty map", meta, err)
	}
	if err := b.DeleteTable(ctx, name); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}

	// Everything on a missing table says ErrTableNotFound.
	if err := b.DeleteTable(ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("DeleteTable again: got %v, want ErrTableNotFound", err)
	}
	if _, err := b.TableMeta(ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("TableMeta: got %v, want ErrTableNotFound", err)
	}
	if _, err := b.Regions(ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("Regions: got %v, want ErrTableNotFound", err)
	}
	if _, _, err := b.RegionServers(ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("RegionServers: got %v, want ErrTableNotFound", err)
	}
	if _, err := b.Read(ctx, name, [][]byte{[]byte("k")}, backends.ReadOptions{}); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("Read: got %v, want ErrTableNotFound", err)
	}
	if rowErrs, err := b.Apply(ctx, name, []backends.Mutation{put([]byte("k"), cell("d", "q", "v"))}); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("Apply: got %v (rowErrs %v), want ErrTableNotFound", err, rowErrs)
	}
	for _, reverse := range []bool{false, true} {
		if _, err := testkit.CollectErr(b.Scan(ctx, name, backends.Range{}, backends.ScanOptions{Reverse: reverse})); !errors.Is(err, backends.ErrTableNotFound) {
			t.Errorf("Scan(reverse=%v): got %v, want ErrTableNotFound", reverse, err)
		}
	}
}

func TestCreateTableInvalid(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	tests := []struct {
		name  string
		table string
		opts  backends.TableOptions
		want  error
	}{
		{"no families", hbasetest.Table("brine_it"), backends.TableOptions{}, backends.ErrInvalidArgument},
		{"bad namespace", "n-s:t", backends.TableOptions{Families: []string{"d"}}, backends.ErrInvalidArgument},
		{"settings of no family", hbasetest.Table("brine_it"), backends.TableOptions{Families: []string{"d"},
			FamilyOptions: map[string]backends.FamilyOptions{"e": {MaxVersions: 3}}}, backends.ErrInvalidArgument},
		{"sub-second TTL", hbasetest.Table("brine_it"), backends.TableOptions{Families: []string{"d"},
			FamilyOptions: map[string]backends.FamilyOptions{"d": {TTL: 1500 * time.Millisecond}}}, backends.ErrInvalidArgument},
		{"bad family", hbasetest.Table("brine_it"), backends.TableOptions{Families: []string{"a:b"}}, backends.ErrInvalidArgument},
		{"unsorted splits", hbasetest.Table("brine_it"), backends.TableOptions{Families: []string{"d"}, SplitKeys: [][]byte{[]byte("b"), []byte("a")}}, backends.ErrInvalidArgument},
		{"empty split", hbasetest.Table("brine_it"), backends.TableOptions{Families: []string{"d"}, SplitKeys: [][]byte{{}}}, backends.ErrInvalidKey},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := b.CreateTable(ctx, tc.table, tc.opts); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestTableMetaAndRegions(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	splits := [][]byte{{0x00}, {0x00, 0x00}, []byte("m"), {0x80}, {0xff}, {0xff, 0xff, 0x00}}
	meta := map[string]string{
		"salting":     `{"strategy":"hash","buckets":16}`,
		"unicode":     "ключ ✓",
		"empty":       "",
		"with.dots=1": "a=b,c",
	}
	table := newTable(t, b, backends.TableOptions{SplitKeys: splits, Meta: meta})

	got, err := b.TableMeta(ctx, table)
	if err != nil {
		t.Fatalf("TableMeta: %v", err)
	}
	if fmt.Sprint(got) != fmt.Sprint(meta) {
		t.Errorf("TableMeta = %v, want %v", got, meta)
	}

	regions, err := b.Regions(ctx, table)
	if err != nil {
		t.Fatalf("Regions: %v", err)
	}
	want := append([][]byte{{}}, splits...)
	if len(regions) != len(want) {
		t.Fatalf("Regions = %q, want %q", regions, want)
	}
	for i := range want {
		if !bytes.Equal(regions[i], want[i]) {
			t.Errorf("Regions[%d] = %q, want %q", i, regions[i], want[i])
		}
	}

	// RegionServers: the same regions, each with the host:port of the server that serves it.
	starts, servers, err := b.RegionServers(ctx, table)
	if err != nil {
		t.Fatalf("RegionServers: %v", err)
	}
	if !slices.EqualFunc(starts, want, bytes.Equal) || len(servers) != len(starts) {
		t.Fatalf("RegionServers = %q, %q; want starts %q", starts, servers, want)
	}
	for i, s := range servers {
		if host, port, err := net.SplitHostPort(s); err != nil || host == "" || port == "" {
			t.Errorf("region %d served by %q, want host:port (%v)", i, s, err)
		}
	}
}

func TestPutReadDelete(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := newTable(t, b, backends.TableOptions{SplitKeys: [][]byte{[]byte("m")}})

	k1, k2, missing := []byte("a\x00key"), []byte("z\xffkey"), []byte("nope")
	testkit.Apply(t, testCtx(t), b, table,
		put(k1, cell("e", "x", "ex"), cell("d", "b", "db"), cell("d", "a", "da"), cell("d", "", "empty-qualifier")),
		put(k2, backends.Cell{Family: "d", Qualifier: "t", Value: []byte("old"), Timestamp: 1_000}),
	)
	testkit.Apply(t, testCtx(t), b, table, put(k2, backends.Cell{Family: "d", Qualifier: "t", Value: []byte("new"), Timestamp: 2_000}))
	// An older explicit timestamp does not shadow the newer cell.
	testkit.Apply(t, testCtx(t), b, table, put(k2, backends.Cell{Family: "d", Qualifier: "t", Value: []byte("older"), Timestamp: 1_500}))

	rows, err := b.Read(ctx, table, [][]byte{k1, missing, k2}, backends.ReadOptions{})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(rows) != 3 {
		t.Fatalf("Read returned %d rows, want 3", len(rows))
	}
	var got []string
	for _, c := range rows[0].Cells {
		got = append(got, c.Family+":"+c.Qualifier+"="+string(c.Value))
		if c.Timestamp <= 0 {
			t.Errorf("server timestamp of %s:%s = %d, want > 0", c.Family, c.Qualifier, c.Timestamp)
		}
	}
	if want := []string{"d:=empty-qualifier", "d:a=da", "d:b=db", "e:x=ex"}; !slices.Equal(got, want) {
		t.Errorf("row 0 cells = %v, want %v (sorted by family, qualifier)", got, want)
	}
	if !bytes.Equal(rows[1].Key, missing) || rows[1].Cells != nil {
		t.Errorf("missing row = %+v, want key only", rows[1])
	}
	if c := rows[2].Cells; len(c) != 1 || string(c[0].Value) != "new" || c[0].Timestamp != 2_000 {
		t.Errorf("row 2 = %+v, want d:t=new@2000", c)
	}

	// Column selection: a whole family, and one qualifier.
	rows, err = b.Read(ctx, table, [][]byte{k1}, backends.ReadOptions{Columns: []backends.Column{{Family: "e"}, {Family: "d", Qualifier: "b"}}})
	if err != nil {
		t.Fatalf("Read with columns: %v", err)
	}
	got = nil
	for _, c := range rows[0].Cells {
		got = append(got, c.Family+":"+c.Qualifier)
	}
	if want := []string{"d:b", "e:x"}; !slices.Equal(got, want) {
		t.Errorf("selected cells = %v, want %v", got, want)
	}

	// Delete one column, then the whole row.
	testkit.Apply(t, testCtx(t), b, table, backends.Mutation{Key: k1, Delete: true, Cells: []backends.Cell{{Family: "d", Qualifier: "a"}}})
	rows, _ = b.Read(ctx, table, [][]byte{k1}, backends.ReadOptions{})
	if len(rows[0].Cells) != 3 || rows[0].Cells[1].Qualifier != "b" {
		t.Errorf("after column delete: %+v", rows[0].Cells)
	}
	testkit.Apply(t, testCtx(t), b, table, backends.Mutation{Key: k1, Delete: true}, backends.Mutation{Key: k2, Delete: true})
	rows, _ = b.Read(ctx, table, [][]byte{k1, k2}, backends.ReadOptions{})
	if rows[0].Cells != nil || rows[1].Cells != nil {
		t.Errorf("after row delete: %+v", rows)
	}
}

func TestApplyRowErrors(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := newTable(t, b, backends.TableOptions{})

	long := bytes.Repeat([]byte("k"), 32768) // over HBase's own limit
	maxKey := bytes.Repeat([]byte("k"), hbase.MaxKeyLen)
	tooLongForGohbase := bytes.Repeat([]byte("k"), hbase.MaxKeyLen+1) // HBase would take it; gohbase could not locate it
	muts := []backends.Mutation{
		put([]byte("r0"), cell("d", "q", "0")),
		put(nil, cell("d", "q", "empty key")),
		put([]byte("r2"), cell("d", "q", "2")),
		put(long, cell("d", "q", "too long")),
		put([]byte("r4"), cell("nosuchfamily", "q", "4")),
		put([]byte("r5"), backends.Cell{Family: "d", Qualifier: "q", Value: []byte("5"), Timestamp: -1}),
		put(maxKey, cell("d", "q", "longest key")),
		{Key: []byte("r7"), Delete: true}, // deleting a missing row is fine
		put(tooLongForGohbase, cell("d", "q", "x")),
	}
	rowErrs, err := b.Apply(ctx, table, muts)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	want := []error{nil, backends.ErrInvalidKey, nil, backends.ErrInvalidKey, backends.ErrInvalidArgument, backends.ErrInvalidArgument, nil, nil, backends.ErrInvalidKey}
	if len(rowErrs) != len(want) {
		t.Fatalf("rowErrs = %v, want %d entries", rowErrs, len(want))
	}
	for i, w := range want {
		if w == nil && rowErrs[i] != nil || w != nil && !errors.Is(rowErrs[i], w) {
			t.Errorf("rowErrs[%d] = %v, want %v", i, rowErrs[i], w)
		}
	}
	rows, err := b.Read(ctx, table, [][]byte{[]byte("r0"), []byte("r2"), []byte("r4"), maxKey}, backends.ReadOptions{})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	for i, wantCells := range []int{1, 1, 0, 1} {
		if len(rows[i].Cells) != wantCells {
			t.Errorf("row %q: %d cells, want %d", rows[i].Key[:min(4, len(rows[i].Key))], len(rows[i].Cells), wantCells)
		}
	}

	// Invalid keys are refused before anything is sent.
	if _, err := b.Read(ctx, table, [][]byte{[]byte("ok"), nil}, backends.ReadOptions{}); !errors.Is(err, backends.ErrInvalidKey) {
		t.Errorf("Read with empty key: got %v, want ErrInvalidKey", err)
	}
	if _, err := b.Read(ctx, table, [][]byte{long}, backends.ReadOptions{}); !errors.Is(err, backends.ErrInvalidKey) {
		t.Errorf("Read with long key: got %v, want ErrInvalidKey", err)
	}
	if _, err := b.Read(ctx, table, [][]byte{[]byte("r0")}, backends.ReadOptions{Columns: []backends.Column{{Family: "nosuchfamily"}}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("Read of unknown family: got %v, want ErrInvalidArgument", err)
	}
}

func TestMixedTimestampsInOneRow(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := newTable(t, b, backends.TableOptions{})
	key := []byte("row")
	testkit.Apply(t, testCtx(t), b, table, put(key,
		backends.Cell{Family: "d", Qualifier: "a", Value: []byte("A"), Timestamp: 1_000},
		backends.Cell{Family: "d", Qualifier: "b", Value: []byte("B"), Timestamp: 2_000},
		backends.Cell{Family: "e", Qualifier: "c", Value: []byte("C")},
	))
	rows, err := b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	c := rows[0].Cells
	if len(c) != 3 || c[0].Timestamp != 1_000 || c[1].Timestamp != 2_000 || c[2].Timestamp < time.Now().Add(-time.Hour).UnixMilli() {
		t.Fatalf("cells = %+v, want a@1000 b@2000 c@now", c)
	}
	// A delete's cell with a timestamp removes that one version (none: nothing), one without every
	// version: the contract of every store (backends.Mutation), not HBase's delete-up-to-a-timestamp.
	qualifiers := func() []string {
		rows, err := b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{})
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		var got []string
		for _, c := range rows[0].Cells {
			got = append(got, c.Qualifier)
		}
		return got
	}
	testkit.Apply(t, testCtx(t), b, table, backends.Mutation{Key: key, Delete: true, Cells: []backends.Cell{
		{Family: "d", Qualifier: "a", Timestamp: 999},
		{Family: "d", Qualifier: "b", Timestamp: 2_000},
	}})
	if got := qualifiers(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("after deleting a@999 (not there) and b@2000: %v, want [a c]", got)
	}
	testkit.Apply(t, testCtx(t), b, table, backends.Mutation{Key: key, Delete: true, Cells: []backends.Cell{{Family: "d", Qualifier: "a"}}})
	if got := qualifiers(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("after deleting every version of a: %v, want [c]", got)
	}
}
