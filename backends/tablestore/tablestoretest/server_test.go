package tablestoretest_test

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

func TestTableLifecycle(t *testing.T) {
	_, c := startServer(t)
	meta := &tablestore.TableMeta{TableName: "orders"}
	meta.AddPrimaryKeyColumn("salt", tablestore.PrimaryKeyType_BINARY)
	meta.AddPrimaryKeyColumn("seller", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumn("card", tablestore.PrimaryKeyType_INTEGER)
	meta.AddPrimaryKeyColumnOption("seq", tablestore.PrimaryKeyType_INTEGER, tablestore.AUTO_INCREMENT)
	meta.AddDefinedColumn("amount", tablestore.DefinedColumn_INTEGER)
	_, err := c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta:          meta,
		TableOption:        &tablestore.TableOption{TimeToAlive: 86400, MaxVersion: 3, DeviationCellVersionInSec: 600},
		ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 5, Writecap: 7},
		StreamSpec:         &tablestore.StreamSpecification{EnableStream: false},
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	createTable(t, c, "alpha", 1, col{"id", tablestore.PrimaryKeyType_STRING})

	d, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "orders"})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	var names []string
	for _, s := range d.TableMeta.SchemaEntry {
		names = append(names, *s.Name)
	}
	if got := strings.Join(names, ","); got != "salt,seller,card,seq" {
		t.Errorf("schema = %s", got)
	}
	if o := d.TableMeta.SchemaEntry[3].Option; o == nil || *o != tablestore.AUTO_INCREMENT {
		t.Errorf("auto-increment option lost: %v", o)
	}
	if *d.TableMeta.SchemaEntry[1].Type != tablestore.PrimaryKeyType_STRING {
		t.Errorf("type = %v", *d.TableMeta.SchemaEntry[1].Type)
	}
	if *d.TableOption != (tablestore.TableOption{TimeToAlive: 86400, MaxVersion: 3, DeviationCellVersionInSec: 600}) {
		t.Errorf("options = %+v", *d.TableOption)
	}
	if *d.ReservedThroughput != (tablestore.ReservedThroughput{Readcap: 5, Writecap: 7}) {
		t.Errorf("throughput = %+v", *d.ReservedThroughput)
	}
	if d.StreamDetails.EnableStream {
		t.Errorf("stream = %+v, want off", *d.StreamDetails)
	}

	u, err := c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "orders",
		TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 5}})
	if err != nil {
		t.Fatalf("UpdateTable: %v", err)
	}
	if u.TableOption.MaxVersion != 5 || u.TableOption.TimeToAlive != -1 || u.TableOption.DeviationCellVersionInSec != 600 {
		t.Errorf("updated options = %+v", *u.TableOption)
	}

	l, err := c.ListTable()
	if err != nil {
		t.Fatalf("ListTable: %v", err)
	}
	if !slices.Equal(l.TableNames, []string{"alpha", "orders"}) {
		t.Errorf("tables = %v", l.TableNames)
	}
	if _, err := c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "orders"}); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
	_, err = c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "orders"})
	wantCode(t, err, "OTSObjectNotExist", 404)
	_, err = c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "orders"})
	wantCode(t, err, "OTSObjectNotExist", 404)

	// The default deviation is the service's one day.
	d, err = c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "alpha"})
	if err != nil || d.TableOption.DeviationCellVersionInSec != 86400 {
		t.Errorf("default deviation = %+v, %v", d.TableOption, err)
	}
}

