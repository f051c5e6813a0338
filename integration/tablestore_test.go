//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// The Tablestore tests run against the local protocol-faithful server (tablestoretest: the real SDK
// over HTTP, PlainBuffer rows, signatures, the service's limits and error codes) always, and against a
// live instance as well when TABLESTORE_ENDPOINT, TABLESTORE_INSTANCE, TABLESTORE_ACCESS_KEY_ID and
// TABLESTORE_ACCESS_KEY_SECRET are all set (tablestore.ConfigFromEnv; the credentials are never
// logged: only the redacted Config is). Each test runs once per target as a subtest, "local" and
// "live". Fault injection and request counting need the local server; those parts skip on "live".

// tsTarget is where one subtest's backend connects.
type tsTarget struct {
	name string
	srv  *tablestoretest.Server // nil on a live instance
	cfg  tablestore.Config
}

// tsTargets runs fn against the local server and, when configured, the live instance. A live
// instance that is half configured fails the test instead of being silently skipped.
func tsTargets(t *testing.T, fn func(t *testing.T, tg *tsTarget), opts ...tablestoretest.Option) {
	t.Run("local", func(t *testing.T) {
		srv := tablestoretest.Start(t, opts...)
		fn(t, &tsTarget{name: "local", srv: srv, cfg: tablestore.Config{
			Endpoint: srv.Endpoint(), Instance: srv.Instance(),
			AccessKeyID: srv.AccessKeyID(), AccessKeySecret: srv.AccessKeySecret(),
		}})
	})
	cfg, err := tablestore.ConfigFromEnv()
	switch {
	case err == nil:
		t.Run("live", func(t *testing.T) {
			t.Logf("live instance: %s", cfg) // String redacts the credentials
			fn(t, &tsTarget{name: "live", cfg: cfg})
		})
	case os.Getenv(tablestore.EnvEndpoint) != "":
		t.Fatalf("live Tablestore half configured: %v", err)
	}
}

// local returns the local server, skipping on a live instance.
func (tg *tsTarget) local(t *testing.T) *tablestoretest.Server {
	t.Helper()
	if tg.srv == nil {
		t.Skip("needs the local server (fault injection, request counts)")
	}
	return tg.srv
}

// tsEnv is a brine client over tablestore.Open, with the driver's SDK client for raw reads.
type tsEnv struct {
	tg      *tsTarget
	backend *tablestore.Backend
	client  *client.Client
	sdk     *ots.TableStoreClient
}

// open opens the target with brine's Open (the path a user takes), changed by mod.
func (tg *tsTarget) open(t *testing.T, mod func(*tablestore.Config), opts ...client.Option) *tsEnv {
	t.Helper()
	cfg := tg.cfg
	cfg.Logger = testkit.Logger(t, slog.LevelWarn)
	if mod != nil {
		mod(&cfg)
	}
	b, err := tablestore.Open(testkit.Context(t, time.Minute), cfg)
	if err != nil {
		t.Fatalf("tablestore.Open: %v", err)
	}
	c := client.New(b, append([]client.Option{client.WithLogger(testkit.Logger(t, slog.LevelWarn))}, opts...)...)
	t.Cleanup(func() { _ = c.Close() })
	return &tsEnv{tg: tg, backend: b, client: c, sdk: b.Client()}
}

// tsTableName is a fresh table name (Tablestore names: letters, digits, '_').
func tsTableName(kind string) string { return fmt.Sprintf("brine_it_%s_%08x", kind, rand.Uint32()) }

// drop deletes table when the test ends.
func (e *tsEnv) drop(t *testing.T, table string) {
	testkit.DeleteAtEnd(t, table, e.backend.DeleteTable, backends.ErrTableNotFound)
}

// salted creates a brine table with spec through client.CreateTable.
func (e *tsEnv) salted(t *testing.T, spec string) *client.Table {
	t.Helper()
	s := testkit.Salter(t, spec)
	name := tsTableName("s")
	tbl, err := e.client.CreateTable(testkit.Context(t, 2*time.Minute), name, client.TableConfig{Salter: s})
	if err != nil {
		t.Fatalf("CreateTable(%s, %s): %v", name, spec, err)
	}
	e.drop(t, name)
	return tbl
}

