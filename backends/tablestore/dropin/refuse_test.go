package dropin

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/internal/testkit"
)

// otherChange is a RowChange the drop-in cannot look into.
type otherChange struct{ ots.PutRowChange }

// otherFilter is a ColumnFilter the drop-in cannot look into.
type otherFilter struct{ ots.SingleColumnCondition }

func putReq(table string, pk *ots.PrimaryKey) *ots.PutRowRequest {
	ch := &ots.PutRowChange{TableName: table, PrimaryKey: pk}
	ch.AddColumn("v", []byte("x"))
	ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
	return &ots.PutRowRequest{PutRowChange: ch}
}

// TestRefusedBeforeSending: every request the drop-in cannot rewrite faithfully, and every key the
// service would refuse once salted, fails with an error naming the call and wrapping the right
// sentinel, and no row request reaches the server.
func TestRefusedBeforeSending(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "hash:16", "")
	e.salted(t, "m", "hash:16:prefix=6", "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER")
	c := New(e.sdk)
	// Learn both tables first, so that the only requests counted below are row requests.
	for _, name := range []string{"t", "m"} {
		if _, err := c.Salter(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	e.srv.ResetStats()

	pkOf := func(name string, v any) *ots.PrimaryKey {
		pk := new(ots.PrimaryKey)
		pk.AddPrimaryKeyColumn(name, v)
		return pk
	}
	autoInc := new(ots.PrimaryKey)
	autoInc.AddPrimaryKeyColumnWithAutoIncrement("pk")
	mpk := func(dev any, card any) *ots.PrimaryKey {
		k := new(ots.PrimaryKey)
		k.AddPrimaryKeyColumn("DeviceID", dev)
		k.AddPrimaryKeyColumn("SellerID", "s")
		switch card {
		case "MIN":
			k.AddPrimaryKeyColumnWithMinValue("CardID")
		default:
			k.AddPrimaryKeyColumn("CardID", card)
		}
		return k
	}
	mixedTypes := func(v any) *ots.PrimaryKey { // INF in the first column, a value of type v after it
		k := new(ots.PrimaryKey)
		k.AddPrimaryKeyColumnWithMinValue("DeviceID")
		k.AddPrimaryKeyColumnWithMinValue("SellerID")
		k.AddPrimaryKeyColumn("CardID", v)
		return k
	}
	rangeReq := func(table string, start, end *ots.PrimaryKey, dir ots.Direction, mod func(*ots.RangeRowQueryCriteria)) func() error {
		return func() error {
			q := &ots.RangeRowQueryCriteria{TableName: table, StartPrimaryKey: start, EndPrimaryKey: end, MaxVersion: 1, Direction: dir}
			if mod != nil {
				mod(q)
			}
			_, err := c.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: q})
			return err
		}
	}
	putWith := func(mod func(*ots.PutRowChange)) func() error {
		return func() error {
			r := putReq("t", bin([]byte("k")))
			mod(r.PutRowChange)
			_, err := c.PutRow(r)
			return err
		}
	}
	batchWrite := func(changes ...ots.RowChange) func() error {
		return func() error {
			req := &ots.BatchWriteRowRequest{RowChangesGroupByTable: map[string][]ots.RowChange{"t": changes}}
			_, err := c.BatchWriteRow(req)
			return err
		}
	}
	okChange := putReq("t", bin([]byte("ok"))).PutRowChange
	pkCond := ots.NewSingleColumnCondition("pk", ots.CT_EQUAL, []byte("x"))

	for _, tc := range []struct {
		name, call string
		want       error
		run        func() error
	}{
		{"empty key", "PutRow", backends.ErrInvalidKey, func() error { _, err := c.PutRow(putReq("t", bin([]byte{}))); return err }},
		{"nil key", "PutRow", backends.ErrInvalidKey, func() error { _, err := c.PutRow(putReq("t", nil)); return err }},
		// 1024 bytes is the service's limit for the stored value, and the salt counts.
		{"key over 1 KB with the salt", "PutRow", backends.ErrInvalidKey, func() error {
			_, err := c.PutRow(putReq("t", bin(bytes.Repeat([]byte("k"), 1024))))
			return err
		}},
		{"wrong column name", "GetRow", backends.ErrInvalidKey, func() error {
			_, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pkOf("id", []byte("k")), MaxVersion: 1}})
			return err
		}},
		{"wrong type", "DeleteRow", backends.ErrInvalidKey, func() error {
			ch := &ots.DeleteRowChange{TableName: "t", PrimaryKey: pkOf("pk", "text")}
			ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
			_, err := c.DeleteRow(&ots.DeleteRowRequest{DeleteRowChange: ch})
			return err
		}},
		{"INF in a row operation", "UpdateRow", backends.ErrInvalidKey, func() error {
			ch := &ots.UpdateRowChange{TableName: "t", PrimaryKey: infMin("pk")}
			ch.PutColumn("v", []byte("x"))
			ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
			_, err := c.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: ch})
			return err
		}},
		{"auto increment", "PutRow", ErrUnsupported, func() error { _, err := c.PutRow(putReq("t", autoInc)); return err }},
		{"too few columns", "PutRow", backends.ErrInvalidKey, func() error { _, err := c.PutRow(putReq("m", bin([]byte("dev001")))); return err }},
		{"first column too wide", "PutRow", backends.ErrInvalidKey, func() error {
			_, err := c.PutRow(putReq("m", mpk([]byte("dev0012"), int64(1))))
			return err
		}},
		{"no condition", "PutRow", backends.ErrInvalidArgument, putWith(func(ch *ots.PutRowChange) { ch.Condition = nil })},
		{"condition on the key", "PutRow", ErrUnsupported, putWith(func(ch *ots.PutRowChange) { ch.SetColumnCondition(pkCond) })},
		{"condition on the key in a composite", "PutRow", ErrUnsupported, putWith(func(ch *ots.PutRowChange) {
			f := ots.NewCompositeColumnCondition(ots.LO_OR)
			f.AddFilter(ots.NewSingleColumnCondition("v", ots.CT_EQUAL, []byte("x")))
			f.AddFilter(pkCond)
			ch.SetColumnCondition(f)
		})},
		{"filter of unknown type", "GetRow", ErrUnsupported, func() error {
			_, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "t",
				PrimaryKey: bin([]byte("k")), MaxVersion: 1, Filter: &otherFilter{}}})
			return err
		}},
		{"filter on the key", "GetRange", ErrUnsupported, rangeReq("t", infMin("pk"), infMax("pk"), ots.FORWARD, func(q *ots.RangeRowQueryCriteria) { q.Filter = pkCond })},
		{"negative limit", "GetRange", backends.ErrInvalidArgument, rangeReq("t", infMin("pk"), infMax("pk"), ots.FORWARD, func(q *ots.RangeRowQueryCriteria) { q.Limit = -1 })},
		{"no versions", "GetRange", backends.ErrInvalidArgument, rangeReq("t", infMin("pk"), infMax("pk"), ots.FORWARD, func(q *ots.RangeRowQueryCriteria) { q.MaxVersion = 0 })},
		{"forward start above end", "GetRange", backends.ErrInvalidArgument, rangeReq("t", bin([]byte("b")), bin([]byte("a")), ots.FORWARD, nil)},
		{"forward start equal to end", "GetRange", backends.ErrInvalidArgument, rangeReq("t", bin([]byte("a")), bin([]byte("a")), ots.FORWARD, nil)},
		{"backward start below end", "GetRange", backends.ErrInvalidArgument, rangeReq("t", infMin("pk"), infMax("pk"), ots.BACKWARD, nil)},
		{"bound of the wrong type", "GetRange", backends.ErrInvalidKey, rangeReq("t", pkOf("pk", int64(3)), infMax("pk"), ots.FORWARD, nil)},
		// Columns after an INF are still checked (they used to be skipped, and the bound comparison
		// then panicked on a value of the wrong type).
		{"wrong type after INF", "GetRange", backends.ErrInvalidKey, rangeReq("m", mixedTypes(int64(1)), mixedTypes("x"), ots.FORWARD, nil)},
		{"nil column after INF", "GetRange", backends.ErrInvalidKey, rangeReq("m", mixedTypes(int64(1)), func() *ots.PrimaryKey {
			k := mixedTypes(int64(2))
			k.PrimaryKeys[2] = nil
			return k
		}(), ots.FORWARD, nil)},
		{"bound with a short first column", "GetRange", backends.ErrInvalidKey, rangeReq("m", mpk([]byte("dev"), "MIN"), infMax("DeviceID", "SellerID", "CardID"), ots.FORWARD, nil)},
		{"change of unknown type", "BatchWriteRow", ErrUnsupported, batchWrite(okChange, &otherChange{*okChange})},
		{"change naming another table", "BatchWriteRow", backends.ErrInvalidArgument, batchWrite(okChange, putReq("m", bin([]byte("k"))).PutRowChange)},
		{"bad key in a batch", "BatchWriteRow", backends.ErrInvalidKey, batchWrite(okChange, putReq("t", bin(nil)).PutRowChange)},
		{"too many writes", "BatchWriteRow", backends.ErrInvalidArgument, func() error {
			var chs []ots.RowChange
			for i := range 201 {
				chs = append(chs, putReq("t", bin(seq(i))).PutRowChange)
			}
			return batchWrite(chs...)()
		}},
		{"too many gets", "BatchGetRow", backends.ErrInvalidArgument, func() error {
			crit := &ots.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1}
			for i := range 101 {
				crit.AddRow(bin(seq(i)))
			}
			_, err := c.BatchGetRow(&ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{crit}})
			return err
		}},
		{"bad key in a batch get", "BatchGetRow", backends.ErrInvalidKey, func() error {
			crit := &ots.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1}
			crit.AddRow(bin(seq(1)))
			crit.AddRow(pkOf("pk", "text"))
			_, err := c.BatchGetRow(&ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{crit}})
			return err
		}},
		{"no request", "GetRow", backends.ErrInvalidArgument, func() error { _, err := c.GetRow(nil); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if !errors.Is(err, tc.want) {
				t.Fatalf("error %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.call) {
				t.Fatalf("error %q does not name %s", err, tc.call)
			}
			if st := e.srv.Stats().Total(); st.Requests != 0 {
				t.Fatalf("%d requests sent: %+v", st.Requests, e.srv.Stats())
			}
		})
	}
}

