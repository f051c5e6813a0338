package tablestoretest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

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
