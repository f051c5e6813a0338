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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
)

func TestMain(m *testing.M) {
	// gohbase logs each new region connection at info level through the global logrus logger.
	logrus.SetLevel(logrus.WarnLevel)
	os.Exit(m.Run())
}

func openBackend(t *testing.T, opts hbase.Options) *hbase.Backend {
	t.Helper()
	zk := hbasetest.ZK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: zk, Options: opts})
	if err != nil {
		t.Fatalf("Open(%s): %v", zk, err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// testWriter sends the driver's log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
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
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := b.DeleteTable(ctx, name); err != nil {
			t.Errorf("DeleteTable(%s): %v", name, err)
		}
	})
	return name
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func put(key []byte, cells ...backends.Cell) backends.Mutation {
	return backends.Mutation{Key: key, Cells: cells}
}

func cell(fam, qual, val string) backends.Cell {
	return backends.Cell{Family: fam, Qualifier: qual, Value: []byte(val)}
}

func mustApply(t *testing.T, b *hbase.Backend, table string, muts ...backends.Mutation) {
	t.Helper()
	rowErrs, err := b.Apply(testCtx(t), table, muts)
	if err != nil || rowErrs != nil {
		t.Fatalf("Apply: err=%v rowErrs=%v", err, rowErrs)
	}
}

func collect(t *testing.T, seq func(func(backends.Row, error) bool)) ([]backends.Row, error) {
	t.Helper()
	var rows []backends.Row
	for row, err := range seq {
		if err != nil {
			return rows, err
		}
		rows = append(rows, row)
	}
	return rows, nil
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
		if _, err := collect(t, b.Scan(ctx, name, backends.Range{}, backends.ScanOptions{Reverse: reverse})); !errors.Is(err, backends.ErrTableNotFound) {
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
	mustApply(t, b, table,
		put(k1, cell("e", "x", "ex"), cell("d", "b", "db"), cell("d", "a", "da"), cell("d", "", "empty-qualifier")),
		put(k2, backends.Cell{Family: "d", Qualifier: "t", Value: []byte("old"), Timestamp: 1_000}),
	)
	mustApply(t, b, table, put(k2, backends.Cell{Family: "d", Qualifier: "t", Value: []byte("new"), Timestamp: 2_000}))
	// An older explicit timestamp does not shadow the newer cell.
	mustApply(t, b, table, put(k2, backends.Cell{Family: "d", Qualifier: "t", Value: []byte("older"), Timestamp: 1_500}))

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
	mustApply(t, b, table, backends.Mutation{Key: k1, Delete: true, Cells: []backends.Cell{{Family: "d", Qualifier: "a"}}})
	rows, _ = b.Read(ctx, table, [][]byte{k1}, backends.ReadOptions{})
	if len(rows[0].Cells) != 3 || rows[0].Cells[1].Qualifier != "b" {
		t.Errorf("after column delete: %+v", rows[0].Cells)
	}
	mustApply(t, b, table, backends.Mutation{Key: k1, Delete: true}, backends.Mutation{Key: k2, Delete: true})
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
	mustApply(t, b, table, put(key,
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
	// A delete removes every version of the columns it names, whatever timestamps its cells carry:
	// the contract of every store (backends.Mutation), not HBase's delete-up-to-a-timestamp.
	mustApply(t, b, table, backends.Mutation{Key: key, Delete: true, Cells: []backends.Cell{
		{Family: "d", Qualifier: "a", Timestamp: 999},
		{Family: "d", Qualifier: "b", Timestamp: 2_000},
	}})
	rows, _ = b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{})
	var got []string
	for _, c := range rows[0].Cells {
		got = append(got, c.Qualifier)
	}
	if !slices.Equal(got, []string{"c"}) {
		t.Errorf("after deleting a and b: %v, want [c]", got)
	}
}

// scanKeys are the rows of the scan tests: binary keys around every region boundary, including keys
// that start with a boundary's predecessor byte followed by a long run of 0xFF (gohbase's own reverse
// scan skips those when it steps from one region to the previous).
var scanKeys = func() [][]byte {
	ks := [][]byte{
		{0x00}, {0x00, 0x00}, {0x00, 0x01}, {0x01},
		[]byte("a"), []byte("a\x00"), []byte("ab"), []byte("b"),
		[]byte("m"), []byte("m\x00"), []byte("mm"),
		append([]byte("l"), bytes.Repeat([]byte{0xff}, 8)...),
		append(append([]byte("l"), bytes.Repeat([]byte{0xff}, 8)...), 'x'),
		append([]byte("l"), bytes.Repeat([]byte{0xff}, 12)...),
		{0x7f, 0xff}, {0x80}, {0x80, 0x00}, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0xff}, {0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff},
	}
	for i := range 30 {
		ks = append(ks, fmt.Appendf(nil, "row%03d", i))
	}
	slices.SortFunc(ks, bytes.Compare)
	return ks
}()

var scanSplits = [][]byte{{0x00, 0x01}, []byte("b"), []byte("m"), []byte("row010"), {0x80}, {0xff}}

// expectScan is the model: keys in r, in scan order, at most limit.
func expectScan(r backends.Range, reverse bool, limit int) []string {
	ks := backendtest.ExpectKeys(scanKeys, r, reverse, limit)
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = fmt.Sprintf("%q", k)
	}
	return out
}

