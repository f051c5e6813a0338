package dropin

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestMethodSet: every exported method of the SDK's client is the drop-in's, with the same signature.
func TestMethodSet(t *testing.T) {
	sdk, ours := reflect.TypeFor[*ots.TableStoreClient](), reflect.TypeFor[*Client]()
	n := sdk.NumMethod()
	for i := range n {
		m := sdk.Method(i)
		got, ok := ours.MethodByName(m.Name)
		if !ok {
			t.Errorf("no method %s", m.Name)
			continue
		}
		// Compare without the receiver.
		if want := m.Type; !sameSignature(got.Type, want) {
			t.Errorf("%s is %v, the SDK's %v", m.Name, got.Type, want)
		}
	}
	if n != 27 {
		t.Errorf("the SDK client has %d methods, the drop-in was checked against 27", n)
	}
}

func sameSignature(a, b reflect.Type) bool {
	if a.NumIn() != b.NumIn() || a.NumOut() != b.NumOut() {
		return false
	}
	for i := 1; i < a.NumIn(); i++ {
		if a.In(i) != b.In(i) {
			return false
		}
	}
	for i := range a.NumOut() {
		if a.Out(i) != b.Out(i) {
			return false
		}
	}
	return true
}

// TestPassThrough: calls without row keys answer as the SDK's do (the local server does not model
// streams, indexes, search or transactions: the same refusal comes back), and ListTable hides
// brine's meta table.
func TestPassThrough(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "hash:4", "")
	c := New(e.sdk)
	list, err := c.ListTable()
	if err != nil || !slices.Equal(list.TableNames, []string{"t"}) {
		t.Fatalf("ListTable = %v, %v; want [t]", list, err)
	}
	if raw, _ := e.sdk.ListTable(); !slices.Contains(raw.TableNames, "brine_meta") {
		t.Fatalf("the SDK lists %v: no meta table to hide", raw.TableNames)
	}
	same := func(name string, got, want error) {
		t.Helper()
		var g, w *ots.OtsError
		if !errors.As(got, &g) || !errors.As(want, &w) || g.Code != w.Code || g.Message != w.Message {
			t.Errorf("%s: %v, the SDK's %v", name, got, want)
		}
	}
	streamID := "s"
	_, err = c.ListStream(&ots.ListStreamRequest{TableName: &streamID})
	_, want := e.sdk.ListStream(&ots.ListStreamRequest{TableName: &streamID})
	same("ListStream", err, want)
	_, err = c.CommitTransaction(&ots.CommitTransactionRequest{TransactionId: &streamID})
	_, want = e.sdk.CommitTransaction(&ots.CommitTransactionRequest{TransactionId: &streamID})
	same("CommitTransaction", err, want)
	_, err = c.ListSearchIndex(&ots.ListSearchIndexRequest{TableName: "t"})
	_, want = e.sdk.ListSearchIndex(&ots.ListSearchIndexRequest{TableName: "t"})
	same("ListSearchIndex", err, want)

	d, err := c.DescribeTable(&ots.DescribeTableRequest{TableName: "t"})
	if err != nil || d.TableMeta.TableName != "t" {
		t.Fatalf("DescribeTable = %v, %v", d, err)
	}
	for name, call := range map[string]func() error{
		"CreateTable": func() error {
			m := &ots.TableMeta{TableName: "brine_meta"}
			m.AddPrimaryKeyColumn("x", ots.PrimaryKeyType_STRING)
			_, err := c.CreateTable(&ots.CreateTableRequest{TableMeta: m})
			return err
		},
		"DeleteTable": func() error { _, err := c.DeleteTable(&ots.DeleteTableRequest{TableName: "brine_meta"}); return err },
	} {
		if err := call(); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("%s of the meta table: %v, want ErrInvalidArgument", name, err)
		}
	}
}

