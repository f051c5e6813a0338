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

// TestPlainReadOutsideTimeRange: a read with no columns_to_get whose time range matches no version of
// an existing row still returns the row, with its primary key and no columns, in GetRow, BatchGetRow
// and GetRange alike (the service's behaviour, which the SDK's own tests expect).
func TestPlainReadOutsideTimeRange(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "tr", 3, col{"id", tablestore.PrimaryKeyType_STRING})
	ch := &tablestore.PutRowChange{TableName: "tr", PrimaryKey: pk("id", "a")}
	ts := time.Now().UnixMilli()
	ch.AddColumnWithTimestamp("v", "x", ts)
	ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
		t.Fatalf("PutRow: %v", err)
	}
	miss := &tablestore.TimeRange{Start: ts + 10_000, End: ts + 20_000}

	got, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "tr", PrimaryKey: pk("id", "a"), TimeRange: miss}})
	if err != nil || len(got.PrimaryKey.PrimaryKeys) != 1 || len(got.Columns) != 0 {
		t.Errorf("GetRow outside the time range = %+v, %v; want the row's key and no columns", got, err)
	}

	crit := &tablestore.MultiRowQueryCriteria{TableName: "tr", TimeRange: miss}
	crit.AddRow(pk("id", "a"))
	crit.AddRow(pk("id", "missing"))
	batch, err := c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{crit}})
	if err != nil {
		t.Fatalf("BatchGetRow: %v", err)
	}
	rows := batch.TableToRowsResult["tr"]
	if len(rows) != 2 || !rows[0].IsSucceed || len(rows[0].PrimaryKey.PrimaryKeys) != 1 || len(rows[0].Columns) != 0 ||
		len(rows[1].PrimaryKey.PrimaryKeys) != 0 {
		t.Errorf("BatchGetRow outside the time range = %+v; want row a's key with no columns, then no row", rows)
	}

	start, end := new(tablestore.PrimaryKey), new(tablestore.PrimaryKey)
	start.AddPrimaryKeyColumnWithMinValue("id")
	end.AddPrimaryKeyColumnWithMaxValue("id")
	rng, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "tr", StartPrimaryKey: start, EndPrimaryKey: end, Direction: tablestore.FORWARD, TimeRange: miss}})
	if err != nil || len(rng.Rows) != 1 || len(rng.Rows[0].Columns) != 0 {
		t.Errorf("GetRange outside the time range = %+v, %v; want one row with no columns", rng, err)
	}

	// Columns asked for by name: nothing matches, so no row (unchanged).
	named, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "tr", PrimaryKey: pk("id", "a"), TimeRange: miss, ColumnsToGet: []string{"v"}}})
	if err != nil || len(named.PrimaryKey.PrimaryKeys) != 0 {
		t.Errorf("GetRow of column v outside the time range = %+v, %v; want no row", named, err)
	}
}

// TestStreamsRefused: the server models no streams, so enabling one is refused, on create and update.
func TestStreamsRefused(t *testing.T) {
	_, c := startServer(t)
	meta := &tablestore.TableMeta{TableName: "s"}
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_STRING)
	_, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
		TableOption:        &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1},
		ReservedThroughput: &tablestore.ReservedThroughput{},
		StreamSpec:         &tablestore.StreamSpecification{EnableStream: true, ExpirationTime: 24}})
	wantCode(t, err, "OTSParameterInvalid", 400)
	if _, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "s"}); err == nil {
		t.Fatal("the table was created although its stream spec was refused")
	}
	createTable(t, c, "s", 1, col{"id", tablestore.PrimaryKeyType_STRING})
	_, err = c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "s",
		StreamSpec: &tablestore.StreamSpecification{EnableStream: true, ExpirationTime: 24}})
	wantCode(t, err, "OTSParameterInvalid", 400)
	d, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "s"})
	if err != nil || d.StreamDetails == nil || d.StreamDetails.EnableStream {
		t.Fatalf("DescribeTable after a refused stream update = %+v, %v; want streams off", d, err)
	}
}