func TestCreateTableErrors(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "exists", 1, col{"id", tablestore.PrimaryKeyType_STRING})
	five := []col{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}}
	tests := []struct {
		name    string
		table   string
		cols    []col
		ttl     int
		maxVer  int
		code    string
		status  int
		message string
	}{
		{"already exists", "exists", []col{{"id", tablestore.PrimaryKeyType_STRING}}, -1, 1, "OTSObjectAlreadyExist", 409, "Requested table already exists."},
		{"bad table name", "9lives", []col{{"id", 1}}, -1, 1, "OTSParameterInvalid", 400, "Invalid table name: '9lives'."},
		{"bad table name chars", "a-b", []col{{"id", 1}}, -1, 1, "OTSParameterInvalid", 400, "Invalid table name: 'a-b'."},
		{"five pk columns", "t5", five, -1, 1, "OTSParameterInvalid", 400, "The number of primary key columns must be in range: [1, 4]."},
		{"duplicate pk", "dup", []col{{"a", 1}, {"a", 2}}, -1, 1, "OTSParameterInvalid", 400, "Duplicated primary key name: 'a'."},
		{"bad pk name", "bn", []col{{"a b", 1}}, -1, 1, "OTSParameterInvalid", 400, "Invalid column name: 'a b'."},
		{"bad pk type", "bt", []col{{"a", 4}}, -1, 1, "OTSParameterInvalid", 400, ""},
		{"zero ttl", "zt", []col{{"a", 1}}, 0, 1, "OTSParameterInvalid", 400, "TimeToLive cannot be 0 or less than -1."},
		{"zero versions", "zv", []col{{"a", 1}}, -1, 0, "OTSParameterInvalid", 400, "The maximum versions cannot be less than or equal to 0."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			meta := &tablestore.TableMeta{TableName: tc.table}
			for _, k := range tc.cols {
				meta.AddPrimaryKeyColumn(k.name, k.typ)
			}
			_, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
				TableOption:        &tablestore.TableOption{TimeToAlive: tc.ttl, MaxVersion: tc.maxVer},
				ReservedThroughput: &tablestore.ReservedThroughput{}})
			oe := wantCode(t, err, tc.code, tc.status)
			if tc.message != "" && oe.Message != tc.message {
				t.Errorf("message = %q, want %q", oe.Message, tc.message)
			}
		})
	}
}

func TestAuthentication(t *testing.T) {
	srv := tablestoretest.Start(t, tablestoretest.WithCredentials("my-id", "my-secret"),
		tablestoretest.WithInstance("inst"), tablestoretest.WithSecurityToken("sts"))
	good := tablestore.NewClientWithConfig(srv.Endpoint(), "inst", "my-id", "my-secret", "sts", noRetry())
	if _, err := good.ListTable(); err != nil {
		t.Fatalf("good credentials rejected: %v", err)
	}
	tests := []struct {
		name, instance, id, secret, token, message string
	}{
		{"wrong secret", "inst", "my-id", "nope", "sts", "Signature mismatch."},
		{"wrong key id", "inst", "other", "my-secret", "sts", "The AccessKeyID does not exist."},
		{"wrong instance", "other", "my-id", "my-secret", "sts", "The instance is not found."},
		{"missing token", "inst", "my-id", "my-secret", "", "The security token is invalid."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tablestore.NewClientWithConfig(srv.Endpoint(), tc.instance, tc.id, tc.secret, tc.token, noRetry())
			_, err := c.ListTable()
			oe := wantCode(t, err, "OTSAuthFailed", 403)
			if oe.Message != tc.message {
				t.Errorf("message = %q, want %q", oe.Message, tc.message)
			}
			if oe.RequestId == "" {
				t.Error("no request id")
			}
		})
	}
	// OTSAuthFailed is not retryable: a default client fails after one request.
	srv.ResetStats()
	bad := tablestore.NewClientWithConfig(srv.Endpoint(), "inst", "my-id", "nope", "sts", nil)
	_, err := bad.ListTable()
	wantCode(t, err, "OTSAuthFailed", 403)
	if n := srv.Stats()["ListTable"].Requests; n != 1 {
		t.Errorf("requests = %d, want 1", n)
	}
}