func fillScanTable(t *testing.T, b *hbase.Backend) string {
	t.Helper()
	table := newTable(t, b, backends.TableOptions{SplitKeys: scanSplits})
	muts := make([]backends.Mutation, len(scanKeys))
	for i, k := range scanKeys {
		muts[i] = put(k, cell("d", "v", string(k)), cell("e", "w", "x"))
	}
	mustApply(t, b, table, muts...)
	return table
}

func TestScanConformance(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := fillScanTable(t, b)

	lff := append([]byte("l"), bytes.Repeat([]byte{0xff}, 8)...)
	ranges := []struct {
		name string
		r    backends.Range
	}{
		{"all", backends.Range{}},
		{"start only", backends.Range{Start: []byte("b")}},
		{"end only", backends.Range{End: []byte("m")}},
		{"end on existing key", backends.Range{Start: []byte("a"), End: []byte("mm")}},
		{"bounds on region boundaries", backends.Range{Start: []byte("b"), End: []byte("m")}},
		{"bounds on existing keys", backends.Range{Start: []byte("a\x00"), End: []byte("row005")}},
		{"one key", backends.Range{Start: []byte("m"), End: []byte("m\x00")}},
		{"binary low", backends.Range{Start: []byte{0x00}, End: []byte{0x00, 0x01}}},
		{"binary high", backends.Range{Start: []byte{0xff}, End: []byte{0xff, 0xff}}},
		{"to the top", backends.Range{Start: []byte{0x80}}},
		{"0xff run before boundary", backends.Range{Start: lff, End: []byte("m")}},
		{"inside one region", backends.Range{Start: []byte("row011"), End: []byte("row015")}},
		{"empty: start == end", backends.Range{Start: []byte("m"), End: []byte("m")}},
		{"empty: start > end", backends.Range{Start: []byte("z"), End: []byte("a")}},
		{"empty: no keys between", backends.Range{Start: []byte("mn"), End: []byte("r")}},
	}
	for _, rc := range ranges {
		for _, reverse := range []bool{false, true} {
			for _, limit := range []int{0, 1, 3, 1000} {
				for _, batch := range []int{0, 1, 2} {
					name := fmt.Sprintf("%s/reverse=%v/limit=%d/batch=%d", rc.name, reverse, limit, batch)
					t.Run(name, func(t *testing.T) {
						rows, err := collect(t, b.Scan(ctx, table, rc.r, backends.ScanOptions{Reverse: reverse, Limit: limit, BatchSize: batch}))
						if err != nil {
							t.Fatalf("Scan: %v", err)
						}
						if got, want := keysOf(rows), expectScan(rc.r, reverse, limit); !slices.Equal(got, want) {
							t.Errorf("keys\n got %v\nwant %v", got, want)
						}
						for _, r := range rows {
							if len(r.Cells) != 2 || string(r.Cells[0].Value) != string(r.Key) {
								t.Errorf("row %q cells = %+v", r.Key, r.Cells)
							}
						}
					})
				}
			}
		}
	}
}

