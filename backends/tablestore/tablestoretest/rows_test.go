package tablestoretest_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

func TestRowRoundTrip(t *testing.T) {
	srv, c := startServer(t)
	createTable(t, c, "t", 1, col{"a", tablestore.PrimaryKeyType_STRING}, col{"b", tablestore.PrimaryKeyType_INTEGER},
		col{"c", tablestore.PrimaryKeyType_BINARY})
	key := pk("a", "k", "b", int64(-3), "c", []byte{0, 0xff})
	putRow(t, c, "t", key, "s", "str", "i", int64(42), "d", 2.5, "t", true, "bin", []byte{1, 2})
	got := getRow(t, c, "t", key, 1)
	if len(got.PrimaryKey.PrimaryKeys) != 3 || got.PrimaryKey.PrimaryKeys[1].Value != int64(-3) {
		t.Errorf("pk = %v", got.PrimaryKey.PrimaryKeys)
	}
	want := map[string]any{"bin": []byte{1, 2}, "d": 2.5, "i": int64(42), "s": "str", "t": true}
	var names []string
	for _, col := range got.Columns {
		names = append(names, col.ColumnName)
		if fmt.Sprint(col.Value) != fmt.Sprint(want[col.ColumnName]) {
			t.Errorf("%s = %v, want %v", col.ColumnName, col.Value, want[col.ColumnName])
		}
		if col.Timestamp == 0 {
			t.Errorf("%s has no timestamp", col.ColumnName)
		}
	}
	if !sort.StringsAreSorted(names) || len(names) != 5 {
		t.Errorf("columns = %v, want 5 sorted by name", names)
	}

	sel := getRow(t, c, "t", key, 1, "s", "nope")
	if len(sel.Columns) != 1 || sel.Columns[0].ColumnName != "s" {
		t.Errorf("columns_to_get = %v", sel.Columns)
	}
	if miss := getRow(t, c, "t", key, 1, "nope"); len(miss.PrimaryKey.PrimaryKeys) != 0 {
		t.Errorf("unmatched columns_to_get returned a row: %v", miss.PrimaryKey.PrimaryKeys)
	}
	if miss := getRow(t, c, "t", pk("a", "other", "b", int64(1), "c", []byte{}), 1); len(miss.PrimaryKey.PrimaryKeys) != 0 || len(miss.Columns) != 0 {
		t.Errorf("missing row = %+v", miss)
	}

	// A put with only the primary key creates a row.
	putRow(t, c, "t", pk("a", "bare", "b", int64(0), "c", []byte{}))
	if bare := getRow(t, c, "t", pk("a", "bare", "b", int64(0), "c", []byte{}), 1); len(bare.PrimaryKey.PrimaryKeys) != 3 || len(bare.Columns) != 0 {
		t.Errorf("pk-only row = %+v", bare)
	}

	// PutRow replaces the whole row.
	putRow(t, c, "t", key, "only", "x")
	if r := getRow(t, c, "t", key, 1); len(r.Columns) != 1 || r.Columns[0].ColumnName != "only" {
		t.Errorf("after replace = %v", r.Columns)
	}

	del := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: key}
	del.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del}); err != nil {
		t.Fatalf("DeleteRow: %v", err)
	}
	if r := getRow(t, c, "t", key, 1); len(r.PrimaryKey.PrimaryKeys) != 0 {
		t.Errorf("deleted row still there: %+v", r)
	}
	if st := srv.Stats(); st["PutRow"].RowsWritten != 3 || st["DeleteRow"].RowsWritten != 1 || st["GetRow"].RowsRead != 4 {
		t.Errorf("stats = %+v", st)
	}
}

// steppingClock advances one millisecond per reading, so consecutive writes get
// distinct server-assigned timestamps.
func steppingClock() func() time.Time {
	var mu sync.Mutex
	now := time.Now()
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(time.Millisecond)
		return now
	}
}