// TestBatchLimitsBeforeLookup: a batch over the service's row limits is refused before even the
// table's key is looked up.
func TestBatchLimitsBeforeLookup(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "hash:16", "")
	e.srv.ResetStats()
	c := New(e.sdk)
	crit := &ots.MultiRowQueryCriteria{TableName: "t", MaxVersion: 1}
	var chs []ots.RowChange
	for i := range 201 {
		crit.AddRow(bin(seq(i)))
		chs = append(chs, putReq("t", bin(seq(i))).PutRowChange)
	}
	if _, err := c.BatchGetRow(&ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{crit}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("BatchGetRow of 201 rows: %v", err)
	}
	if _, err := c.BatchWriteRow(&ots.BatchWriteRowRequest{RowChangesGroupByTable: map[string][]ots.RowChange{"t": chs}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("BatchWriteRow of 201 rows: %v", err)
	}
	if n := e.srv.Stats().Total().Requests; n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// TestSpecs: the salter comes from the spec stored with the table; another one given explicitly is
// ErrSpecMismatch, a table without a spec is ErrNoSpec unless WithUnsalted or WithSalter; nothing is
// written in the failing cases.
func TestSpecs(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "hash:16", "")
	e.raw(t, "ext", tablestore.KeyColumn{Name: "pk", Type: tablestore.KeyBinary})
	e.srv.ResetStats()
	other := testkit.Salter(t, "hash:8")

	c := New(e.sdk, WithSalter("t", other))
	_, err := c.PutRow(putReq("t", bin([]byte("k"))))
	if !errors.Is(err, ErrSpecMismatch) || !strings.Contains(err.Error(), "PutRow") {
		t.Fatalf("mismatch: %v", err)
	}
	_, err = New(e.sdk).PutRow(putReq("ext", bin([]byte("k"))))
	if !errors.Is(err, ErrNoSpec) {
		t.Fatalf("no spec: %v", err)
	}
	if w := e.srv.Stats().Total().RowsWritten; w != 0 {
		t.Fatalf("%d rows written by refused calls", w)
	}

	s, err := New(e.sdk).Salter(t.Context(), "t")
	if err != nil || s.Spec() != "hash:16" {
		t.Fatalf("stored spec: %v %v", s, err)
	}
	// Unsalted: the key is stored as given.
	if _, err := New(e.sdk, WithUnsalted()).PutRow(putReq("ext", bin([]byte("plain")))); err != nil {
		t.Fatal(err)
	}
	// WithSalter on a table without a spec salts it.
	if _, err := New(e.sdk, WithSalter("ext", other)).PutRow(putReq("ext", bin([]byte("salted")))); err != nil {
		t.Fatal(err)
	}
	raw, err := e.sdk.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &ots.RangeRowQueryCriteria{TableName: "ext",
		StartPrimaryKey: infMin("pk"), EndPrimaryKey: infMax("pk"), MaxVersion: 1, Direction: ots.FORWARD}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{pkText(bin([]byte("plain"))): true, pkText(physical(t, "hash:8", []byte("salted"))): true}
	if len(raw.Rows) != 2 || !want[pkText(raw.Rows[0].PrimaryKey)] || !want[pkText(raw.Rows[1].PrimaryKey)] {
		t.Fatalf("stored keys %v", raw.Rows)
	}
}