// reference creates a table with no salting spec and the same key column ("pk" BINARY): the unsalted
// reference, written and read with the plain SDK only.
func (e *tsEnv) reference(t *testing.T) string {
	t.Helper()
	name := tsTableName("ref")
	if err := e.backend.CreateTable(testkit.Context(t, 2*time.Minute), name, backends.TableOptions{}); err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	e.drop(t, name)
	return name
}

// tsRow is what tests compare: a logical key and its cells as "family:qualifier=value".
type tsRow struct {
	Key   string
	Cells []string
}

func (r tsRow) String() string { return fmt.Sprintf("%q%q", r.Key, r.Cells) }

// tsStamp is the timestamp of every test cell, so that rows written twice are equal.
var tsStamp = time.Now().Add(-time.Hour).Truncate(time.Second)

// tsValue is the value every test writes for key.
func tsValue(key []byte) []byte { return append([]byte("v:"), key...) }

func tsMutation(key []byte) client.Mutation {
	return client.Mutation{Key: key, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: tsValue(key), Timestamp: tsStamp.UnixMilli()}}}
}

func tsWant(keys [][]byte) []tsRow {
	rows := make([]tsRow, len(keys))
	for i, k := range keys {
		rows[i] = tsRow{Key: string(k), Cells: []string{"d:v=" + string(tsValue(k))}}
	}
	slices.SortFunc(rows, func(a, b tsRow) int { return strings.Compare(a.Key, b.Key) })
	return slices.CompactFunc(rows, func(a, b tsRow) bool { return a.Key == b.Key })
}

func tsBrineRow(r client.Row) tsRow {
	out := tsRow{Key: string(r.Key)}
	for _, c := range r.Cells {
		out.Cells = append(out.Cells, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
	}
	return out
}

// tsImport writes keys through client.Import and fails the test on any failed row.
func tsImport(t *testing.T, tbl *client.Table, keys [][]byte, opts client.ImportOptions) client.ImportStats {
	t.Helper()
	var failed []client.FailedRow
	opts.OnFailure = func(f client.FailedRow) { failed = append(failed, f) }
	stats, err := tbl.Import(testkit.Context(t, 2*time.Minute), tsRows(keys), opts)
	if err != nil || len(failed) > 0 {
		t.Fatalf("Import into %s: %v; %d failed rows (first: %v)", tbl.Name(), err, len(failed), tsFirstFailure(failed))
	}
	if stats.Written != int64(len(keys)) {
		t.Fatalf("Import: %d written, want %d", stats.Written, len(keys))
	}
	return stats
}

func tsFirstFailure(f []client.FailedRow) error {
	if len(f) == 0 {
		return nil
	}
	return f[0].Err
}

func tsRows(keys [][]byte) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for i, k := range keys {
			if !yield(client.ImportRow{Mutation: tsMutation(k), Source: i}, nil) {
				return
			}
		}
	}
}

// rawPut writes keys to an unsalted table with the plain SDK: column "d__v" is the driver's name
// for family "d", qualifier "v".
func (e *tsEnv) rawPut(t *testing.T, table string, keys [][]byte) {
	t.Helper()
	for i := 0; i < len(keys); i += 200 {
		req := &ots.BatchWriteRowRequest{}
		for _, k := range keys[i:min(i+200, len(keys))] {
			pk := new(ots.PrimaryKey)
			pk.AddPrimaryKeyColumn("pk", k)
			ch := &ots.PutRowChange{TableName: table, PrimaryKey: pk}
			ch.AddColumnWithTimestamp("d__v", tsValue(k), tsStamp.UnixMilli())
			ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
			req.AddRowChange(ch)
		}
		resp, err := e.sdk.BatchWriteRow(req)
		if err != nil {
			t.Fatalf("raw BatchWriteRow: %v", err)
		}
		for _, r := range resp.TableToRowsResult[table] {
			if !r.IsSucceed {
				t.Fatalf("raw BatchWriteRow row %d: %s %s", r.Index, r.Error.Code, r.Error.Message)
			}
		}
	}
}

