package dropin_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends/tablestore/dropin"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// TestDocumentedSwap is the package doc's swap, verbatim: a client made with dropin.New(sdk) and no
// option creates a table, writes a row and reads it back. The table it created is salted with the
// spec CreateTable stored (DefaultSpec), not refused for lacking one.
func TestDocumentedSwap(t *testing.T) {
	srv := tablestoretest.NewServer()
	defer srv.Close()
	sdk := srv.NewClient(nil)

	c := dropin.New(sdk) // was: c := sdk

	meta := &tablestore.TableMeta{TableName: "orders"}
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_STRING)
	if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
		TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1}, ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	pk := &tablestore.PrimaryKey{}
	pk.AddPrimaryKeyColumn("id", "order-1")
	put := &tablestore.PutRowChange{TableName: "orders", PrimaryKey: pk}
	put.AddColumn("total", int64(42))
	put.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := c.PutRow(&tablestore.PutRowRequest{PutRowChange: put}); err != nil {
		t.Fatalf("PutRow on the table the drop-in created: %v", err)
	}
	get, err := c.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "orders", PrimaryKey: pk, MaxVersion: 1}})
	if err != nil {
		t.Fatalf("GetRow: %v", err)
	}
	if got := get.PrimaryKey.PrimaryKeys[0].Value; got != "order-1" || len(get.Columns) != 1 || get.Columns[0].Value != int64(42) {
		t.Fatalf("GetRow = key %v, columns %+v; want order-1 with total 42", got, get.Columns)
	}

	s, err := c.Salter(context.Background(), "orders")
	if err != nil || s.Spec() != dropin.DefaultSpec {
		t.Fatalf("Salter(orders) = %v, %v; want the stored %s", s, err, dropin.DefaultSpec)
	}
	// Stored, not just remembered: a second client reads the same spec from the meta table.
	if s2, err := dropin.New(sdk).Salter(context.Background(), "orders"); err != nil || s2.Spec() != dropin.DefaultSpec {
		t.Fatalf("a new client's Salter(orders) = %v, %v; want the stored %s", s2, err, dropin.DefaultSpec)
	}
	raw, err := sdk.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "orders", PrimaryKey: pk, MaxVersion: 1}})
	if err != nil || raw.PrimaryKey.PrimaryKeys != nil {
		t.Fatalf("the SDK alone found the row under its logical key (%v, %v): it was not salted", raw.PrimaryKey, err)
	}
}

// recorder is a slog.Handler that keeps every record it is given.
type recorder struct{ records *[]slog.Record }

func (r recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	*r.records = append(*r.records, rec)
	return nil
}
func (r recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r recorder) WithGroup(string) slog.Handler      { return r }

// TestSilentByDefault: without WithLogger the drop-in (and the driver it makes) logs nothing, not
// even to slog.Default(); with it, the lines go to the logger given. slog's default is global, so
// this test must not run in parallel.
func TestSilentByDefault(t *testing.T) {
	var global, given []slog.Record
	old := slog.Default()
	slog.SetDefault(slog.New(recorder{&global}))
	t.Cleanup(func() { slog.SetDefault(old) })

	create := func(c *dropin.Client, name string) {
		t.Helper()
		meta := &tablestore.TableMeta{TableName: name}
		meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_STRING)
		if _, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
			TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1}, ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Salter(context.Background(), name); err != nil {
			t.Fatal(err)
		}
	}
	srv := tablestoretest.NewServer()
	defer srv.Close()
	create(dropin.New(srv.NewClient(nil)), "quiet") // creates the meta table too
	if len(global) != 0 {
		t.Fatalf("logged %d lines without a logger, first %q", len(global), global[0].Message)
	}

	srv2 := tablestoretest.NewServer()
	defer srv2.Close()
	create(dropin.New(srv2.NewClient(nil), dropin.WithLogger(slog.New(recorder{&given}))), "loud")
	if len(global) != 0 || len(given) == 0 {
		t.Fatalf("with WithLogger: %d lines to the default logger, %d to the one given; want 0 and some", len(global), len(given))
	}
}