// TestRawHTTPValidation sends hand-made requests for what the SDK never gets wrong.
func TestRawHTTPValidation(t *testing.T) {
	srv := tablestoretest.Start(t)
	body, _ := proto.Marshal(protoadapt.MessageV2Of(&otsprotocol.DescribeTableRequest{TableName: proto.String("x")}))
	sum := md5.Sum(body)
	headers := func() http.Header {
		h := http.Header{}
		h.Set("x-ots-date", time.Now().UTC().Format("2006-01-02T15:04:05.123Z"))
		h.Set("x-ots-apiversion", "2015-12-31")
		h.Set("x-ots-accesskeyid", srv.AccessKeyID())
		h.Set("x-ots-instancename", srv.Instance())
		h.Set("x-ots-contentmd5", base64.StdEncoding.EncodeToString(sum[:]))
		h.Set("x-ots-signature", "bogus")
		return h
	}
	tests := []struct {
		name    string
		method  string
		path    string
		edit    func(http.Header)
		body    []byte
		status  int
		code    string
		message string
	}{
		{"GET", http.MethodGet, "/DescribeTable", nil, body, 405, "OTSMethodNotAllowed", ""},
		{"unknown op", http.MethodPost, "/Frobnicate", nil, body, 400, "OTSParameterInvalid", "Unsupported operation: 'Frobnicate'."},
		{"unimplemented op", http.MethodPost, "/CreateSearchIndex", nil, body, 400, "OTSParameterInvalid", ""},
		{"missing date", http.MethodPost, "/DescribeTable", func(h http.Header) { h.Del("x-ots-date") }, body, 400, "OTSParameterInvalid", "Missing header: 'x-ots-date'."},
		{"missing signature", http.MethodPost, "/DescribeTable", func(h http.Header) { h.Del("x-ots-signature") }, body, 400, "OTSParameterInvalid", "Missing header: 'x-ots-signature'."},
		{"bad date", http.MethodPost, "/DescribeTable", func(h http.Header) { h.Set("x-ots-date", "yesterday") }, body, 400, "OTSParameterInvalid", ""},
		{"stale date", http.MethodPost, "/DescribeTable", func(h http.Header) {
			h.Set("x-ots-date", time.Now().Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.123Z"))
		}, body, 403, "OTSAuthFailed", ""},
		{"md5 mismatch", http.MethodPost, "/DescribeTable", nil, append(bytes.Clone(body), 0), 403, "OTSAuthFailed",
			"Mismatch between MD5 value of request body and x-ots-contentmd5 in header."},
		{"bad signature", http.MethodPost, "/DescribeTable", nil, body, 403, "OTSAuthFailed", "Signature mismatch."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.Endpoint()+tc.path, bytes.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = headers()
			if tc.edit != nil {
				tc.edit(req.Header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			var e otsprotocol.Error
			if err := proto.Unmarshal(buf.Bytes(), protoadapt.MessageV2Of(&e)); err != nil {
				t.Fatalf("error body: %v", err)
			}
			if resp.StatusCode != tc.status || e.GetCode() != tc.code {
				t.Errorf("got %d %s %q, want %d %s", resp.StatusCode, e.GetCode(), e.GetMessage(), tc.status, tc.code)
			}
			if tc.message != "" && e.GetMessage() != tc.message {
				t.Errorf("message = %q, want %q", e.GetMessage(), tc.message)
			}
			if resp.Header.Get("x-ots-requestid") == "" {
				t.Error("no x-ots-requestid")
			}
		})
	}
}

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

func TestOrdering(t *testing.T) {
	_, c := startServer(t)
	tests := []struct {
		name string
		typ  tablestore.PrimaryKeyType
		vals []any // in the service's order
	}{
		{"integer", tablestore.PrimaryKeyType_INTEGER, []any{int64(-1 << 63), int64(-10), int64(-1), int64(0), int64(2), int64(10), int64(1<<63 - 1)}},
		{"string", tablestore.PrimaryKeyType_STRING, []any{"", "A", "Z", "a", "a\x00", "ab", "b", "é"}},
		{"binary", tablestore.PrimaryKeyType_BINARY, []any{[]byte{}, []byte{0}, []byte{0, 0}, []byte{1}, []byte{0x7f}, []byte{0x80}, []byte{0xff}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			createTable(t, c, "t_"+tc.name, 1, col{"k", tc.typ})
			// Insert in a scrambled order so the tree, not insertion, sorts.
			for j := range tc.vals {
				i := (j * 5) % len(tc.vals)
				putRow(t, c, "t_"+tc.name, pk("k", tc.vals[i]), "v", int64(i))
			}
			var want []string
			for _, v := range tc.vals {
				want = append(want, fmt.Sprint(v))
			}
			got, _ := rangeKeys(t, c, "t_"+tc.name, tablestore.FORWARD, pk("k", tablestore.MinValue), pk("k", tablestore.MaxValue), 0)
			if !slices.Equal(got, want) {
				t.Errorf("forward = %q\nwant      %q", got, want)
			}
			got, _ = rangeKeys(t, c, "t_"+tc.name, tablestore.BACKWARD, pk("k", tablestore.MaxValue), pk("k", tablestore.MinValue), 0)
			slices.Reverse(want)
			if !slices.Equal(got, want) {
				t.Errorf("backward = %q\nwant       %q", got, want)
			}
		})
	}
}

func TestGetRangeBounds(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"a", tablestore.PrimaryKeyType_STRING}, col{"b", tablestore.PrimaryKeyType_INTEGER})
	for _, a := range []string{"A", "B", "C"} {
		for _, b := range []int64{1, 2} {
			putRow(t, c, "t", pk("a", a, "b", b), "v", a)
		}
	}
	min, max := tablestore.MinValue, tablestore.MaxValue
	tests := []struct {
		name       string
		dir        tablestore.Direction
		start, end *tablestore.PrimaryKey
		limit      int32
		want       string
	}{
		{"all", tablestore.FORWARD, pk("a", min, "b", min), pk("a", max, "b", max), 0, "A/1 A/2 B/1 B/2 C/1 C/2"},
		{"start inclusive end exclusive", tablestore.FORWARD, pk("a", "A", "b", int64(2)), pk("a", "C", "b", int64(1)), 0, "A/2 B/1 B/2"},
		{"prefix with INF", tablestore.FORWARD, pk("a", "B", "b", min), pk("a", "B", "b", max), 0, "B/1 B/2"},
		{"after prefix", tablestore.FORWARD, pk("a", "A", "b", max), pk("a", "C", "b", min), 0, "B/1 B/2"},
		{"backward", tablestore.BACKWARD, pk("a", "C", "b", int64(1)), pk("a", "A", "b", int64(1)), 0, "C/1 B/2 B/1 A/2"},
		{"backward INF", tablestore.BACKWARD, pk("a", max, "b", max), pk("a", min, "b", min), 0, "C/2 C/1 B/2 B/1 A/2 A/1"},
		{"limit pages", tablestore.FORWARD, pk("a", min, "b", min), pk("a", max, "b", max), 4, "A/1 A/2 B/1 B/2 C/1 C/2"},
		{"empty", tablestore.FORWARD, pk("a", "AA", "b", min), pk("a", "AB", "b", min), 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := rangeKeys(t, c, "t", tc.dir, tc.start, tc.end, tc.limit)
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("got %q, want %q", s, tc.want)
			}
		})
	}

	resp, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: pk("a", min, "b", min), EndPrimaryKey: pk("a", max, "b", max), MaxVersion: 1, Limit: 2,
		ColumnsToGet: []string{"v"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Rows) != 2 || resp.NextStartPrimaryKey == nil || resp.NextStartPrimaryKey.PrimaryKeys[0].Value != "B" {
		t.Errorf("limit 2: %d rows, next %v", len(resp.Rows), resp.NextStartPrimaryKey)
	}

	errs := []struct {
		name       string
		dir        tablestore.Direction
		start, end *tablestore.PrimaryKey
		limit      int32
		message    string
	}{
		{"forward equal", tablestore.FORWARD, pk("a", "A", "b", int64(1)), pk("a", "A", "b", int64(1)), 0, "Begin key must less than end key in FORWARD."},
		{"forward reversed", tablestore.FORWARD, pk("a", "B", "b", min), pk("a", "A", "b", min), 0, "Begin key must less than end key in FORWARD."},
		{"backward reversed", tablestore.BACKWARD, pk("a", "A", "b", min), pk("a", "B", "b", min), 0, "Begin key must more than end key in BACKWARD."},
		{"negative limit", tablestore.FORWARD, pk("a", min, "b", min), pk("a", max, "b", max), -1, "The limit must be greater than 0."},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
				TableName: "t", StartPrimaryKey: tc.start, EndPrimaryKey: tc.end, Direction: tc.dir, MaxVersion: 1, Limit: tc.limit}})
			if oe := wantCode(t, err, "OTSParameterInvalid", 400); oe.Message != tc.message {
				t.Errorf("message = %q, want %q", oe.Message, tc.message)
			}
		})
	}
}