// rawRange reads [start, end) of a one-column table with the plain SDK's GetRange, following its
// pages (empty start or end: INF_MIN, INF_MAX). Keys are as stored (physical).
func (e *tsEnv) rawRange(t *testing.T, table string, start, end []byte) []tsRow {
	t.Helper()
	bound := func(k []byte, inf int) *ots.PrimaryKey {
		if len(k) == 0 {
			return tsInf("pk", inf)
		}
		pk := new(ots.PrimaryKey)
		pk.AddPrimaryKeyColumn("pk", k)
		return pk
	}
	crit := &ots.RangeRowQueryCriteria{TableName: table, StartPrimaryKey: bound(start, -1), EndPrimaryKey: bound(end, +1),
		Direction: ots.FORWARD, MaxVersion: 1, Limit: 500}
	var out []tsRow
	for {
		resp, err := e.sdk.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: crit})
		if err != nil {
			t.Fatalf("raw GetRange %s: %v", table, err)
		}
		out = append(out, tsSDKRows(resp.Rows)...)
		if resp.NextStartPrimaryKey == nil {
			return out
		}
		crit.StartPrimaryKey = resp.NextStartPrimaryKey
	}
}

// tsInf is a one-column INF_MIN (inf < 0) or INF_MAX bound.
func tsInf(col string, inf int) *ots.PrimaryKey {
	pk := new(ots.PrimaryKey)
	if inf < 0 {
		pk.AddPrimaryKeyColumnWithMinValue(col)
	} else {
		pk.AddPrimaryKeyColumnWithMaxValue(col)
	}
	return pk
}

// tsSDKRows converts rows of a one-column table read with the SDK (or the drop-in, which returns
// logical keys): column "d__v" is the driver's name for family "d", qualifier "v".
func tsSDKRows(rows []*ots.Row) []tsRow {
	out := make([]tsRow, 0, len(rows))
	for _, r := range rows {
		row := tsRow{Key: string(r.PrimaryKey.PrimaryKeys[0].Value.([]byte))}
		for _, c := range r.Columns {
			fam, qual, _ := strings.Cut(c.ColumnName, "__")
			row.Cells = append(row.Cells, fmt.Sprintf("%s:%s=%s", fam, qual, c.Value))
		}
		out = append(out, row)
	}
	return out
}

// tsScan reads a range through brine's client.
func tsScan(t *testing.T, tbl *client.Table, r client.Range, opts ...client.ReadOption) []tsRow {
	t.Helper()
	rows, err := tsScanErr(testkit.Context(t, 2*time.Minute), tbl, r, opts...)
	if err != nil {
		t.Fatalf("Scan %s %q..%q: %v", tbl.Name(), r.Start, r.End, err)
	}
	return rows
}

func tsScanErr(ctx context.Context, tbl *client.Table, r client.Range, opts ...client.ReadOption) ([]tsRow, error) {
	got, err := testkit.CollectErr(tbl.Scan(ctx, r, opts...))
	var rows []tsRow
	for _, r := range got {
		rows = append(rows, tsBrineRow(r))
	}
	return rows, err
}

func tsDiff(got, want []tsRow) string {
	for i := range min(len(got), len(want)) {
		if got[i].String() != want[i].String() {
			return fmt.Sprintf("row %d: got %v, want %v", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d", len(got), len(want))
	}
	return ""
}

// tsMonotonic are big-endian uint64 counters from a millisecond timestamp: the hotspot pattern.
func tsMonotonic(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+i))
	}
	return keys
}

func tsMaxMean(counts []int) (maxN int, ratio float64) {
	total := 0
	for _, n := range counts {
		total += n
		maxN = max(maxN, n)
	}
	if total == 0 {
		return 0, 0
	}
	return maxN, float64(maxN) / (float64(total) / float64(len(counts)))
}

