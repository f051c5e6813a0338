package dropin

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
)

// env is a local server with an SDK client and brine's driver on it.
type env struct {
	srv     *tablestoretest.Server
	sdk     *ots.TableStoreClient
	backend *tablestore.Backend
	stamp   int64
}

func newEnv(t *testing.T, opts ...tablestoretest.Option) *env {
	t.Helper()
	srv := tablestoretest.Start(t, opts...)
	sdk := srv.NewClient(nil)
	return &env{srv: srv, sdk: sdk, backend: tablestore.New(sdk, tablestore.Options{}),
		stamp: time.Now().Add(-time.Minute).UnixMilli()}
}

// salted creates a table the way brine does, with the spec stored, and an optional primary key.
func (e *env) salted(t *testing.T, name, spec, primaryKey string) {
	t.Helper()
	meta := map[string]string{client.MetaSaltSpec: spec}
	if primaryKey != "" {
		meta[tablestore.MetaPrimaryKey] = primaryKey
	}
	if err := e.backend.CreateTable(context.Background(), name, backends.TableOptions{Meta: meta}); err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// raw creates a table with the SDK alone: the unsalted reference, or a table brine did not create.
func (e *env) raw(t *testing.T, name string, cols ...tablestore.KeyColumn) {
	t.Helper()
	meta := &ots.TableMeta{TableName: name}
	for _, c := range cols {
		typ := ots.PrimaryKeyType_BINARY
		switch c.Type {
		case tablestore.KeyString:
			typ = ots.PrimaryKeyType_STRING
		case tablestore.KeyInteger:
			typ = ots.PrimaryKeyType_INTEGER
		}
		meta.AddPrimaryKeyColumn(c.Name, typ)
	}
	_, err := e.sdk.CreateTable(&ots.CreateTableRequest{TableMeta: meta,
		TableOption: &ots.TableOption{TimeToAlive: -1, MaxVersion: 1}, ReservedThroughput: &ots.ReservedThroughput{}})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
}

// rowOps are the batch writes of both the drop-in and the SDK.
type rowWriter interface {
	BatchWriteRow(*ots.BatchWriteRowRequest) (*ots.BatchWriteRowResponse, error)
}

// putAll writes rows (primary key, columns "v" and "n") in batches of 100 and checks every row result.
func (e *env) putAll(t *testing.T, w rowWriter, table string, pks []*ots.PrimaryKey) {
	t.Helper()
	for i := 0; i < len(pks); i += 100 {
		req := &ots.BatchWriteRowRequest{}
		for j, pk := range pks[i:min(i+100, len(pks))] {
			ch := &ots.PutRowChange{TableName: table, PrimaryKey: pk}
			ch.AddColumnWithTimestamp("v", []byte(fmt.Sprintf("value-%d", i+j)), e.stamp)
			ch.AddColumnWithTimestamp("n", int64(i+j), e.stamp)
			ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
			req.AddRowChange(ch)
		}
		resp, err := w.BatchWriteRow(req)
		if err != nil {
			t.Fatalf("write %s: %v", table, err)
		}
		for _, r := range resp.TableToRowsResult[table] {
			if !r.IsSucceed {
				t.Fatalf("write %s: row %d: %s %s", table, r.Index, r.Error.Code, r.Error.Message)
			}
		}
	}
}

// bin is a one-column key "pk" BINARY; min/max its INF bounds.
func bin(k []byte) *ots.PrimaryKey {
	pk := new(ots.PrimaryKey)
	pk.AddPrimaryKeyColumn("pk", k)
	return pk
}

func infMin(names ...string) *ots.PrimaryKey {
	pk := new(ots.PrimaryKey)
	for _, n := range names {
		pk.AddPrimaryKeyColumnWithMinValue(n)
	}
	return pk
}

func infMax(names ...string) *ots.PrimaryKey {
	pk := new(ots.PrimaryKey)
	for _, n := range names {
		pk.AddPrimaryKeyColumnWithMaxValue(n)
	}
	return pk
}

// seq is a monotonic key: "o" and a big-endian counter (zero bytes included).
func seq(i int) []byte { return binary.BigEndian.AppendUint64([]byte("o"), uint64(i)) }

// testKeys are monotonic keys, keys made of 0x00 and 0xFF bytes, keys that are prefixes of each
// other, and keys under a few user ids.
func testKeys(monotonic int) [][]byte {
	var ks [][]byte
	for i := range monotonic {
		ks = append(ks, seq(i))
	}
	ks = append(ks, []byte{0x00}, []byte{0x00, 0x00}, []byte{0x00, 0xFF}, []byte{0xFF}, []byte{0xFF, 0xFF},
		[]byte{0xFF, 0x00}, []byte("a"), []byte("a\x00"), []byte("a\xff"),
		[]byte("p"), []byte("pa"), []byte("pab"), []byte("pb"))
	for u := 1; u <= 5; u++ {
		for j := range 12 {
			ks = append(ks, binary.BigEndian.AppendUint32([]byte(fmt.Sprintf("u%03d/", u)), uint32(j)))
		}
	}
	return ks
}

// rowText writes a row as text, key and cells, for comparisons.
func rowText(r *ots.Row) string {
	var b strings.Builder
	b.WriteString(pkText(r.PrimaryKey))
	for _, c := range r.Columns {
		fmt.Fprintf(&b, " %s=%v@%d", c.ColumnName, c.Value, c.Timestamp)
	}
	return b.String()
}

func pkText(pk *ots.PrimaryKey) string {
	if pk == nil {
		return "<nil>"
	}
	var parts []string
	for _, c := range pk.PrimaryKeys {
		switch c.PrimaryKeyOption {
		case ots.MIN:
			parts = append(parts, c.ColumnName+"=MIN")
		case ots.MAX:
			parts = append(parts, c.ColumnName+"=MAX")
		default:
			if v, ok := c.Value.(int64); ok {
				parts = append(parts, fmt.Sprintf("%s=%d", c.ColumnName, v))
				continue
			}
			parts = append(parts, fmt.Sprintf("%s=%q", c.ColumnName, c.Value))
		}
	}
	return strings.Join(parts, ",")
}

// rangeReader is what GetRange is called on: the drop-in or the SDK.
type rangeReader interface {
	GetRange(*ots.GetRangeRequest) (*ots.GetRangeResponse, error)
}

// pages reads crit to its end with GetRange, following NextStartPrimaryKey, and returns the rows and
// the number of calls. With check, every page but the last must be full (Limit rows) and the cursor
// must be the next page's first row.
func pages(t *testing.T, r rangeReader, crit ots.RangeRowQueryCriteria, check bool) ([]string, int) {
	t.Helper()
	var out []string
	var prevNext *ots.PrimaryKey
	for n := 1; ; n++ {
		q := crit
		resp, err := r.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &q})
		if err != nil {
			t.Fatalf("GetRange page %d from %s: %v", n, pkText(crit.StartPrimaryKey), err)
		}
		if check && prevNext != nil && (len(resp.Rows) == 0 || pkText(resp.Rows[0].PrimaryKey) != pkText(prevNext)) {
			t.Fatalf("page %d: cursor %s is not the next row", n, pkText(prevNext))
		}
		for _, row := range resp.Rows {
			out = append(out, rowText(row))
		}
		if resp.NextStartPrimaryKey == nil {
			return out, n
		}
		if check && crit.Limit > 0 && len(resp.Rows) != int(crit.Limit) {
			t.Fatalf("page %d: %d rows with a next page, want %d", n, len(resp.Rows), crit.Limit)
		}
		if pkText(resp.NextStartPrimaryKey) == pkText(crit.StartPrimaryKey) {
			t.Fatalf("page %d: the cursor %s does not advance", n, pkText(resp.NextStartPrimaryKey))
		}
		if n > 10000 {
			t.Fatal("GetRange does not end")
		}
		prevNext = resp.NextStartPrimaryKey
		crit.StartPrimaryKey = resp.NextStartPrimaryKey
	}
}

func diffRows(got, want []string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, want %d (first got %v, first want %v)", len(got), len(want), head(got), head(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d: got %s, want %s", i, got[i], want[i])
		}
	}
	return ""
}

func head(s []string) []string { return s[:min(3, len(s))] }

func equalBytes(a, b any) bool {
	x, ok1 := a.([]byte)
	y, ok2 := b.([]byte)
	return ok1 && ok2 && bytes.Equal(x, y)
}