// TestForgetAfterRecreate: a table dropped and created again with another key by another client is
// used with its new key after Forget (the driver's cached key is dropped too).
func TestForgetAfterRecreate(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "hash:16", "")
	c := New(e.sdk)
	if _, err := c.PutRow(putReq("t", bin([]byte("k")))); err != nil {
		t.Fatal(err)
	}
	// Another client drops it and creates it with a two-column key, first column 1 + 5 bytes wide.
	if err := e.backend.DeleteTable(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
	e.salted(t, "t", "hash:16", "pk:BINARY:6,n:INTEGER")
	c.Forget("t")
	pk := new(ots.PrimaryKey)
	pk.AddPrimaryKeyColumn("pk", []byte("dev01"))
	pk.AddPrimaryKeyColumn("n", int64(7))
	if _, err := c.PutRow(putReq("t", pk)); err != nil {
		t.Fatalf("PutRow with the new key after Forget: %v", err)
	}
	got, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "t", PrimaryKey: pk, MaxVersion: 1}})
	if err != nil || pkText(&got.PrimaryKey) != pkText(pk) {
		t.Fatalf("GetRow = %v, %v", got, err)
	}
	stored, err := e.sdk.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &ots.RangeRowQueryCriteria{TableName: "t",
		StartPrimaryKey: infMin("pk", "n"), EndPrimaryKey: infMax("pk", "n"), MaxVersion: 1, Direction: ots.FORWARD}})
	if err != nil || len(stored.Rows) != 1 || len(stored.Rows[0].PrimaryKey.PrimaryKeys[0].Value.([]byte)) != 6 {
		t.Fatalf("stored rows %v, %v; want one with a 6-byte first column", stored, err)
	}
}

// TestDeleteTableForgetsSpec: DeleteTable through the drop-in deletes the stored spec, so a table the
// SDK creates under the name later does not inherit it.
func TestDeleteTableForgetsSpec(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "hash:16", "")
	c := New(e.sdk)
	if _, err := c.PutRow(putReq("t", bin([]byte("k")))); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteTable(&ots.DeleteTableRequest{TableName: "t"}); err != nil {
		t.Fatal(err)
	}
	e.raw(t, "t", tablestore.KeyColumn{Name: "id", Type: tablestore.KeyString})
	pk := new(ots.PrimaryKey)
	pk.AddPrimaryKeyColumn("id", "k")
	if _, err := c.PutRow(putReq("t", pk)); !errors.Is(err, ErrNoSpec) {
		t.Fatalf("PutRow on the re-created table: %v, want ErrNoSpec", err)
	}
}

// guideKey is the Tablestore guide's md5 layout, computed here without brine: the first 4 hex digits
// of md5(user id), then the user id.
func guideKey(user string) string {
	sum := md5.Sum([]byte(user))
	return hex.EncodeToString(sum[:])[:4] + user
}

// TestAdoptGuideLayout: a table an application built with the SDK alone on the guide's layout
// (STRING partition key md5hex(user) + user, then the order number) is adopted with its spec, and
// the drop-in then reads and writes it with the user ids alone; a range within one user reads one
// partition.
func TestAdoptGuideLayout(t *testing.T) {
	e := newEnv(t)
	e.raw(t, "orders", tablestore.KeyColumn{Name: "uid", Type: tablestore.KeyString}, tablestore.KeyColumn{Name: "order", Type: tablestore.KeyInteger})
	var pks []*ots.PrimaryKey
	for u := range 5 {
		for o := range 10 {
			pk := new(ots.PrimaryKey)
			pk.AddPrimaryKeyColumn("uid", guideKey(fmt.Sprintf("user%d", u)))
			pk.AddPrimaryKeyColumn("order", int64(200000+o))
			pks = append(pks, pk)
		}
	}
	e.putAll(t, e.sdk, "orders", pks) // the application's own rows, salted by itself

	c := New(e.sdk)
	spec := testkit.Salter(t, "md5hex:4:sep=0x00")
	if err := c.Adopt(t.Context(), "orders", spec); err != nil {
		t.Fatal(err)
	}
	if s, err := New(e.sdk).Salter(t.Context(), "orders"); err != nil || s.Spec() != spec.Spec() {
		t.Fatalf("another client's salter: %v, %v; want the adopted spec", s, err)
	}
	if err := c.Adopt(t.Context(), "orders", testkit.Salter(t, "md5hex:2")); !errors.Is(err, ErrSpecMismatch) {
		t.Fatalf("adopting with another spec: %v, want ErrSpecMismatch", err)
	}
	if err := c.Adopt(t.Context(), "orders", spec, tablestore.KeyColumn{Name: "uid", Type: tablestore.KeyBinary},
		tablestore.KeyColumn{Name: "order", Type: tablestore.KeyInteger}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("adopting with a wrong key: %v, want ErrInvalidArgument", err)
	}

	logical := func(user string, order int64) *ots.PrimaryKey {
		pk := new(ots.PrimaryKey)
		pk.AddPrimaryKeyColumn("uid", user)
		pk.AddPrimaryKeyColumn("order", order)
		return pk
	}
	got, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "orders",
		PrimaryKey: logical("user3", 200004), MaxVersion: 1}})
	if err != nil || pkText(&got.PrimaryKey) != pkText(logical("user3", 200004)) || cell(got.Columns, "n") != int64(34) {
		t.Fatalf("GetRow of an application row = %v, %v", got, err)
	}
	// A new row through the drop-in is stored as the application stores its rows.
	if _, err := c.PutRow(putReq("orders", logical("user9", 1))); err != nil {
		t.Fatal(err)
	}
	raw, err := e.sdk.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{TableName: "orders",
		PrimaryKey: logical(guideKey("user9"), 1), MaxVersion: 1}})
	if err != nil || len(raw.Columns) == 0 {
		t.Fatalf("the drop-in's row under the guide's key: %v, %v", raw, err)
	}

	e.srv.ResetStats()
	crit := ots.RangeRowQueryCriteria{TableName: "orders", StartPrimaryKey: logical("user2", 200003),
		EndPrimaryKey: logical("user2", 200007), MaxVersion: 1, Direction: ots.FORWARD}
	rows, _ := pages(t, c, crit, true)
	want := []string{}
	for o := 200003; o < 200007; o++ {
		want = append(want, pkText(logical("user2", int64(o))))
	}
	if len(rows) != len(want) {
		t.Fatalf("range within user2: %v", rows)
	}
	for i := range rows {
		if rows[i][:len(want[i])] != want[i] {
			t.Fatalf("range within user2: row %d is %s, want %s", i, rows[i], want[i])
		}
	}
	if n := e.srv.Stats()["GetRange"].Requests; n != 1 {
		t.Fatalf("range within one user: %d GetRange requests, want 1 (one partition)", n)
	}
}