func TestGetRangeFilter(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"k", tablestore.PrimaryKeyType_INTEGER})
	for i := range int64(10) {
		putRow(t, c, "t", pk("k", i), "v", i%3, "w", "x")
	}
	f := tablestore.NewSingleColumnCondition("v", tablestore.CT_EQUAL, int64(0))
	resp, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "t", StartPrimaryKey: pk("k", tablestore.MinValue), EndPrimaryKey: pk("k", tablestore.MaxValue),
		MaxVersion: 1, Filter: f, ColumnsToGet: []string{"w"}}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	for _, r := range resp.Rows {
		keys = append(keys, r.PrimaryKey.PrimaryKeys[0].Value.(int64))
		if len(r.Columns) != 1 || r.Columns[0].ColumnName != "w" {
			t.Errorf("columns = %v", r.Columns)
		}
	}
	if !slices.Equal(keys, []int64{0, 3, 6, 9}) {
		t.Errorf("filtered keys = %v", keys)
	}
}

func TestPagination(t *testing.T) {
	tests := []struct {
		name     string
		rows     int
		opts     []tablestoretest.Option
		limit    int32
		minPages int
	}{
		{"small row cap", 53, []tablestoretest.Option{tablestoretest.WithPageCap(7, 0)}, 0, 8},
		{"small byte cap", 40, []tablestoretest.Option{tablestoretest.WithPageCap(0, 200)}, 0, 5},
		{"limit below cap", 30, []tablestoretest.Option{tablestoretest.WithPageCap(7, 0)}, 5, 6},
		{"real cap", 5201, nil, 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, c := startServer(t, tc.opts...)
			createTable(t, c, "t", 1, col{"k", tablestore.PrimaryKeyType_INTEGER})
			for start := 0; start < tc.rows; start += 200 {
				req := &tablestore.BatchWriteRowRequest{}
				for i := start; i < min(start+200, tc.rows); i++ {
					ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("k", int64(i))}
					ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
					ch.AddColumn("payload", "0123456789")
					req.AddRowChange(ch)
				}
				if _, err := c.BatchWriteRow(req); err != nil {
					t.Fatal(err)
				}
			}
			srv.ResetStats()
			keys, pages := rangeKeys(t, c, "t", tablestore.FORWARD, pk("k", tablestore.MinValue), pk("k", tablestore.MaxValue), tc.limit)
			if len(keys) != tc.rows {
				t.Fatalf("read %d rows, want %d", len(keys), tc.rows)
			}
			for i, k := range keys {
				if k != fmt.Sprint(i) {
					t.Fatalf("row %d = %s", i, k)
				}
			}
			if pages < tc.minPages {
				t.Errorf("pages = %d, want >= %d", pages, tc.minPages)
			}
			st := srv.Stats()["GetRange"]
			if st.Requests != pages || st.RowsRead != tc.rows {
				t.Errorf("stats = %+v, want %d requests, %d rows", st, pages, tc.rows)
			}
			if tc.name == "real cap" {
				resp, err := c.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
					TableName: "t", StartPrimaryKey: pk("k", tablestore.MinValue), EndPrimaryKey: pk("k", tablestore.MaxValue), MaxVersion: 1}})
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.Rows) != 5000 || resp.NextStartPrimaryKey.PrimaryKeys[0].Value != int64(5000) {
					t.Errorf("first page: %d rows, next %v", len(resp.Rows), resp.NextStartPrimaryKey)
				}
			}
		})
	}
}

