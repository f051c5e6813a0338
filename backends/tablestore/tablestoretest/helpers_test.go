package tablestoretest_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// noRetry is a client config that surfaces every error on the first attempt.
func noRetry() *tablestore.TableStoreConfig {
	c := tablestore.NewDefaultTableStoreConfig()
	c.RetryTimes = 0
	return c
}

type col struct {
	name string
	typ  tablestore.PrimaryKeyType
}

func createTable(t *testing.T, c *tablestore.TableStoreClient, name string, maxVersions int, cols ...col) {
	t.Helper()
	meta := &tablestore.TableMeta{TableName: name}
	for _, k := range cols {
		meta.AddPrimaryKeyColumn(k.name, k.typ)
	}
	_, err := c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta:          meta,
		TableOption:        &tablestore.TableOption{TimeToAlive: -1, MaxVersion: maxVersions},
		ReservedThroughput: &tablestore.ReservedThroughput{},
	})
	if err != nil {
		t.Fatalf("CreateTable %s: %v", name, err)
	}
}

// pk builds a primary key from name/value pairs; the values tablestore.MinValue
// and tablestore.MaxValue stand for INF_MIN and INF_MAX.
func pk(kv ...any) *tablestore.PrimaryKey {
	p := &tablestore.PrimaryKey{}
	for i := 0; i < len(kv); i += 2 {
		name := kv[i].(string)
		switch kv[i+1] {
		case tablestore.MinValue:
			p.AddPrimaryKeyColumnWithMinValue(name)
		case tablestore.MaxValue:
			p.AddPrimaryKeyColumnWithMaxValue(name)
		default:
			p.AddPrimaryKeyColumn(name, kv[i+1])
		}
	}
	return p
}

func putRow(t *testing.T, c *tablestore.TableStoreClient, table string, key *tablestore.PrimaryKey, cols ...any) {
	t.Helper()
	ch := &tablestore.PutRowChange{TableName: table, PrimaryKey: key}
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	for i := 0; i < len(cols); i += 2 {
		ch.AddColumn(cols[i].(string), cols[i+1])
	}
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatalf("PutRow: %v", err)
	}
}

func getRow(t *testing.T, c *tablestore.TableStoreClient, table string, key *tablestore.PrimaryKey, maxVersions int32, cols ...string) *tablestore.GetRowResponse {
	t.Helper()
	resp, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: table, PrimaryKey: key, MaxVersion: maxVersions, ColumnsToGet: cols,
	}})
	if err != nil {
		t.Fatalf("GetRow: %v", err)
	}
	return resp
}

// wantCode asserts err is an *OtsError with the code (and HTTP status when > 0).
func wantCode(t *testing.T, err error, code string, status int) *tablestore.OtsError {
	t.Helper()
	var oe *tablestore.OtsError
	if !errors.As(err, &oe) {
		t.Fatalf("error = %v (%T), want *tablestore.OtsError %s", err, err, code)
	}
	if oe.Code != code {
		t.Fatalf("code = %s (%q), want %s", oe.Code, oe.Message, code)
	}
	if status > 0 && oe.HttpStatusCode != status {
		t.Fatalf("status = %d, want %d", oe.HttpStatusCode, status)
	}
	return oe
}

// rangeKeys reads the whole range [start, end) page by page and returns the first
// primary-key column of every row, plus the number of pages.
func rangeKeys(t *testing.T, c *tablestore.TableStoreClient, table string, dir tablestore.Direction,
	start, end *tablestore.PrimaryKey, limit int32) (keys []string, pages int) {
	t.Helper()
	for start != nil {
		resp, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
			TableName: table, StartPrimaryKey: start, EndPrimaryKey: end, Direction: dir, MaxVersion: 1, Limit: limit,
		}})
		if err != nil {
			t.Fatalf("GetRange: %v", err)
		}
		pages++
		for _, r := range resp.Rows {
			var k string
			for i, p := range r.PrimaryKey.PrimaryKeys {
				if i > 0 {
					k += "/"
				}
				k += fmt.Sprint(p.Value)
			}
			keys = append(keys, k)
		}
		start = resp.NextStartPrimaryKey
	}
	return keys, pages
}

func startServer(t *testing.T, opts ...tablestoretest.Option) (*tablestoretest.Server, *tablestore.TableStoreClient) {
	t.Helper()
	srv := tablestoretest.Start(t, opts...)
	return srv, srv.NewClient(noRetry())
}