func TestUpdateRow(t *testing.T) {
	_, c := startServer(t, tablestoretest.WithClock(steppingClock()))
	createTable(t, c, "t", 10, col{"id", tablestore.PrimaryKeyType_INTEGER})
	key := pk("id", int64(1))
	now := time.Now().UnixMilli()
	put := &tablestore.PutRowChange{TableName: "t", PrimaryKey: key}
	put.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	for i := range int64(3) {
		put.AddColumnWithTimestamp("v", fmt.Sprintf("v%d", i), now-1000+i)
	}
	put.AddColumn("gone", "x")
	put.AddColumn("n", int64(10))
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: put}); err != nil {
		t.Fatal(err)
	}

	upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: key}
	upd.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	upd.DeleteColumnWithTimestamp("v", now-1000+2)
	upd.DeleteColumn("gone")
	upd.PutColumn("new", "fresh")
	upd.IncrementColumn("n", 5)
	upd.IncrementColumn("m", -2)
	upd.SetReturnIncrementValue()
	upd.AppendIncrementColumnToReturn("n")
	upd.AppendIncrementColumnToReturn("m")
	resp, err := c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd})
	if err != nil {
		t.Fatalf("UpdateRow: %v", err)
	}
	ret := map[string]any{}
	for _, col := range resp.Columns {
		ret[col.ColumnName] = col.Value
	}
	if ret["n"] != int64(15) || ret["m"] != int64(-2) {
		t.Errorf("returned %v", ret)
	}

	r := getRow(t, c, "t", key, 10)
	var got []string
	for _, col := range r.Columns {
		got = append(got, fmt.Sprintf("%s=%v", col.ColumnName, col.Value))
	}
	if want := "m=-2 n=15 n=10 new=fresh v=v1 v=v0"; strings.Join(got, " ") != want {
		t.Errorf("row = %s\nwant  %s", strings.Join(got, " "), want)
	}
	if r := getRow(t, c, "t", key, 1, "v"); len(r.Columns) != 1 || r.Columns[0].Value != "v1" {
		t.Errorf("max_versions 1 = %v", r.Columns)
	}

	// Time range and specific time reads.
	tr, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "t", PrimaryKey: key, TimeRange: &tablestore.TimeRange{Specific: now - 1000}, ColumnsToGet: []string{"v"}}})
	if err != nil || len(tr.Columns) != 1 || tr.Columns[0].Value != "v0" {
		t.Errorf("specific time read = %v, %v", tr, err)
	}

	// Updating a missing row with only deletes leaves it missing.
	gone := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("id", int64(2))}
	gone.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	gone.DeleteColumn("x")
	if _, err := c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: gone}); err != nil {
		t.Fatal(err)
	}
	if r := getRow(t, c, "t", pk("id", int64(2)), 1); len(r.PrimaryKey.PrimaryKeys) != 0 {
		t.Errorf("row created by deletes: %+v", r)
	}
}

func TestMaxVersionsTrimmedOnWrite(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 2, col{"id", tablestore.PrimaryKeyType_STRING})
	now := time.Now().UnixMilli()
	for i := range int64(4) {
		upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("id", "x")}
		upd.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		upd.Columns = append(upd.Columns, tablestore.ColumnToUpdate{ColumnName: "c", Value: i, Timestamp: now + i, HasTimestamp: true})
		if _, err := c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd}); err != nil {
			t.Fatal(err)
		}
	}
	r := getRow(t, c, "t", pk("id", "x"), 100)
	if len(r.Columns) != 2 || r.Columns[0].Value != int64(3) || r.Columns[1].Value != int64(2) {
		t.Errorf("versions = %v", r.Columns)
	}
}

func TestConditions(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"id", tablestore.PrimaryKeyType_STRING})
	put := func(key string, exp tablestore.RowExistenceExpectation, cond tablestore.ColumnFilter) error {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", key)}
		ch.SetCondition(exp)
		if cond != nil {
			ch.SetColumnCondition(cond)
		}
		ch.AddColumn("v", int64(1))
		_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		return err
	}
	if err := put("a", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST, nil); err != nil {
		t.Fatalf("first insert: %v", err)
	}
	oe := wantCode(t, put("a", tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST, nil), "OTSConditionCheckFail", 403)
	if oe.Message != "Condition check failed." {
		t.Errorf("message = %q", oe.Message)
	}
	wantCode(t, put("b", tablestore.RowExistenceExpectation_EXPECT_EXIST, nil), "OTSConditionCheckFail", 403)
	if err := put("a", tablestore.RowExistenceExpectation_EXPECT_EXIST, nil); err != nil {
		t.Errorf("expect exist on existing row: %v", err)
	}

	// Column conditions.
	eq1 := tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(1))
	if err := put("a", tablestore.RowExistenceExpectation_EXPECT_EXIST, eq1); err != nil {
		t.Errorf("v == 1 condition: %v", err)
	}
	gt5 := tablestore.NewSingleColumnCondition("v", tablestore.CT_GREATER_THAN, int64(5))
	wantCode(t, put("a", tablestore.RowExistenceExpectation_IGNORE, gt5), "OTSConditionCheckFail", 403)
	missing := tablestore.NewSingleColumnCondition("nope", tablestore.CT_EQUAL, int64(1))
	if err := put("a", tablestore.RowExistenceExpectation_IGNORE, missing); err != nil {
		t.Errorf("missing column passes when filter_if_missing is false: %v", err)
	}
	missing.FilterIfMissing = true
	wantCode(t, put("a", tablestore.RowExistenceExpectation_IGNORE, missing), "OTSConditionCheckFail", 403)
	or := tablestore.NewCompositeColumnCondition(tablestore.LO_OR)
	or.AddFilter(gt5)
	or.AddFilter(eq1)
	if err := put("a", tablestore.RowExistenceExpectation_IGNORE, or); err != nil {
		t.Errorf("OR condition: %v", err)
	}

	upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("id", "zz")}
	upd.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	upd.PutColumn("v", "x")
	_, err := c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd})
	wantCode(t, err, "OTSConditionCheckFail", 403)
	upd.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
	_, err = c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd})
	if oe := wantCode(t, err, "OTSParameterInvalid", 400); oe.Message != "Invalid condition: EXPECT_NOT_EXIST while updating row." {
		t.Errorf("message = %q", oe.Message)
	}
	del := &tablestore.DeleteRowChange{TableName: "t", PrimaryKey: pk("id", "zz")}
	del.SetCondition(tablestore.RowExistenceExpectation_EXPECT_EXIST)
	_, err = c.DeleteRow(&tablestore.DeleteRowRequest{DeleteRowChange: del})
	wantCode(t, err, "OTSConditionCheckFail", 403)
}

