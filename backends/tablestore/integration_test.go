package tablestore

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/internal/testkit"
)

// These tests run against a live instance when the TABLESTORE_* variables are set (see
// ConfigFromEnv), and against the local protocol-faithful server otherwise. Tests that count requests
// or inject faults need the local server and skip on a live instance.

// testEnv is where a test's backends connect.
type testEnv struct {
	srv *tablestoretest.Server // nil against a live instance
	cfg Config
}

func newTestEnv(t *testing.T, opts ...tablestoretest.Option) *testEnv {
	t.Helper()
	cfg, err := ConfigFromEnv()
	switch {
	case err == nil:
		t.Logf("running against the live instance %s", cfg)
		return &testEnv{cfg: cfg}
	case os.Getenv(EnvEndpoint) != "":
		t.Fatalf("live instance half configured: %v", err)
	}
	srv := tablestoretest.Start(t, opts...)
	return &testEnv{srv: srv, cfg: Config{
		Endpoint: srv.Endpoint(), Instance: srv.Instance(),
		AccessKeyID: srv.AccessKeyID(), AccessKeySecret: srv.AccessKeySecret(),
	}}
}

// local returns the local server, skipping the test on a live instance.
func (te *testEnv) local(t *testing.T) *tablestoretest.Server {
	t.Helper()
	if te.srv == nil {
		t.Skip("needs the local server (request counts, fault injection)")
	}
	return te.srv
}

// open opens a backend with the env's config, changed by mod; it is closed when the test ends.
func (te *testEnv) open(t *testing.T, mod func(*Config)) *Backend {
	t.Helper()
	cfg := te.cfg
	cfg.Logger = testkit.Logger(t, slog.LevelWarn)
	if mod != nil {
		mod(&cfg)
	}
	b, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// table creates a table with a fresh name and drops it when the test ends.
func table(t *testing.T, b *Backend, opts backends.TableOptions) string {
	t.Helper()
	name := fmt.Sprintf("brinets_%08x", rand.Uint32())
	if err := b.CreateTable(t.Context(), name, opts); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	testkit.DeleteAtEnd(t, name, b.DeleteTable, backends.ErrTableNotFound)
	return name
}

func ts() int64 { return time.Now().Add(-time.Minute).UnixMilli() }

func puts(n int, stamp int64, prefix string) []backends.Mutation {
	muts := make([]backends.Mutation, n)
	for i := range muts {
		key := fmt.Appendf(nil, "%s%05d", prefix, i)
		muts[i] = backends.Mutation{Key: key, Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: key, Timestamp: stamp}}}
	}
	return muts
}

// checkAll reads every mutation's row back: each holds exactly the value it was written with.
func checkAll(t *testing.T, b *Backend, table string, muts []backends.Mutation) {
	t.Helper()
	keys := make([][]byte, len(muts))
	for i, m := range muts {
		keys[i] = m.Key
	}
	rows, err := b.Read(t.Context(), table, keys, backends.ReadOptions{})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	for i, r := range rows {
		if len(r.Cells) != 1 || !bytes.Equal(r.Cells[0].Value, muts[i].Cells[0].Value) {
			t.Fatalf("row %q = %v, want %q", r.Key, r.Cells, muts[i].Cells[0].Value)
		}
	}
}

func TestConformance(t *testing.T) {
	te := newTestEnv(t)
	opts := backendtest.Options{MaxKeyLen: maxPKValueLen, TablePrefix: "brinetest"}
	if te.srv == nil {
		opts.Serial = true // spare a live instance's table-operation quota
	}
	backendtest.RunWithOptions(t, opts, func(t *testing.T) backends.Backend { return te.open(t, nil) })
}