// TestTablestoreSpread: monotonic keys imported through a hash:16 table spread evenly over the 16
// salt prefixes of the physical table (max/mean <= 1.1), counted by scanning the physical table with
// the plain SDK; the same keys in an unsalted table all fall in the first of 16 even ranges of the
// first key byte.
//
// Tablestore partitions are server-managed: the service splits a table by the first primary-key
// column's ranges as it grows, and the SDK cannot pre-split (CreateTable records brine's split keys in
// the meta table only). So the spread is measured the way the service would partition: rows per bucket
// prefix (salted) and per first-key-byte range (unsalted). The local server has no partitions at all;
// on a live instance the counts are the same, since they are of the stored keys.
func TestTablestoreSpread(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		const rows, buckets = 20_000, 16
		e := tg.open(t, nil)
		keys := tsMonotonic(rows)

		tbl := e.salted(t, "hash:16")
		tsImport(t, tbl, keys, client.ImportOptions{})
		salted := make([]int, buckets)
		for _, r := range e.rawRange(t, tbl.Name(), nil, nil) {
			b := int(r.Key[0])
			if b >= buckets {
				t.Fatalf("stored key %q has prefix %d, not a bucket of hash:16", r.Key, b)
			}
			salted[b]++
		}

		ref := e.salted(t, "none")
		tsImport(t, ref, keys, client.ImportOptions{})
		unsalted := make([]int, buckets)
		for _, r := range e.rawRange(t, ref.Name(), nil, nil) {
			unsalted[int(r.Key[0])*buckets/256]++
		}

		sMax, sRatio := tsMaxMean(salted)
		uMax, uRatio := tsMaxMean(unsalted)
		t.Logf("SPREAD tablestore %s salted hash:16 buckets=%d max/mean=%.3f (max %d, mean %.1f, per bucket %v) ; unsalted first-byte ranges=%d max/mean=%.1f (max %d: %v)",
			tg.name, buckets, sRatio, sMax, float64(rows)/buckets, salted, buckets, uRatio, uMax, unsalted)
		if tsSum(salted) != rows || tsSum(unsalted) != rows {
			t.Fatalf("rows counted: salted %d, unsalted %d, want %d", tsSum(salted), tsSum(unsalted), rows)
		}
		if sRatio > 1.1 {
			t.Errorf("salted max/mean = %.3f, want <= 1.1 (%v)", sRatio, salted)
		}
		if uMax != rows {
			t.Errorf("unsalted: max range holds %d of %d rows, want all in one (%v)", uMax, rows, unsalted)
		}
		// brine's own count (a scan per bucket) agrees with the physical one.
		counts, err := tbl.CountByBucket(testkit.Context(t, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		for i, n := range counts {
			if int(n) != salted[i] {
				t.Fatalf("CountByBucket[%d] = %d, physical count %d", i, n, salted[i])
			}
		}
	})
}

func tsSum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestTablestoreSpecMismatch: opening a table with another spec fails with client.ErrSpecMismatch and
// writes nothing; opening with no salter adopts the stored spec.
func TestTablestoreSpecMismatch(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		e := tg.open(t, nil)
		tbl := e.salted(t, "hash:16")
		key := []byte("order-1")
		if err := tbl.Put(testkit.Context(t, time.Minute), key, tsMutation(key).Cells...); err != nil {
			t.Fatal(err)
		}
		before := e.rawRange(t, tbl.Name(), nil, nil)
		if tg.srv != nil {
			tg.srv.ResetStats()
		}
		other := testkit.Salter(t, "hash:8")
		_, err := e.client.OpenTable(testkit.Context(t, time.Minute), tbl.Name(), other)
		if !errors.Is(err, client.ErrSpecMismatch) || !strings.Contains(err.Error(), "hash:8") || !strings.Contains(err.Error(), "hash:16") {
			t.Fatalf("OpenTable with hash:8: %v, want ErrSpecMismatch naming both specs", err)
		}
		if tg.srv != nil {
			if w := tg.srv.Stats().Total().RowsWritten; w != 0 {
				t.Fatalf("%d rows written by a mismatched open", w)
			}
		}
		if after := e.rawRange(t, tbl.Name(), nil, nil); tsDiff(after, before) != "" {
			t.Fatalf("table changed: %s", tsDiff(after, before))
		}
		adopted, err := e.client.OpenTable(testkit.Context(t, time.Minute), tbl.Name(), nil)
		if err != nil || adopted.Salter().Spec() != "hash:16" {
			t.Fatalf("OpenTable(nil): %v %v", adopted, err)
		}
		got, err := adopted.Get(testkit.Context(t, time.Minute), key)
		if err != nil || tsDiff([]tsRow{tsBrineRow(got)}, tsWant([][]byte{key})) != "" {
			t.Fatalf("Get through the adopted spec: %v %v", got, err)
		}
	})
}

