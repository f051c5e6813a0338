package tablestoretest_test

import (
	"slices"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"google.golang.org/protobuf/protoadapt"
)

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