// TestStringFirstColumn: STRING first columns, of a fixed width and variable, salted with text
// prefixes (hex and decimal), read back in logical order as the SDK reads an unsalted table; binary prefixes on a variable first column are refused.
func TestStringFirstColumn(t *testing.T) {
	for _, tt := range []struct{ key, spec string }{
		{"id:STRING:8,seq:INTEGER", "md5hex:2:prefix=6"},
		{"id:STRING:8,seq:INTEGER", "hash:16:digits=2:prefix=6"},
		{"id:STRING,seq:INTEGER", "md5hex:1"},
		{"id:STRING,seq:INTEGER", "hash:12:digits=2:sep=0x00"},
		{"id:STRING,seq:INTEGER", "none"},
	} {
		t.Run(tt.key+" "+tt.spec, func(t *testing.T) {
			e := newEnv(t)
			e.salted(t, "t", tt.spec, tt.key)
			e.raw(t, "ref", tablestore.KeyColumn{Name: "id", Type: tablestore.KeyString}, tablestore.KeyColumn{Name: "seq", Type: tablestore.KeyInteger})
			c := New(e.sdk)
			var pks []*ots.PrimaryKey
			for i := range 60 {
				pk := new(ots.PrimaryKey)
				pk.AddPrimaryKeyColumn("id", fmt.Sprintf("dev%03d", i%7))
				pk.AddPrimaryKeyColumn("seq", int64(i*7919%101-50))
				pks = append(pks, pk)
			}
			e.putAll(t, c, "t", pks)
			e.putAll(t, e.sdk, "ref", pks)
			for _, dir := range []ots.Direction{ots.FORWARD, ots.BACKWARD} {
				crit := ots.RangeRowQueryCriteria{TableName: "t", StartPrimaryKey: infMin("id", "seq"), EndPrimaryKey: infMax("id", "seq"),
					MaxVersion: 1, Direction: dir, Limit: 7}
				if dir == ots.BACKWARD {
					crit.StartPrimaryKey, crit.EndPrimaryKey = crit.EndPrimaryKey, crit.StartPrimaryKey
				}
				got, _ := pages(t, c, crit, true)
				crit.TableName = "ref"
				want, _ := pages(t, e.sdk, crit, true)
				if d := diffRows(got, want); d != "" {
					t.Fatalf("%v: %s", dir, d)
				}
			}
		})
	}
	e := newEnv(t)
	e.salted(t, "t", "hash:16", "id:STRING,n:INTEGER")
	pk := new(ots.PrimaryKey)
	pk.AddPrimaryKeyColumn("id", "dev")
	pk.AddPrimaryKeyColumn("n", int64(1))
	if _, err := New(e.sdk).PutRow(putReq("t", pk)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("binary salt on a variable first column: %v, want ErrUnsupported", err)
	}
}