func TestBatchOperations(t *testing.T) {
	srv, c := startServer(t)
	createTable(t, c, "a", 1, col{"id", tablestore.PrimaryKeyType_INTEGER})
	createTable(t, c, "b", 1, col{"id", tablestore.PrimaryKeyType_STRING})
	putRow(t, c, "a", pk("id", int64(2)), "v", "old")

	req := &tablestore.BatchWriteRowRequest{}
	for i := range int64(4) {
		ch := &tablestore.PutRowChange{TableName: "a", PrimaryKey: pk("id", i)}
		ch.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST) // row 2 exists: fails
		ch.AddColumn("v", fmt.Sprint(i))
		req.AddRowChange(ch)
	}
	upd := &tablestore.UpdateRowChange{TableName: "b", PrimaryKey: pk("id", "x")}
	upd.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	upd.PutColumn("v", "y")
	req.AddRowChange(upd)
	bad := &tablestore.PutRowChange{TableName: "b", PrimaryKey: pk("id", int64(1))} // wrong pk type
	bad.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	bad.AddColumn("v", "z")
	req.AddRowChange(bad)
	del := &tablestore.DeleteRowChange{TableName: "b", PrimaryKey: pk("id", "x")}
	del.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	req.AddRowChange(del)
	ghost := &tablestore.PutRowChange{TableName: "ghost", PrimaryKey: pk("id", int64(1))}
	ghost.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	ghost.AddColumn("v", "z")
	req.AddRowChange(ghost)

	resp, err := c.BatchWriteRow(req)
	if err != nil {
		t.Fatalf("BatchWriteRow: %v", err)
	}
	summary := func(rs []tablestore.RowResult) string {
		var out []string
		for _, r := range rs {
			if r.IsSucceed {
				out = append(out, fmt.Sprintf("%d:ok", r.Index))
			} else {
				out = append(out, fmt.Sprintf("%d:%s", r.Index, r.Error.Code))
			}
		}
		return strings.Join(out, " ")
	}
	if got := summary(resp.TableToRowsResult["a"]); got != "0:ok 1:ok 2:OTSConditionCheckFail 3:ok" {
		t.Errorf("table a = %s", got)
	}
	if got := summary(resp.TableToRowsResult["b"]); got != "0:ok 1:OTSInvalidPK 2:ok" {
		t.Errorf("table b = %s", got)
	}
	if got := summary(resp.TableToRowsResult["ghost"]); got != "0:OTSObjectNotExist" {
		t.Errorf("table ghost = %s", got)
	}
	if r := getRow(t, c, "a", pk("id", int64(2)), 1); r.Columns[0].Value != "old" {
		t.Errorf("failed row was applied: %v", r.Columns)
	}

	bg := &tablestore.BatchGetRowRequest{}
	qa := &tablestore.MultiRowQueryCriteria{TableName: "a", MaxVersion: 1}
	for _, i := range []int64{3, 9, 0} {
		qa.AddRow(pk("id", i))
	}
	qa.AddRow(pk("id", "wrong"))
	qb := &tablestore.MultiRowQueryCriteria{TableName: "ghost", MaxVersion: 1}
	qb.AddRow(pk("id", int64(1)))
	bg.MultiRowQueryCriteria = append(bg.MultiRowQueryCriteria, qa, qb)
	gr, err := c.BatchGetRow(bg)
	if err != nil {
		t.Fatalf("BatchGetRow: %v", err)
	}
	ra := gr.TableToRowsResult["a"]
	if len(ra) != 4 || !ra[0].IsSucceed || ra[0].Columns[0].Value != "3" || !ra[1].IsSucceed || len(ra[1].PrimaryKey.PrimaryKeys) != 0 ||
		ra[2].Columns[0].Value != "0" || ra[3].IsSucceed || ra[3].Error.Code != "OTSInvalidPK" {
		t.Errorf("batch get a = %+v", ra)
	}
	if rg := gr.TableToRowsResult["ghost"]; len(rg) != 1 || rg[0].Error.Code != "OTSObjectNotExist" {
		t.Errorf("batch get ghost = %+v", rg)
	}
	st := srv.Stats()
	if st["BatchGetRow"].RowsRead != 2 || st["BatchGetRow"].RowErrors != 2 || st["BatchWriteRow"].RowsWritten != 5 || st["BatchWriteRow"].RowErrors != 3 {
		t.Errorf("stats = %+v", st)
	}

	// Request-level errors.
	_, err = c.BatchWriteRow(&tablestore.BatchWriteRowRequest{})
	if oe := wantCode(t, err, "OTSParameterInvalid", 400); oe.Message != "No row is specified in BatchWriteRow." {
		t.Errorf("message = %q", oe.Message)
	}
	_, err = c.BatchGetRow(&tablestore.BatchGetRowRequest{})
	wantCode(t, err, "OTSParameterInvalid", 400)
	dup := &tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{qa, qa}}
	_, err = c.BatchGetRow(dup)
	if oe := wantCode(t, err, "OTSParameterInvalid", 400); oe.Message != "Duplicated table name: 'a'." {
		t.Errorf("message = %q", oe.Message)
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

func TestComputeSplitPoints(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"a", tablestore.PrimaryKeyType_STRING}, col{"b", tablestore.PrimaryKeyType_INTEGER})
	resp, err := c.ComputeSplitPointsBySize(&tablestore.ComputeSplitPointsBySizeRequest{TableName: "t", SplitSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Splits) != 1 || resp.Splits[0].LowerBound.PrimaryKeys[0].PrimaryKeyOption != tablestore.MIN {
		t.Errorf("splits = %+v", resp.Splits)
	}
}