func TestScanColumnsAndEarlyStop(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := fillScanTable(t, b)

	for _, reverse := range []bool{false, true} {
		rows, err := collect(t, b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{
			Reverse: reverse, ReadOptions: backends.ReadOptions{Columns: []backends.Column{{Family: "e"}}},
		}))
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if len(rows) != len(scanKeys) {
			t.Errorf("reverse=%v: %d rows, want %d", reverse, len(rows), len(scanKeys))
		}
		for _, r := range rows {
			if len(r.Cells) != 1 || r.Cells[0].Family != "e" {
				t.Fatalf("reverse=%v: row %q cells %+v, want family e only", reverse, r.Key, r.Cells)
			}
		}

		// Stopping early leaves no error behind, and the next scan works.
		n := 0
		for _, err := range b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{Reverse: reverse, BatchSize: 2}) {
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			if n++; n == 3 {
				break
			}
		}
	}

	// A canceled ctx ends the scan with the ctx's error as the last element.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var last error
	n := 0
	for _, err := range b.Scan(cctx, table, backends.Range{}, backends.ScanOptions{BatchSize: 1}) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 2 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("scan after cancel: got %v, want context.Canceled", last)
	}
}

func TestScanWideRowsInPieces(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := newTable(t, b, backends.TableOptions{SplitKeys: [][]byte{[]byte("k2")}})
	// Rows of ~3 MB: more than one scan response (2 MB each), so they arrive as partial results.
	big := strings.Repeat("x", 512<<10)
	var muts []backends.Mutation
	for _, k := range []string{"k1", "k2", "k3"} {
		var cells []backends.Cell
		for q := range 6 {
			cells = append(cells, cell("d", fmt.Sprintf("q%d", q), big))
		}
		muts = append(muts, put([]byte(k), cells...))
	}
	mustApply(t, b, table, muts...)
	for _, reverse := range []bool{false, true} {
		rows, err := collect(t, b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{Reverse: reverse}))
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if len(rows) != 3 {
			t.Fatalf("reverse=%v: %d rows, want 3", reverse, len(rows))
		}
		for _, r := range rows {
			if len(r.Cells) != 6 {
				t.Errorf("reverse=%v: row %s has %d cells, want 6", reverse, r.Key, len(r.Cells))
			}
		}
	}
}

// TestRegionChanges splits, flushes, compacts and moves regions under the driver (through
// scripts/hbase/admin.sh), and checks that scans and reads still see every row exactly once.
func TestRegionChanges(t *testing.T) {
	b := openBackend(t, hbase.Options{RequestTimeout: 3 * time.Second})
	admin, err := hbasetest.FindAdmin(hbasetest.ZK(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	table := fillScanTable(t, b)
	all := expectScan(backends.Range{}, false, 0)
	allRev := expectScan(backends.Range{}, true, 0)
	check := func(stage string) {
		t.Helper()
		for _, reverse := range []bool{false, true} {
			rows, err := collect(t, b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{Reverse: reverse, BatchSize: 3}))
			if err != nil {
				t.Fatalf("%s: Scan(reverse=%v): %v", stage, reverse, err)
			}
			want := all
			if reverse {
				want = allRev
			}
			if got := keysOf(rows); !slices.Equal(got, want) {
				t.Errorf("%s: reverse=%v keys\n got %v\nwant %v", stage, reverse, got, want)
			}
		}
	}
	check("before")

	// Split where the driver's cached boundaries do not know it.
	split := []byte("row020")
	if err := admin.Split(ctx, table, split); err != nil {
		t.Fatalf("split: %v", err)
	}
	// Scan first: the driver's cached boundaries (from the reverse scans above) predate the split.
	check("after split")
	regions, err := b.Regions(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(regions, func(k []byte) bool { return bytes.Equal(k, split) }) {
		t.Errorf("after split at %q, Regions = %q", split, regions)
	}
	javaRegions, err := admin.Regions(ctx, table)
	if err != nil || len(javaRegions) != len(regions) {
		t.Errorf("admin regions = %q (%v), driver says %q", javaRegions, err, regions)
	}

	if err := admin.Flush(ctx, table); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := admin.MajorCompact(ctx, table); err != nil {
		t.Fatalf("compact: %v", err)
	}
	check("after flush and compaction")

	// A closed region makes requests time out as retryable; reopened, it serves again.
	key := []byte("row005")
	if err := admin.CloseRegion(ctx, table, key); err != nil {
		t.Fatalf("close region: %v", err)
	}
	_, err = b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{})
	if !backends.IsRetryable(err) {
		t.Errorf("Read from a closed region: got %v, want a retryable error", err)
	}
	if err := admin.OpenRegion(ctx, table, key); err != nil {
		t.Fatalf("open region: %v", err)
	}
	if rows, err := b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{}); err != nil || len(rows[0].Cells) != 2 {
		t.Errorf("Read after reopen: %v, %+v", err, rows)
	}
	if err := admin.Move(ctx, table, key); err != nil {
		t.Fatalf("move: %v", err)
	}
	check("after move")
}

