package dropin

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/internal/testkit"
)

// physical is the stored primary key of a logical one-column key under spec, computed independently of
// the drop-in.
func physical(t *testing.T, spec string, key []byte) *ots.PrimaryKey {
	t.Helper()
	s := testkit.Salter(t, spec)
	p, err := s.AppendPhysical(nil, key)
	if err != nil {
		t.Fatal(err)
	}
	return bin(p)
}

func cell(cols []*ots.AttributeColumn, name string) any {
	for _, c := range cols {
		if c.ColumnName == name {
			return c.Value
		}
	}
	return nil
}

// TestRowOps: every single-row operation takes logical keys, stores the row under the salted key (read
// back with the plain SDK), and answers with logical keys.
func TestRowOps(t *testing.T) {
	e := newEnv(t)
	const spec = "hash:16"
	e.salted(t, "orders", spec, "")
	c := New(e.sdk)
	key := seq(42)
	e.srv.ResetStats()

	put := &ots.PutRowChange{TableName: "orders", PrimaryKey: bin(key)}
	put.AddColumn("v", []byte("one"))
	put.SetCondition(ots.RowExistenceExpectation_EXPECT_NOT_EXIST)
	put.SetReturnPk()
	req := &ots.PutRowRequest{PutRowChange: put}
	resp, err := c.PutRow(req)
	if err != nil {
		t.Fatalf("PutRow: %v", err)
	}
	if len(resp.PrimaryKey.PrimaryKeys) != 1 || !equalBytes(resp.PrimaryKey.PrimaryKeys[0].Value, key) {
		t.Fatalf("PutRow returned key %s, want the logical %q", pkText(&resp.PrimaryKey), key)
	}
	if !equalBytes(put.PrimaryKey.PrimaryKeys[0].Value, key) {
		t.Fatalf("PutRow changed the caller's request: %s", pkText(put.PrimaryKey))
	}

	// The plain SDK finds the row under the salted key only.
	phys := physical(t, spec, key)
	for _, k := range []*ots.PrimaryKey{phys, bin(key)} {
		raw, err := e.sdk.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "orders", PrimaryKey: k, MaxVersion: 1}})
		if err != nil {
			t.Fatalf("sdk GetRow: %v", err)
		}
		found := len(raw.Columns) > 0
		if want := k == phys; found != want {
			t.Fatalf("sdk GetRow(%s): found=%v, want %v", pkText(k), found, want)
		}
	}

	get := func() *ots.GetRowResponse {
		t.Helper()
		resp, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "orders", PrimaryKey: bin(key), MaxVersion: 1}})
		if err != nil {
			t.Fatalf("GetRow: %v", err)
		}
		return resp
	}
	got := get()
	if !equalBytes(got.PrimaryKey.PrimaryKeys[0].Value, key) || !equalBytes(cell(got.Columns, "v"), []byte("one")) {
		t.Fatalf("GetRow = %s %v", pkText(&got.PrimaryKey), got.Columns)
	}

	// The same insert again fails its condition with the SDK's own error.
	_, err = c.PutRow(req)
	var oe *ots.OtsError
	if !errors.As(err, &oe) || oe.Code != tablestoretest.CodeConditionCheckFail {
		t.Fatalf("second insert: %v, want *ots.OtsError %s", err, tablestoretest.CodeConditionCheckFail)
	}

	upd := &ots.UpdateRowChange{TableName: "orders", PrimaryKey: bin(key)}
	upd.PutColumn("w", []byte("two"))
	upd.DeleteColumn("v")
	upd.SetCondition(ots.RowExistenceExpectation_EXPECT_EXIST)
	if _, err := c.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: upd}); err != nil {
		t.Fatalf("UpdateRow: %v", err)
	}
	got = get()
	if cell(got.Columns, "v") != nil || !equalBytes(cell(got.Columns, "w"), []byte("two")) {
		t.Fatalf("after UpdateRow: %v", got.Columns)
	}

	del := &ots.DeleteRowChange{TableName: "orders", PrimaryKey: bin(key)}
	del.SetCondition(ots.RowExistenceExpectation_EXPECT_EXIST)
	if _, err := c.DeleteRow(&ots.DeleteRowRequest{DeleteRowChange: del}); err != nil {
		t.Fatalf("DeleteRow: %v", err)
	}
	if got := get(); len(got.Columns) != 0 || len(got.PrimaryKey.PrimaryKeys) != 0 {
		t.Fatalf("after DeleteRow: %s %v", pkText(&got.PrimaryKey), got.Columns)
	}
	if n := e.srv.Stats().Total().RowsWritten; n != 3 {
		t.Fatalf("rows written %d, want 3 (put, update, delete)", n)
	}
}

