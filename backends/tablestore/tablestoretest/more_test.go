package tablestoretest_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// manualClock is a clock tests move by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (m *manualClock) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func (m *manualClock) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
}

func TestTimeToLive(t *testing.T) {
	clock := &manualClock{now: time.Now()}
	_, c := startServer(t, tablestoretest.WithClock(clock.Now))
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
		TableOption: &tablestore.TableOption{TimeToAlive: 60, MaxVersion: 1}, ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
	putRow(t, c, "t", pk("id", "old"), "v", "1")
	clock.Advance(30 * time.Second)
	putRow(t, c, "t", pk("id", "new"), "v", "2")
	clock.Advance(40 * time.Second) // "old" is 70 s old, "new" 40 s

	if r := getRow(t, c, "t", pk("id", "old"), 1); len(r.PrimaryKey.PrimaryKeys) != 0 {
		t.Errorf("expired row returned: %+v", r.Columns)
	}
	keys, _ := rangeKeys(t, c, "t", tablestore.FORWARD, pk("id", tablestore.MinValue), pk("id", tablestore.MaxValue), 0)
	if strings.Join(keys, ",") != "new" {
		t.Errorf("range = %v", keys)
	}
	// An expired row no longer exists for conditions.
	ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", "old")}
	ch.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
	ch.AddColumn("v", "3")
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Errorf("insert over expired row: %v", err)
	}
	// Writes older than the TTL are refused.
	stale := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", "stale")}
	stale.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	stale.AddColumnWithTimestamp("v", "x", clock.Now().Add(-2*time.Minute).UnixMilli())
	_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: stale})
	wantCode(t, err, "OTSParameterInvalid", 400)
}

func TestWideRowSelection(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"id", tablestore.PrimaryKeyType_INTEGER})
	putRow(t, c, "t", pk("id", int64(1)), "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
	names := func(r *tablestore.GetRowResponse) string {
		var out []string
		for _, col := range r.Columns {
			out = append(out, col.ColumnName)
		}
		return strings.Join(out, "")
	}
	q := &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("id", int64(1)), MaxVersion: 1}
	q.SetStartColumn("b")
	q.SetEndtColumn("d")
	r, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: q})
	if err != nil || names(r) != "bc" {
		t.Errorf("start/end column = %q, %v", names(r), err)
	}
	q = &tablestore.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk("id", int64(1)), MaxVersion: 1}
	q.SetFilter(&tablestore.PaginationFilter{Offset: 1, Limit: 2})
	r, err = c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: q})
	if err != nil || names(r) != "bc" {
		t.Errorf("pagination filter = %q, %v", names(r), err)
	}
	q.SetFilter(&tablestore.PaginationFilter{Offset: 0, Limit: 0})
	_, err = c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: q})
	wantCode(t, err, "OTSParameterInvalid", 400)
}

func TestBatchRepeatedRows(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"id", tablestore.PrimaryKeyType_INTEGER})
	batch := func(exp tablestore.RowExistenceExpectation) error {
		req := &tablestore.BatchWriteRowRequest{}
		for _, v := range []string{"first", "second"} {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(1))}
			ch.SetCondition(exp)
			ch.AddColumn("v", v)
			req.AddRowChange(ch)
		}
		_, err := c.BatchWriteRow(req)
		return err
	}
	// Repeated rows are applied in request order when unconditioned...
	if err := batch(tablestore.RowExistenceExpectation_IGNORE); err != nil {
		t.Fatal(err)
	}
	if r := getRow(t, c, "t", pk("id", int64(1)), 1); r.Columns[0].Value != "second" {
		t.Errorf("value = %v", r.Columns[0].Value)
	}
	// ...and refused with a row-existence condition.
	oe := wantCode(t, batch(tablestore.RowExistenceExpectation_EXPECT_EXIST), "OTSParameterInvalid", 400)
	if oe.Message != "Repeated rows do not support row exist expectation check in BatchModify." {
		t.Errorf("message = %q", oe.Message)
	}
}

func TestWithoutAuthAndReset(t *testing.T) {
	srv := tablestoretest.Start(t, tablestoretest.WithoutAuth())
	c := tablestore.NewClientWithConfig(srv.Endpoint(), "any", "any-id", "any-secret", "", noRetry())
	createTable(t, c, "t", 1, col{"id", tablestore.PrimaryKeyType_INTEGER})
	srv.Reset()
	l, err := c.ListTable()
	if err != nil || len(l.TableNames) != 0 {
		t.Errorf("after reset: %v, %v", l, err)
	}
}