// TestServiceErrorsUnwrapped: a service error the SDK gives up on reaches the caller as the SDK's
// *ots.OtsError, for row operations and for a fanned-out GetRange; retryable ones the SDK retried
// are invisible.
func TestServiceErrorsUnwrapped(t *testing.T) {
	e := newEnv(t, tablestoretest.WithPageCap(3, 0))
	e.salted(t, "t", "hash:4", "")
	c := New(e.sdk)
	var pks []*ots.PrimaryKey
	for i := range 40 {
		pks = append(pks, bin(seq(i)))
	}
	e.putAll(t, c, "t", pks)
	crit := ots.RangeRowQueryCriteria{TableName: "t", StartPrimaryKey: infMin("pk"), EndPrimaryKey: infMax("pk"), MaxVersion: 1, Direction: ots.FORWARD}

	// Retried by the SDK: every row, once.
	e.srv.FailNext("GetRange", tablestoretest.CodeServerBusy, 3)
	e.srv.FailNext("GetRange", tablestoretest.CodePartitionUnavailable, 2)
	got, _ := pages(t, c, crit, true)
	if len(got) != 40 {
		t.Fatalf("%d rows after retried faults, want 40", len(got))
	}

	e.srv.FailNext("GetRange", tablestoretest.CodeParameterInvalid, 1)
	q := crit
	_, err := c.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &q})
	var oe *ots.OtsError
	if !errors.As(err, &oe) || err != error(oe) || oe.Code != tablestoretest.CodeParameterInvalid {
		t.Fatalf("GetRange error %T %v, want the SDK's *OtsError as is", err, err)
	}
	e.srv.FailNext("PutRow", tablestoretest.CodeParameterInvalid, 1)
	_, err = c.PutRow(putReq("t", bin([]byte("k"))))
	if oe, ok := err.(*ots.OtsError); !ok || oe.Code != tablestoretest.CodeParameterInvalid {
		t.Fatalf("PutRow error %T %v", err, err)
	}
}