func TestApplySplitsBatches(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, nil)
	tbl := table(t, b, backends.TableOptions{})
	tests := []struct {
		name     string
		muts     []backends.Mutation
		requests int
	}{
		{"450 rows: 200+200+50", puts(450, ts(), "a"), 3},
		{"200 rows: one request", puts(200, ts(), "b"), 1},
		{"by size: 5 rows of 1.5 MB", func() []backends.Mutation {
			muts := puts(5, ts(), "c")
			for i := range muts {
				muts[i].Cells[0].Value = bytes.Repeat([]byte{byte(i)}, 3<<19)
			}
			return muts
		}(), 3},
		{"a key twice: split there", []backends.Mutation{
			{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: []byte("1"), Timestamp: ts()}}},
			{Key: []byte("l"), Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: []byte("1"), Timestamp: ts()}}},
			{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: []byte("2"), Timestamp: ts() + 1}}},
		}, 2},
	}
	for _, tt := range tests {
		srv.ResetStats()
		testkit.Apply(t, t.Context(), b, tbl, tt.muts...)
		st := srv.Stats()["BatchWriteRow"]
		if st.Requests != tt.requests || st.RowsWritten != len(tt.muts) {
			t.Errorf("%s: %d requests writing %d rows, want %d requests writing %d", tt.name, st.Requests, st.RowsWritten, tt.requests, len(tt.muts))
		}
	}
}

func TestReadSplitsBatches(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, nil)
	tbl := table(t, b, backends.TableOptions{})
	muts := puts(250, ts(), "k")
	testkit.Apply(t, t.Context(), b, tbl, muts...)
	srv.ResetStats()
	checkAll(t, b, tbl, muts)
	if got := srv.Stats()["BatchGetRow"].Requests; got != 3 {
		t.Errorf("Read of 250 keys: %d BatchGetRow requests, want 3", got)
	}
}

func TestBadRowsNotSent(t *testing.T) {
	te := newTestEnv(t)
	srv := te.local(t)
	b := te.open(t, nil)
	tbl := table(t, b, backends.TableOptions{})
	long := bytes.Repeat([]byte{'k'}, maxPKValueLen+1)
	cell := backends.Cell{Family: "d", Qualifier: "v", Value: []byte("v"), Timestamp: ts()}
	tests := []struct {
		name string
		m    backends.Mutation
		want error
	}{
		{"empty key", backends.Mutation{Cells: []backends.Cell{cell}}, backends.ErrInvalidKey},
		{"key over 1 KB", backends.Mutation{Key: long, Cells: []backends.Cell{cell}}, backends.ErrInvalidKey},
		{"bad column", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "a-b"}}}, backends.ErrInvalidArgument},
		{"value over 2 MB", backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: make([]byte, maxValueLen+1)}}}, backends.ErrInvalidArgument},
	}
	srv.ResetStats()
	for _, tt := range tests {
		rowErrs, err := b.Apply(t.Context(), tbl, []backends.Mutation{tt.m})
		if err != nil || len(rowErrs) != 1 || !errors.Is(rowErrs[0], tt.want) {
			t.Errorf("%s: Apply = %v, %v; want a row error wrapping %v", tt.name, rowErrs, err, tt.want)
		}
	}
	if _, err := b.Read(t.Context(), tbl, [][]byte{[]byte("ok"), long}, backends.ReadOptions{}); !errors.Is(err, backends.ErrInvalidKey) {
		t.Errorf("Read with a long key: %v", err)
	}
	if _, err := b.Read(t.Context(), tbl, [][]byte{[]byte("ok")}, backends.ReadOptions{Columns: []backends.Column{{Family: "d", Qualifier: "a.b"}}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("Read with a bad column: %v", err)
	}
	if total := srv.Stats().Total().Requests; total != 0 {
		t.Errorf("the server saw %d requests for rows refused before sending: %v", total, srv.Stats())
	}
}