// TestTablestoreBadKeys: empty keys and keys over the 1 KB primary-key limit (the salt counts) are
// rejected with ErrInvalidKey and a message naming the limit, before anything is sent; an import
// reports exactly those rows and writes every row around them.
func TestTablestoreBadKeys(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		e := tg.open(t, nil)
		tbl := e.salted(t, "hash:16")
		ctx := testkit.Context(t, time.Minute)
		fits := bytes.Repeat([]byte("k"), 1023) // 1024 with the 1-byte salt: the limit itself
		over := bytes.Repeat([]byte("k"), 1024)

		if tg.srv != nil {
			tg.srv.ResetStats()
		}
		for _, k := range [][]byte{nil, {}, over} {
			err := tbl.Put(ctx, k, tsMutation([]byte("x")).Cells...)
			if !errors.Is(err, client.ErrInvalidKey) {
				t.Fatalf("Put(%d-byte key): %v, want ErrInvalidKey", len(k), err)
			}
			if len(k) > 0 && !strings.Contains(err.Error(), "1024") {
				t.Errorf("Put(%d-byte key): %q does not name the limit", len(k), err)
			}
		}
		if tg.srv != nil {
			if n := tg.srv.Stats().Total().Requests; n != 0 {
				t.Fatalf("%d requests sent for refused keys", n)
			}
		}

		var keys [][]byte
		bad := map[int]bool{}
		for i := range 600 {
			switch i {
			case 100, 350:
				keys = append(keys, nil)
				bad[i] = true
			case 200, 201, 599:
				keys = append(keys, append(bytes.Clone(over), byte(i)))
				bad[i] = true
			case 300:
				keys = append(keys, fits)
			default:
				keys = append(keys, fmt.Appendf(nil, "row-%05d", i))
			}
		}
		var failed []client.FailedRow
		stats, err := tbl.Import(ctx, tsRows(keys), client.ImportOptions{BatchRows: 50, OnFailure: func(f client.FailedRow) { failed = append(failed, f) }})
		if !errors.Is(err, client.ErrRowsFailed) {
			t.Fatalf("Import: %v, want ErrRowsFailed", err)
		}
		if len(failed) != len(bad) || stats.Failed != int64(len(bad)) || stats.Written != int64(len(keys)-len(bad)) {
			t.Fatalf("Import: %d failed rows (stats %+v), want %d", len(failed), stats, len(bad))
		}
		for _, f := range failed {
			if !bad[int(f.Index)] || f.Row.Source != int(f.Index) || !errors.Is(f.Err, client.ErrInvalidKey) {
				t.Fatalf("failed row %d (source %v): %v", f.Index, f.Row.Source, f.Err)
			}
		}
		var good [][]byte
		for i, k := range keys {
			if !bad[i] {
				good = append(good, k)
			}
		}
		if d := tsDiff(tsScan(t, tbl, client.Range{}), tsWant(good)); d != "" {
			t.Fatalf("rows around the bad keys: %s", d)
		}
	})
}