// TestBatchWriteRowResults: a batch of puts, updates and deletes on logical keys, one of them failing
// its condition; each result's Index is the caller's row, and only that row is missing afterwards.
func TestBatchWriteRowResults(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "a", "hash:16", "")
	e.salted(t, "b", "md5hex:2", "")
	c := New(e.sdk)
	e.putAll(t, c, "a", []*ots.PrimaryKey{bin(seq(1)), bin(seq(3))})

	req := &ots.BatchWriteRowRequest{}
	var wantOK []bool
	for i := range 6 {
		var ch ots.RowChange
		switch i {
		case 1: // seq(1) exists: EXPECT_NOT_EXIST fails for this row alone
			p := &ots.PutRowChange{TableName: "a", PrimaryKey: bin(seq(i))}
			p.AddColumn("v", []byte("x"))
			p.SetCondition(ots.RowExistenceExpectation_EXPECT_NOT_EXIST)
			ch = p
		case 3:
			d := &ots.DeleteRowChange{TableName: "a", PrimaryKey: bin(seq(i))}
			d.SetCondition(ots.RowExistenceExpectation_EXPECT_EXIST)
			ch = d
		case 4:
			u := &ots.UpdateRowChange{TableName: "a", PrimaryKey: bin(seq(i))}
			u.PutColumn("v", []byte("u"))
			u.SetCondition(ots.RowExistenceExpectation_IGNORE)
			ch = u
		default:
			p := &ots.PutRowChange{TableName: "a", PrimaryKey: bin(seq(i))}
			p.AddColumn("v", []byte(fmt.Sprint(i)))
			p.SetCondition(ots.RowExistenceExpectation_EXPECT_NOT_EXIST)
			ch = p
		}
		req.AddRowChange(ch)
		wantOK = append(wantOK, i != 1)
	}
	pb := &ots.PutRowChange{TableName: "b", PrimaryKey: bin([]byte("user-7"))}
	pb.AddColumn("v", []byte("b"))
	pb.SetCondition(ots.RowExistenceExpectation_IGNORE)
	req.AddRowChange(pb)

	resp, err := c.BatchWriteRow(req)
	if err != nil {
		t.Fatalf("BatchWriteRow: %v", err)
	}
	res := resp.TableToRowsResult["a"]
	if len(res) != len(wantOK) {
		t.Fatalf("%d results for a, want %d", len(res), len(wantOK))
	}
	for i, r := range res {
		if int(r.Index) != i || r.IsSucceed != wantOK[i] {
			t.Fatalf("result %d: index %d ok %v (%s), want index %d ok %v", i, r.Index, r.IsSucceed, r.Error.Code, i, wantOK[i])
		}
	}
	if res[1].Error.Code != tablestoretest.CodeConditionCheckFail {
		t.Fatalf("row 1 error %q", res[1].Error.Code)
	}
	if rb := resp.TableToRowsResult["b"]; len(rb) != 1 || !rb[0].IsSucceed {
		t.Fatalf("results for b: %+v", rb)
	}

	// Read every key back through BatchGetRow: results carry logical keys, in the caller's order.
	keys := []*ots.PrimaryKey{}
	for i := range 6 {
		keys = append(keys, bin(seq(i)))
	}
	crit := &ots.MultiRowQueryCriteria{TableName: "a", MaxVersion: 1}
	for _, k := range keys {
		crit.AddRow(k)
	}
	critB := &ots.MultiRowQueryCriteria{TableName: "b", MaxVersion: 1}
	critB.AddRow(bin([]byte("user-7")))
	got, err := c.BatchGetRow(&ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{crit, critB}})
	if err != nil {
		t.Fatalf("BatchGetRow: %v", err)
	}
	// seq(1): the original row (value-0), untouched by the failed insert; seq(3): deleted.
	want := map[int]string{0: "0", 1: "value-0", 2: "2", 4: "u", 5: "5"}
	for i, r := range got.TableToRowsResult["a"] {
		if int(r.Index) != i || !r.IsSucceed {
			t.Fatalf("get result %d: index %d ok %v", i, r.Index, r.IsSucceed)
		}
		v, exists := want[i]
		if !exists {
			if len(r.PrimaryKey.PrimaryKeys) != 0 {
				t.Fatalf("row %d was deleted, got %s", i, pkText(&r.PrimaryKey))
			}
			continue
		}
		if pkText(&r.PrimaryKey) != pkText(keys[i]) || !equalBytes(cell(r.Columns, "v"), []byte(v)) {
			t.Fatalf("get result %d: %s v=%v, want %s v=%s", i, pkText(&r.PrimaryKey), cell(r.Columns, "v"), pkText(keys[i]), v)
		}
	}
	if rb := got.TableToRowsResult["b"]; len(rb) != 1 || pkText(&rb[0].PrimaryKey) != pkText(bin([]byte("user-7"))) {
		t.Fatalf("get results for b: %+v", rb)
	}
}