func TestScanPagesAndLimit(t *testing.T) {
	te := newTestEnv(t, tablestoretest.WithPageCap(10, 0))
	srv := te.local(t)
	b := te.open(t, nil)
	tbl := table(t, b, backends.TableOptions{})
	muts := puts(95, ts(), "p")
	testkit.Apply(t, t.Context(), b, tbl, muts...)
	tests := []struct {
		name     string
		opts     backends.ScanOptions
		r        backends.Range
		rows     int
		maxRead  int // rows the server may return in all
		requests int
	}{
		{"all, pages of 10", backends.ScanOptions{}, backends.Range{}, 95, 95, 10},
		{"limit 15", backends.ScanOptions{Limit: 15}, backends.Range{}, 15, 15, 2},
		{"limit 15 reverse", backends.ScanOptions{Limit: 15, Reverse: true}, backends.Range{}, 15, 15, 2},
		{"limit 5 reverse from an existing end", backends.ScanOptions{Limit: 5, Reverse: true},
			backends.Range{End: []byte("p00050")}, 5, 6, 1},
		{"batch 4, limit 6", backends.ScanOptions{Limit: 6, BatchSize: 4}, backends.Range{}, 6, 6, 2},
	}
	for _, tt := range tests {
		srv.ResetStats()
		var got [][]byte
		for row, err := range b.Scan(t.Context(), tbl, tt.r, tt.opts) {
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			got = append(got, row.Key)
		}
		st := srv.Stats()["GetRange"]
		if len(got) != tt.rows || st.RowsRead > tt.maxRead || st.Requests != tt.requests {
			t.Errorf("%s: %d rows in %d requests, %d read; want %d rows in %d requests, at most %d read",
				tt.name, len(got), st.Requests, st.RowsRead, tt.rows, tt.requests, tt.maxRead)
		}
	}
}

func TestPutIsUpdate(t *testing.T) {
	te := newTestEnv(t)
	b := te.open(t, nil)
	tbl := table(t, b, backends.TableOptions{})
	testkit.Apply(t, t.Context(), b, tbl, backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{{Family: "d", Qualifier: "a", Value: []byte("1"), Timestamp: ts()}}})
	testkit.Apply(t, t.Context(), b, tbl, backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{{Qualifier: "b", Value: []byte("2"), Timestamp: ts()}}})
	rows, err := b.Read(t.Context(), tbl, [][]byte{[]byte("r")}, backends.ReadOptions{})
	if err != nil || len(rows[0].Cells) != 2 || rows[0].Cells[0].Family != "" || rows[0].Cells[1].Family != "d" {
		t.Fatalf("row after two puts = %v, %v; want the family-less column b and d:a", rows, err)
	}
}