func TestPrimaryKeyValidation(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"a", tablestore.PrimaryKeyType_STRING}, col{"b", tablestore.PrimaryKeyType_INTEGER})
	tests := []struct {
		name    string
		key     *tablestore.PrimaryKey
		code    string
		message string
	}{
		{"too few", pk("a", "x"), "OTSInvalidPK", "Validate PK size fail. Input: 1, Meta: 2."},
		{"too many", pk("a", "x", "b", int64(1), "c", int64(1)), "OTSInvalidPK", "Validate PK size fail. Input: 3, Meta: 2."},
		{"wrong name", pk("a", "x", "z", int64(1)), "OTSInvalidPK", "Validate PK name fail. Input: z, Meta: b."},
		{"wrong order", pk("b", int64(1), "a", "x"), "OTSInvalidPK", "Validate PK name fail. Input: b, Meta: a."},
		{"wrong type", pk("a", int64(1), "b", int64(1)), "OTSInvalidPK", "Validate PK type fail. Input: VT_INTEGER, Meta: VT_STRING."},
		{"too long", pk("a", strings.Repeat("x", 1025), "b", int64(1)), "OTSParameterInvalid",
			"The length of primary key column: 'a' exceeds the MaxLength:1024 with CurrentLength:1025."},
		{"inf outside range", pk("a", tablestore.MinValue, "b", int64(1)), "OTSInvalidPK", "Validate PK type fail. Input: VT_INF_MIN, Meta: VT_STRING."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
				TableName: "t", PrimaryKey: tc.key, MaxVersion: 1}})
			if oe := wantCode(t, err, tc.code, 400); oe.Message != tc.message {
				t.Errorf("GetRow message = %q, want %q", oe.Message, tc.message)
			}
			if tc.name == "inf outside range" {
				return // the SDK cannot serialize INF in a put
			}
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: tc.key}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			ch.AddColumn("v", "x")
			_, err = c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
			wantCode(t, err, tc.code, 400)
		})
	}
	// A 1024-byte key is fine.
	putRow(t, c, "t", pk("a", strings.Repeat("x", 1024), "b", int64(1)), "v", "x")
}