// TestTransactionPartitionKey: a local transaction's partition key is salted as its rows' first
// column is, where one value exists; the request then reaches the server.
func TestTransactionPartitionKey(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "guide", "md5hex:4:sep=0x00", "uid:STRING,order:INTEGER")
	e.salted(t, "whole", "md5hex:2", "uid:STRING,order:INTEGER")
	e.salted(t, "one", "hash:16", "")
	c := New(e.sdk)
	uid := new(ots.PrimaryKey)
	uid.AddPrimaryKeyColumn("uid", "user1")
	tests := []struct {
		table string
		pk    *ots.PrimaryKey
		want  string // pkText of the stored key, "" for ErrUnsupported
	}{
		{"guide", uid, pkText(func() *ots.PrimaryKey {
			p := new(ots.PrimaryKey)
			p.AddPrimaryKeyColumn("uid", guideKey("user1"))
			return p
		}())},
		{"whole", uid, ""},
		{"one", bin([]byte("k")), pkText(physical(t, "hash:16", []byte("k")))},
	}
	for _, tt := range tests {
		tbl, err := c.table(t.Context(), "test", tt.table)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tbl.partitionKey(tt.pk)
		switch {
		case tt.want == "" && !errors.Is(err, ErrUnsupported):
			t.Errorf("%s: %v, %v; want ErrUnsupported", tt.table, got, err)
		case tt.want != "" && (err != nil || pkText(got) != tt.want):
			t.Errorf("%s: %v, %v; want %s", tt.table, pkText(got), err, tt.want)
		}
	}
	// The local server does not model transactions: the drop-in's request gets its refusal, as the SDK's.
	_, err := c.StartLocalTransaction(&ots.StartLocalTransactionRequest{TableName: "guide", PrimaryKey: uid})
	_, want := e.sdk.StartLocalTransaction(&ots.StartLocalTransactionRequest{TableName: "guide", PrimaryKey: uid})
	var g, w *ots.OtsError
	if !errors.As(err, &g) || !errors.As(want, &w) || g.Code != w.Code {
		t.Fatalf("StartLocalTransaction: %v, the SDK's %v", err, want)
	}
}

// TestLogicalPrimaryKey: a key as the SDK returns it from a salted table (stream records, index
// rows) turns back into the caller's.
func TestLogicalPrimaryKey(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "t", "md5hex:2:sep=0x00", "uid:STRING,order:INTEGER")
	c := New(e.sdk)
	pk := new(ots.PrimaryKey)
	pk.AddPrimaryKeyColumn("uid", "user1")
	pk.AddPrimaryKeyColumn("order", int64(5))
	if _, err := c.PutRow(putReq("t", pk)); err != nil {
		t.Fatal(err)
	}
	raw, err := e.sdk.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &ots.RangeRowQueryCriteria{TableName: "t",
		StartPrimaryKey: infMin("uid", "order"), EndPrimaryKey: infMax("uid", "order"), MaxVersion: 1, Direction: ots.FORWARD}})
	if err != nil || len(raw.Rows) != 1 {
		t.Fatalf("stored rows %v, %v", raw, err)
	}
	got, err := c.LogicalPrimaryKey("t", raw.Rows[0].PrimaryKey)
	if err != nil || pkText(got) != pkText(pk) || pkText(raw.Rows[0].PrimaryKey) == pkText(pk) {
		t.Fatalf("LogicalPrimaryKey(%s) = %v, %v; want %s", pkText(raw.Rows[0].PrimaryKey), pkText(got), err, pkText(pk))
	}
}

// TestSaltRefused: salters whose prefixes a table's first column cannot hold fail before anything
// is sent.
func TestSaltRefused(t *testing.T) {
	e := newEnv(t)
	e.salted(t, "var", "hash:16", "id:BINARY,seq:INTEGER")  // 0x00 prefixes on a variable column
	e.salted(t, "str", "hash:256", "id:STRING")             // bytes over 0x7F alone in a STRING
	e.salted(t, "ok", "hash:16", "id:BINARY:4,seq:INTEGER") // a fixed width takes binary prefixes
	e.srv.ResetStats()
	c := New(e.sdk)
	for _, table := range []string{"var", "str"} {
		if _, err := c.Salter(t.Context(), table); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", table, err)
		}
	}
	if _, err := c.Salter(t.Context(), "ok"); err != nil {
		t.Errorf("fixed width: %v", err)
	}
	if w := e.srv.Stats().Total().RowsWritten; w != 0 {
		t.Fatalf("%d rows written", w)
	}
}