// TestTablestoreMultiColumnKey: a [DeviceID, SellerID, CardID] table with the first column salted
// (hash:16:prefix=6 over the 6-byte device id): brine's client writes and scans it with logical keys
// (device + tablestore.AppendKeyTail(seller, card)); the stored rows hold the salt and the device in
// DeviceID and the other columns unchanged; a range within one device is one bucket, in key order.
func TestTablestoreMultiColumnKey(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		e := tg.open(t, nil)
		name := tsTableName("mc")
		const spec, pkSpec = "hash:16:prefix=6", "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER"
		err := e.backend.CreateTable(testkit.Context(t, 2*time.Minute), name, backends.TableOptions{
			Meta: map[string]string{client.MetaSaltSpec: spec, tablestore.MetaPrimaryKey: pkSpec}})
		if err != nil {
			t.Fatal(err)
		}
		e.drop(t, name)
		tbl, err := e.client.OpenTable(testkit.Context(t, time.Minute), name, nil)
		if err != nil || tbl.Salter().Spec() != spec {
			t.Fatalf("OpenTable: %v", err)
		}
		type rowKey struct {
			dev    string
			seller string
			card   int64
		}
		var rks []rowKey
		var keys [][]byte
		for d := range 12 {
			for _, s := range []string{"", "a", "ab", "b"} {
				for _, c := range []int64{-1, 0, 7, 1 << 40} {
					rk := rowKey{fmt.Sprintf("dev%03d", d), s, c}
					k, err := tablestore.AppendKeyTail([]byte(rk.dev), rk.seller, rk.card)
					if err != nil {
						t.Fatal(err)
					}
					rks, keys = append(rks, rk), append(keys, k)
				}
			}
		}
		tsImport(t, tbl, keys, client.ImportOptions{})
		want := tsWant(keys)
		if d := tsDiff(tsScan(t, tbl, client.Range{}), want); d != "" {
			t.Fatalf("full scan: %s", d)
		}
		if d := tsDiff(tsScan(t, tbl, client.Range{}, client.Reverse(), client.BatchSize(5)), tsReversed(want)); d != "" {
			t.Fatalf("reverse scan: %s", d)
		}
		dev := []byte("dev007")
		var wantDev []tsRow
		for _, r := range want {
			if strings.HasPrefix(r.Key, string(dev)) {
				wantDev = append(wantDev, r)
			}
		}
		if br, err := tbl.Salter().BucketRanges(dev, []byte("dev008")); err != nil || len(br) != 1 {
			t.Fatalf("a device's range covers %d buckets (%v), want 1", len(br), err)
		}
		if d := tsDiff(tsScan(t, tbl, client.PrefixRange(dev)), wantDev); d != "" || len(wantDev) != 16 {
			t.Fatalf("one device: %s (%d rows)", d, len(wantDev))
		}

		// Stored as the layout says: salt+device in DeviceID, the other columns unchanged.
		crit := &ots.RangeRowQueryCriteria{TableName: name, Direction: ots.FORWARD, MaxVersion: 1,
			StartPrimaryKey: new(ots.PrimaryKey), EndPrimaryKey: new(ots.PrimaryKey)}
		for _, col := range []string{"DeviceID", "SellerID", "CardID"} {
			crit.StartPrimaryKey.AddPrimaryKeyColumnWithMinValue(col)
			crit.EndPrimaryKey.AddPrimaryKeyColumnWithMaxValue(col)
		}
		stored := map[rowKey]bool{}
		for crit.StartPrimaryKey != nil {
			resp, err := e.sdk.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: crit})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range resp.Rows {
				pk := r.PrimaryKey.PrimaryKeys
				d := pk[0].Value.([]byte)
				b, _ := tbl.Salter().Bucket(d[1:])
				if len(d) != 7 || int(d[0]) != b {
					t.Fatalf("stored DeviceID %q: want the bucket %d then 6 bytes", d, b)
				}
				stored[rowKey{string(d[1:]), pk[1].Value.(string), pk[2].Value.(int64)}] = true
			}
			crit.StartPrimaryKey = resp.NextStartPrimaryKey
		}
		for _, rk := range rks {
			if !stored[rk] {
				t.Fatalf("row %+v not stored as its columns", rk)
			}
		}
		if len(stored) != len(rks) {
			t.Fatalf("%d stored rows, want %d", len(stored), len(rks))
		}
	})
}

func tsReversed(rows []tsRow) []tsRow {
	out := slices.Clone(rows)
	slices.Reverse(out)
	return out
}