func TestInjectedErrors(t *testing.T) {
	tests := []struct {
		code      string
		status    int
		retryable bool // by the SDK's default policy for GetRow
	}{
		{"OTSServerBusy", 503, true},
		{"OTSPartitionUnavailable", 503, true},
		{"OTSRowOperationConflict", 409, true},
		{"OTSTableNotReady", 404, true},
		{"OTSNotEnoughCapacityUnit", 403, true},
		{"OTSQuotaExhausted", 403, true}, // with "Too frequent table operations."
		{"OTSTimeout", 503, true},        // GetRow is idempotent
		{"OTSInternalServerError", 500, true},
		{"OTSServerUnavailable", 503, true},
		{"OTSCapacityUnitExhausted", 403, false},
		{"OTSConditionCheckFail", 403, false},
		{"OTSParameterInvalid", 400, false},
		{"OTSObjectNotExist", 404, false},
	}
	srv := tablestoretest.Start(t)
	plain := srv.NewClient(noRetry())
	retrying := srv.NewClient(nil) // the SDK's default retry policy
	createTable(t, plain, "t", 1, col{"id", tablestore.PrimaryKeyType_STRING})
	putRow(t, plain, "t", pk("id", "x"), "v", "1")
	for _, tc := range tests {
		t.Run(tc.code, func(t *testing.T) {
			srv.FailNext("GetRow", tc.code, 1)
			_, err := plain.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
				TableName: "t", PrimaryKey: pk("id", "x"), MaxVersion: 1}})
			oe := wantCode(t, err, tc.code, tc.status)
			if oe.Message != tablestoretest.MessageForCode(tc.code) {
				t.Errorf("message = %q", oe.Message)
			}

			srv.ResetStats()
			srv.FailNext("GetRow", tc.code, 1)
			_, err = retrying.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
				TableName: "t", PrimaryKey: pk("id", "x"), MaxVersion: 1}})
			reqs := srv.Stats()["GetRow"].Requests
			if tc.retryable {
				if err != nil || reqs != 2 {
					t.Errorf("retryable: err %v after %d requests, want success after 2", err, reqs)
				}
			} else {
				wantCode(t, err, tc.code, tc.status)
				if reqs != 1 {
					t.Errorf("non-retryable: %d requests, want 1", reqs)
				}
			}
			srv.ClearFaults()
		})
	}

	t.Run("timeout not retried for writes", func(t *testing.T) {
		srv.ResetStats()
		srv.FailNext("PutRow", "OTSTimeout", 1)
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", "y")}
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		ch.AddColumn("v", "1")
		_, err := retrying.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		wantCode(t, err, "OTSTimeout", 503)
		if n := srv.Stats()["PutRow"].Requests; n != 1 {
			t.Errorf("requests = %d", n)
		}
	})

	t.Run("retries exhausted", func(t *testing.T) {
		srv.ResetStats()
		cfg := tablestore.NewDefaultTableStoreConfig()
		cfg.RetryTimes = 3
		c := srv.NewClient(cfg)
		srv.FailNext(tablestoretest.AnyOp, "OTSServerBusy", 100)
		defer srv.ClearFaults()
		_, err := c.ListTable()
		wantCode(t, err, "OTSServerBusy", 503)
		if n := srv.Stats()["ListTable"].Requests; n != 4 {
			t.Errorf("requests = %d, want 1 + 3 retries", n)
		}
	})

	t.Run("after apply", func(t *testing.T) {
		srv.InjectErrors(func(op string, req protoadapt.MessageV1) *tablestoretest.Fault {
			if r, ok := req.(*otsprotocol.PutRowRequest); ok && r.GetTableName() == "t" {
				return &tablestoretest.Fault{Code: "OTSTimeout", AfterApply: true}
			}
			return nil
		})
		defer srv.InjectErrors(nil)
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", "applied")}
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		ch.AddColumn("v", "1")
		_, err := plain.PutRow(&tablestore.PutRowRequest{PutRowChange: ch})
		wantCode(t, err, "OTSTimeout", 503)
		if r := getRow(t, plain, "t", pk("id", "applied"), 1); len(r.Columns) != 1 {
			t.Errorf("write not applied: %+v", r)
		}
	})

	t.Run("custom fault", func(t *testing.T) {
		srv.InjectErrors(func(op string, _ protoadapt.MessageV1) *tablestoretest.Fault {
			return &tablestoretest.Fault{Code: "OTSCustom", Message: "boom", Status: 418}
		})
		defer srv.InjectErrors(nil)
		_, err := plain.ListTable()
		if oe := wantCode(t, err, "OTSCustom", 418); oe.Message != "boom" {
			t.Errorf("message = %q", oe.Message)
		}
	})

	t.Run("random is reproducible", func(t *testing.T) {
		run := func() []bool {
			srv.FailRandomly(42, 0.5, "OTSParameterInvalid")
			defer srv.FailRandomly(0, 0)
			var out []bool
			for range 20 {
				_, err := plain.ListTable()
				out = append(out, err != nil)
			}
			return out
		}
		a, b := run(), run()
		if !slices.Equal(a, b) || !slices.Contains(a, true) || !slices.Contains(a, false) {
			t.Errorf("runs = %v / %v", a, b)
		}
	})
}