func TestLimits(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"id", tablestore.PrimaryKeyType_INTEGER})
	manyCols := make([]string, 129)
	for i := range manyCols {
		manyCols[i] = fmt.Sprintf("c%d", i)
	}
	batchWrite := func(n int) error {
		req := &tablestore.BatchWriteRowRequest{}
		for i := range n {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(i))}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			ch.AddColumn("v", int64(i))
			req.AddRowChange(ch)
		}
		_, err := c.BatchWriteRow(req)
		return err
	}
	batchGet := func(n int) error {
		q := &tablestore.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1}
		for i := range n {
			q.AddRow(pk("id", int64(i)))
		}
		_, err := c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{q}})
		return err
	}
	tests := []struct {
		name    string
		call    func() error
		message string
	}{
		{"batch write 200 ok", func() error { return batchWrite(200) }, ""},
		{"batch write 201", func() error { return batchWrite(201) }, "Rows count exceeds the upper limit: 200."},
		{"batch get 100 ok", func() error { return batchGet(100) }, ""},
		{"batch get 101", func() error { return batchGet(101) }, "Rows count exceeds the upper limit: 100."},
		{"batch write 4 MB", func() error {
			req := &tablestore.BatchWriteRowRequest{}
			for i := range 3 {
				ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(i))}
				ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
				ch.AddColumn("v", strings.Repeat("x", 1500<<10))
				req.AddRowChange(ch)
			}
			_, err := c.BatchWriteRow(req)
			return err
		}, "The total data size of BatchWriteRow request exceeds the limit"},
		{"attribute 2 MB ok", func() error {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(1))}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			ch.AddColumn("v", strings.Repeat("x", 2<<20))
			_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
			return err
		}, ""},
		{"attribute over 2 MB", func() error {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(1))}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			ch.AddColumn("v", []byte(strings.Repeat("x", 2<<20+1)))
			_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
			return err
		}, "The length of attribute column: 'v' exceeds the MaxLength:2097152 with CurrentLength:2097153."},
		{"columns_to_get 129", func() error {
			_, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
				TableName: "t", PrimaryKey: pk("id", int64(1)), MaxVersion: 1, ColumnsToGet: manyCols}})
			return err
		}, "The number of columns from the request exceeds the limit, limit count: 128, column count: 129."},
		{"bad column name", func() error {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(1))}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			ch.AddColumn("1st", "x")
			_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
			return err
		}, "Invalid column name: '1st'."},
		{"column named like pk", func() error {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(1))}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			ch.AddColumn("id", "x")
			_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
			return err
		}, "Duplicated attribute column name with primary key column: 'id'."},
		{"timestamp outside deviation", func() error {
			ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", int64(1))}
			ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
			ch.AddColumnWithTimestamp("v", "x", 1000)
			_, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
			return err
		}, "Invalid timestamp. Cell:'v'."},
		{"no version condition", func() error {
			_, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
				TableName: "t", StartPrimaryKey: pk("id", tablestore.MinValue), EndPrimaryKey: pk("id", tablestore.MaxValue),
				TimeRange: &tablestore.TimeRange{Start: 5, End: 5}}})
			return err
		}, "Invalid time range"},
		{"missing table", func() error {
			_, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
				TableName: "nope", PrimaryKey: pk("id", int64(1)), MaxVersion: 1}})
			return err
		}, "Requested table does not exist."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if tc.message == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			code, status := "OTSParameterInvalid", 400
			if tc.name == "missing table" {
				code, status = "OTSObjectNotExist", 404
			}
			if oe := wantCode(t, err, code, status); !strings.HasPrefix(oe.Message, tc.message) {
				t.Errorf("message = %q, want prefix %q", oe.Message, tc.message)
			}
		})
	}
}

func TestAutoIncrement(t *testing.T) {
	_, c := startServer(t)
	meta := &tablestore.TableMeta{TableName: "t"}
	meta.AddPrimaryKeyColumn("part", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumnOption("seq", tablestore.PrimaryKeyType_INTEGER, tablestore.AUTO_INCREMENT)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
		TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1}, ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for range 3 {
		key := &tablestore.PrimaryKey{}
		key.AddPrimaryKeyColumn("part", "p")
		key.AddPrimaryKeyColumnWithAutoIncrement("seq")
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: key}
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		ch.AddColumn("v", "x")
		ch.SetReturnPk()
		resp, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, resp.PrimaryKey.PrimaryKeys[1].Value.(int64))
	}
	if !slices.IsSorted(seqs) || seqs[0] == seqs[1] || seqs[1] == seqs[2] {
		t.Errorf("sequence = %v", seqs)
	}
	if r := getRow(t, c, "t", pk("part", "p", "seq", seqs[1]), 1); len(r.Columns) != 1 {
		t.Errorf("row at generated key: %+v", r)
	}
}

func TestConcurrentClients(t *testing.T) {
	srv, c := startServer(t)
	createTable(t, c, "t", 1, col{"w", tablestore.PrimaryKeyType_INTEGER}, col{"i", tablestore.PrimaryKeyType_INTEGER})
	const workers, perWorker = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				upd := &tablestore.UpdateRowChange{TableName: "t", PrimaryKey: pk("w", int64(0), "i", int64(0))}
				upd.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
				upd.IncrementColumn("count", 1)
				if _, err := c.UpdateRow(&tablestore.UpdateRowRequest{UpdateRowChange: upd}); err != nil {
					t.Error(err)
					return
				}
				ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("w", int64(w+1), "i", int64(i))}
				ch.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
				ch.AddColumn("v", int64(i))
				if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: ch}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	r := getRow(t, c, "t", pk("w", int64(0), "i", int64(0)), 1)
	if len(r.Columns) != 1 || r.Columns[0].Value != int64(workers*perWorker) {
		t.Errorf("counter = %d columns, first %+v; want %d", len(r.Columns), *r.Columns[0], workers*perWorker)
	}
	keys, _ := rangeKeys(t, c, "t", tablestore.FORWARD, pk("w", int64(1), "i", tablestore.MinValue), pk("w", tablestore.MaxValue, "i", tablestore.MaxValue), 0)
	if len(keys) != workers*perWorker {
		t.Errorf("rows = %d", len(keys))
	}
	if tot := srv.Stats().Total(); tot.Failures != 0 {
		t.Errorf("failures = %d", tot.Failures)
	}
}