// countingClient records what each scan RPC asked for and got, to check limit pushdown.
type countingClient struct {
	gohbase.Client
	rpc gohbase.RPCClient

	mu       sync.Mutex
	asked    []uint32 // NumberOfRows of each scan request that fetches rows
	received int      // rows in all scan responses
	closes   int      // scan requests that close a scanner
}

func (c *countingClient) SendRPC(call hrpc.Call) (proto.Message, error) {
	msg, err := c.rpc.SendRPC(call)
	_, isScan := call.(interface{ NumberOfRows() uint32 })
	if isScan && call.Region() != nil { // ToProto needs the region the call was sent to
		req := call.ToProto().(*pb.ScanRequest)
		c.mu.Lock()
		defer c.mu.Unlock()
		if req.GetCloseScanner() && req.GetNumberOfRows() == 0 {
			c.closes++
		} else {
			c.asked = append(c.asked, req.GetNumberOfRows())
		}
		if resp, ok := msg.(*pb.ScanResponse); ok {
			c.received += len(resp.GetResults())
		}
	}
	return msg, err
}

// countingBackend is a Backend over a gohbase client whose RPCs cc counts; both close with the test.
func countingBackend(t *testing.T) (*hbase.Backend, *countingClient) {
	t.Helper()
	zk := hbasetest.ZK(t)
	raw := gohbase.NewClient(zk)
	cc := &countingClient{Client: raw, rpc: raw.(gohbase.RPCClient)}
	b, err := hbase.New(cc, gohbase.NewAdminClient(zk), hbase.Options{})
	if err != nil {
		raw.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		raw.Close()
	})
	return b, cc
}

func TestScanLimitPushdown(t *testing.T) {
	b, cc := countingBackend(t)
	table := fillScanTable(t, b)
	ctx := testCtx(t)

	tests := []struct {
		name    string
		r       backends.Range
		reverse bool
		limit   int
	}{
		// The row* keys all live in region [row010, 0x80) and the one below it.
		{"forward", backends.Range{Start: []byte("row010")}, false, 3},
		{"reverse from an existing key", backends.Range{End: []byte("row025")}, true, 3},
		{"reverse, one row", backends.Range{End: []byte("row025")}, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cc.mu.Lock()
			cc.asked, cc.received, cc.closes = nil, 0, 0
			cc.mu.Unlock()
			rows, err := collect(t, b.Scan(ctx, table, tc.r, backends.ScanOptions{Reverse: tc.reverse, Limit: tc.limit}))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := keysOf(rows), expectScan(tc.r, tc.reverse, tc.limit); !slices.Equal(got, want) {
				t.Fatalf("keys %v, want %v", got, want)
			}
			cc.mu.Lock()
			defer cc.mu.Unlock()
			extra := 0
			if tc.reverse {
				extra = 1 // the row equal to End, asked for and dropped
			}
			if len(cc.asked) != 1 || int(cc.asked[0]) != tc.limit+extra {
				t.Errorf("scan RPCs asked for %v rows, want one RPC asking for %d", cc.asked, tc.limit+extra)
			}
			if cc.received > tc.limit+extra {
				t.Errorf("server sent %d rows for a limit of %d", cc.received, tc.limit)
			}
			if cc.closes != 1 {
				t.Errorf("%d close requests, want 1 (the region had more rows)", cc.closes)
			}
		})
	}
}