// TestBatchGetRowRowError: a row that fails inside a successful BatchGetRow keeps its place and error;
// the other rows carry their logical keys.
func TestBatchGetRowRowError(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "hash:8", "")
	c := New(e.sdk)
	var pks []*ots.PrimaryKey
	for i := range 5 {
		pks = append(pks, bin(seq(i)))
	}
	e.putAll(t, c, "t", pks)
	e.srv.InjectRowErrors(func(op, table string, index int) *tablestoretest.Fault {
		if op == "BatchGetRow" && index == 2 {
			return &tablestoretest.Fault{Code: tablestoretest.CodeServerBusy}
		}
		return nil
	})
	crit := &ots.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1}
	for _, pk := range pks {
		crit.AddRow(pk)
	}
	resp, err := c.BatchGetRow(&ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{crit}})
	if err != nil {
		t.Fatalf("BatchGetRow: %v", err)
	}
	res := resp.TableToRowsResult["t"]
	if len(res) != len(pks) {
		t.Fatalf("%d results, want %d", len(res), len(pks))
	}
	for i, r := range res {
		if int(r.Index) != i {
			t.Fatalf("result %d has index %d", i, r.Index)
		}
		if i == 2 {
			if r.IsSucceed || r.Error.Code != tablestoretest.CodeServerBusy {
				t.Fatalf("row 2: ok %v code %q, want the injected failure", r.IsSucceed, r.Error.Code)
			}
			continue
		}
		if !r.IsSucceed || pkText(&r.PrimaryKey) != pkText(pks[i]) {
			t.Fatalf("row %d: ok %v key %s, want %s", i, r.IsSucceed, pkText(&r.PrimaryKey), pkText(pks[i]))
		}
	}
}

// TestMultiColumnRows: on a [DeviceID(salt+6 bytes), SellerID, CardID] table only the first column is
// salted; the caller gives and gets the unsalted 6 bytes and the other columns unchanged.
func TestMultiColumnRows(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "cards", "hash:16:prefix=6", "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER")
	c := New(e.sdk)
	pk := func(dev string, seller string, card int64) *ots.PrimaryKey {
		k := new(ots.PrimaryKey)
		k.AddPrimaryKeyColumn("DeviceID", []byte(dev))
		k.AddPrimaryKeyColumn("SellerID", seller)
		k.AddPrimaryKeyColumn("CardID", card)
		return k
	}
	put := &ots.PutRowChange{TableName: "cards", PrimaryKey: pk("dev001", "s1", 7)}
	put.AddColumn("v", []byte("x"))
	put.SetCondition(ots.RowExistenceExpectation_IGNORE)
	put.SetReturnPk()
	resp, err := c.PutRow(&ots.PutRowRequest{PutRowChange: put})
	if err != nil {
		t.Fatalf("PutRow: %v", err)
	}
	if got, want := pkText(&resp.PrimaryKey), pkText(pk("dev001", "s1", 7)); got != want {
		t.Fatalf("returned key %s, want %s", got, want)
	}
	// Stored: 7 bytes in DeviceID, the salt first.
	raw, err := e.sdk.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &ots.RangeRowQueryCriteria{TableName: "cards",
		StartPrimaryKey: infMin("DeviceID", "SellerID", "CardID"), EndPrimaryKey: infMax("DeviceID", "SellerID", "CardID"), MaxVersion: 1, Direction: ots.FORWARD}})
	if err != nil || len(raw.Rows) != 1 {
		t.Fatalf("sdk GetRange: %v %v", raw, err)
	}
	dev := raw.Rows[0].PrimaryKey.PrimaryKeys[0].Value.([]byte)
	if len(dev) != 7 || !bytes.Equal(dev[1:], []byte("dev001")) || raw.Rows[0].PrimaryKey.PrimaryKeys[2].Value != int64(7) {
		t.Fatalf("stored key %s", pkText(raw.Rows[0].PrimaryKey))
	}
	got, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "cards", PrimaryKey: pk("dev001", "s1", 7), MaxVersion: 1}})
	if err != nil || pkText(&got.PrimaryKey) != pkText(pk("dev001", "s1", 7)) {
		t.Fatalf("GetRow: %s %v", pkText(&got.PrimaryKey), err)
	}
	// A first column that does not fill the width less the salt is refused, naming the width.
	_, err = c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "cards", PrimaryKey: pk("dev01", "s1", 7), MaxVersion: 1}})
	if !errors.Is(err, backends.ErrInvalidKey) || !strings.Contains(err.Error(), "give 6 bytes") {
		t.Fatalf("short DeviceID: %v", err)
	}
}