func TestMetaAndSplitKeys(t *testing.T) {
	te := newTestEnv(t)
	b := te.open(t, nil)
	splits := [][]byte{{0x10}, {0x20, 0x00}}
	tbl := table(t, b, backends.TableOptions{SplitKeys: splits, Meta: map[string]string{"brine.salt": "hash:16"}})
	got, err := b.SplitKeys(t.Context(), tbl)
	if err != nil || len(got) != 2 || !bytes.Equal(got[1], splits[1]) {
		t.Fatalf("SplitKeys = %q, %v; want %q", got, err, splits)
	}
	// A second backend (another process) finds the meta without having created the table.
	other := te.open(t, nil)
	meta, err := other.TableMeta(t.Context(), tbl)
	if err != nil || meta["brine.salt"] != "hash:16" {
		t.Fatalf("TableMeta from another backend = %v, %v", meta, err)
	}
	for _, bad := range []string{"brine_meta", "bad-name", ""} {
		if err := b.CreateTable(t.Context(), bad, backends.TableOptions{}); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("CreateTable(%q) = %v, want ErrInvalidArgument", bad, err)
		}
	}
	if err := b.CreateTable(t.Context(), "brinets_badpk", backends.TableOptions{Meta: map[string]string{MetaPrimaryKey: "pk:INTEGER,n:INTEGER"}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("CreateTable with an INTEGER first key column = %v, want ErrInvalidArgument", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	te := newTestEnv(t)
	te.local(t)
	cfg := te.cfg
	cfg.AccessKeySecret = "wrong-" + testSecret
	_, err := Open(t.Context(), cfg)
	if err == nil || bytes.Contains([]byte(err.Error()), []byte(testSecret)) {
		t.Fatalf("Open with a wrong secret = %v; want an error without the secret", err)
	}
}

// TestMultiColumnKey runs the guide's [CardID][OrderNumber] layout: the first column holds a 1-byte
// salt and an 8-byte card id, OrderNumber is an INTEGER column.
func TestMultiColumnKey(t *testing.T) {
	te := newTestEnv(t, tablestoretest.WithPageCap(7, 0))
	b := te.open(t, nil)
	cols := []KeyColumn{{Name: "CardID", Type: KeyBinary, Width: 9}, {Name: "OrderNumber", Type: KeyInteger}}
	tbl := table(t, b, backends.TableOptions{Meta: map[string]string{MetaPrimaryKey: FormatPrimaryKey(cols...)}})
	key := func(salt byte, card uint64, order int64) []byte {
		k := append([]byte{salt}, fmt.Appendf(nil, "%08d", card)...)
		k, err := AppendKeyTail(k, order)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	var muts []backends.Mutation
	var want [][]byte
	for salt := range byte(3) {
		for card := range uint64(4) {
			for _, order := range []int64{-5, 0, 1, 200001, 200002, 1 << 40} {
				k := key(salt, card, order)
				want = append(want, k)
				muts = append(muts, backends.Mutation{Key: k, Cells: []backends.Cell{{Family: "d", Qualifier: "v", Value: k, Timestamp: ts()}}})
			}
		}
	}
	rand.Shuffle(len(muts), func(i, j int) { muts[i], muts[j] = muts[j], muts[i] })
	testkit.Apply(t, t.Context(), b, tbl, muts...)
	checkAll(t, b, tbl, muts)
	slices.SortFunc(want, bytes.Compare)

	scan := func(r backends.Range, opts backends.ScanOptions) [][]byte {
		var got [][]byte
		for row, err := range b.Scan(t.Context(), tbl, r, opts) {
			if err != nil {
				t.Fatalf("Scan([%q, %q)): %v", r.Start, r.End, err)
			}
			got = append(got, row.Key)
		}
		return got
	}
	k := key(1, 2, 200001)
	ranges := []struct {
		name string
		r    backends.Range
	}{
		{"all", backends.Range{}},
		{"one salt", backends.Range{Start: []byte{1}, End: []byte{2}}},
		{"one card", backends.Range{Start: k[:9], End: key(1, 3, -1<<62)[:9]}},
		{"from a key", backends.Range{Start: k}},
		{"after a key (cursor)", backends.Range{Start: append(bytes.Clone(k), 0)}},
		{"up to a key", backends.Range{End: k}},
		{"through a key", backends.Range{End: append(bytes.Clone(k), 0)}},
		{"between keys", backends.Range{Start: key(0, 1, 1), End: key(2, 0, 0)}},
		{"cut inside the integer", backends.Range{Start: k[:12], End: key(1, 3, 0)[:13]}},
		{"one key", backends.Range{Start: k, End: append(bytes.Clone(k), 0)}},
	}
	for _, rr := range ranges {
		for _, reverse := range []bool{false, true} {
			for _, limit := range []int{0, 3} {
				opts := backends.ScanOptions{Reverse: reverse, Limit: limit}
				if got, exp := scan(rr.r, opts), backendtest.ExpectKeys(want, rr.r, reverse, limit); !slices.EqualFunc(got, exp, bytes.Equal) {
					t.Errorf("%s reverse=%v limit=%d: got %q, want %q", rr.name, reverse, limit, got, exp)
				}
			}
		}
	}
	// Keys that do not fit the layout are refused before sending.
	rowErrs, err := b.Apply(t.Context(), tbl, []backends.Mutation{
		{Key: []byte("short"), Cells: muts[0].Cells},
		{Key: append(k[:9:9], "no tail"...), Cells: muts[0].Cells},
	})
	if err != nil || !errors.Is(rowErrs[0], backends.ErrInvalidKey) || !errors.Is(rowErrs[1], backends.ErrInvalidKey) {
		t.Errorf("Apply of malformed keys = %v, %v; want ErrInvalidKey for each", rowErrs, err)
	}
	// A backend that did not create the table learns the layout from the stored meta.
	other := te.open(t, nil)
	if got := func() int {
		n := 0
		for _, err := range other.Scan(t.Context(), tbl, backends.Range{}, backends.ScanOptions{}) {
			if err != nil {
				t.Fatalf("Scan from another backend: %v", err)
			}
			n++
		}
		return n
	}(); got != len(want) {
		t.Errorf("another backend scanned %d rows, want %d", got, len(want))
	}
}

// TestExternalTables: tables brine did not create are used through the schema the service reports,
// with a variable first column unless Options.Schemas declares its width.
func TestExternalTables(t *testing.T) {
	te := newTestEnv(t)
	b := te.open(t, nil)
	create := func(cols ...KeyColumn) string {
		name := fmt.Sprintf("brinets_ext_%08x", rand.Uint32())
		meta := &ots.TableMeta{TableName: name}
		for _, c := range cols {
			meta.AddPrimaryKeyColumn(c.Name, pkType(c.Type))
		}
		if _, err := b.Client().CreateTable(&ots.CreateTableRequest{
			TableMeta: meta, TableOption: &ots.TableOption{TimeToAlive: -1, MaxVersion: 1}, ReservedThroughput: &ots.ReservedThroughput{},
		}); err != nil {
			t.Fatalf("CreateTable through the SDK: %v", err)
		}
		t.Cleanup(func() { _, _ = b.Client().DeleteTable(&ots.DeleteTableRequest{TableName: name}) })
		return name
	}
	cell := backends.Cell{Family: "d", Qualifier: "v", Value: []byte("x"), Timestamp: ts()}

	strTable := create(KeyColumn{Name: "id", Type: KeyString})
	if meta, err := b.TableMeta(t.Context(), strTable); err != nil || len(meta) != 0 {
		t.Errorf("TableMeta of a table brine did not create = %v, %v; want empty", meta, err)
	}
	rowErrs, err := b.Apply(t.Context(), strTable, []backends.Mutation{
		{Key: []byte("héllo"), Cells: []backends.Cell{cell}},
		{Key: []byte{0xff}, Cells: []backends.Cell{cell}},
	})
	if err != nil || rowErrs[0] != nil || !errors.Is(rowErrs[1], backends.ErrInvalidKey) {
		t.Fatalf("Apply to a STRING-keyed table = %v, %v; want the non-UTF-8 key refused", rowErrs, err)
	}
	n := 0
	for row, err := range b.Scan(t.Context(), strTable, backends.Range{Start: []byte("h")}, backends.ScanOptions{Reverse: true}) {
		if err != nil || string(row.Key) != "héllo" {
			t.Fatalf("scan of a STRING-keyed table: %q, %v", row.Key, err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("scan of a STRING-keyed table: %d rows", n)
	}

	cols := []KeyColumn{{Name: "dev", Type: KeyBinary, Width: 4}, {Name: "n", Type: KeyInteger}}
	multi := create(cols...)
	key, _ := AppendKeyTail([]byte("dev1"), int64(42))
	// Undeclared, the first column is variable: keys start with AppendKeyHead, fixed-width ones are refused.
	if _, err := b.Read(t.Context(), multi, [][]byte{key}, backends.ReadOptions{}); !errors.Is(err, backends.ErrInvalidKey) {
		t.Fatalf("Read of a fixed-width key from an undeclared multi-column table: %v, want ErrInvalidKey", err)
	}
	varKey, _ := AppendKeyTail(AppendKeyHead(nil, []byte("device-7")), int64(42))
	testkit.Apply(t, t.Context(), b, multi, backends.Mutation{Key: varKey, Cells: []backends.Cell{cell}})
	if rows, err := b.Read(t.Context(), multi, [][]byte{varKey}, backends.ReadOptions{}); err != nil || len(rows[0].Cells) != 1 {
		t.Fatalf("Read of a variable first column = %v, %v", rows, err)
	}
	declared := te.open(t, func(c *Config) { c.Schemas = map[string][]KeyColumn{multi: cols} })
	testkit.Apply(t, t.Context(), declared, multi, backends.Mutation{Key: key, Cells: []backends.Cell{cell}})
	rows, err := declared.Read(t.Context(), multi, [][]byte{key}, backends.ReadOptions{})
	if err != nil || len(rows[0].Cells) != 1 {
		t.Fatalf("Read through Options.Schemas = %v, %v", rows, err)
	}
}