func TestBatchRowFaults(t *testing.T) {
	srv, c := startServer(t)
	createTable(t, c, "t", 1, col{"id", tablestore.PrimaryKeyType_INTEGER})
	srv.InjectRowErrors(func(op, table string, index int) *tablestoretest.Fault {
		if index%2 == 1 {
			return &tablestoretest.Fault{Code: "OTSServerBusy"}
		}
		return nil
	})
	req := &tablestore.BatchWriteRowRequest{}
	for i := range int64(6) {
		ch := &tablestore.PutRowChange{TableName: "t", PrimaryKey: pk("id", i)}
		ch.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
		ch.AddColumn("v", i)
		req.AddRowChange(ch)
	}
	resp, err := c.BatchWriteRow(req)
	if err != nil {
		t.Fatal(err)
	}
	var failed []int32
	for _, r := range resp.TableToRowsResult["t"] {
		if !r.IsSucceed {
			if r.Error.Code != "OTSServerBusy" || r.Error.Message != "Server is busy." {
				t.Errorf("row error = %+v", r.Error)
			}
			failed = append(failed, r.Index)
		}
	}
	if !slices.Equal(failed, []int32{1, 3, 5}) {
		t.Errorf("failed rows = %v", failed)
	}
	if r := getRow(t, c, "t", pk("id", int64(1)), 1); len(r.Columns) != 0 {
		t.Errorf("failed row applied: %+v", r)
	}
	srv.InjectRowErrors(nil)

	srv.FailNextRows("BatchGetRow", "OTSTimeout", 1)
	q := &tablestore.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1}
	q.AddRow(pk("id", int64(0)))
	q.AddRow(pk("id", int64(2)))
	gr, err := c.BatchGetRow(&tablestore.BatchGetRowRequest{MultiRowQueryCriteria: []*tablestore.MultiRowQueryCriteria{q}})
	if err != nil {
		t.Fatal(err)
	}
	rows := gr.TableToRowsResult["t"]
	if rows[0].IsSucceed || rows[0].Error.Code != "OTSTimeout" || !rows[1].IsSucceed || rows[1].Columns[0].Value != int64(2) {
		t.Errorf("batch get rows = %+v", rows)
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
