package dropin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// indexedEnv is a table "orders" with an index, made by client, holding
//
//	"both": d__a and d__b written through client.Table (with its version column),
//	"only": the version column alone, as a write of the protocol may leave a row for a moment;
//
// and a table "plain" without indexes, both salted hash:4.
func indexedEnv(t *testing.T) (*env, *client.Table, *Client) {
	t.Helper()
	ctx := context.Background()
	e := newEnv(t)
	s := testkit.Salter(t, "hash:4")
	cl := client.New(e.backend)
	t.Cleanup(func() { _ = cl.Close() })
	it, err := cl.CreateTable(ctx, "orders", client.TableConfig{Salter: s, Indexes: []client.IndexConfig{
		{Name: "by_a", Parts: []client.IndexPart{client.ColumnPart("d", "a")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.CreateTable(ctx, "plain", client.TableConfig{Salter: s}); err != nil {
		t.Fatal(err)
	}
	if err := it.Put(ctx, []byte("both"), client.Cell{Family: "d", Qualifier: "a", Value: []byte("1")},
		client.Cell{Family: "d", Qualifier: "b", Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	only, _ := s.AppendPhysical(nil, []byte("only"))
	version := backends.Cell{Family: "d", Qualifier: indexproto.VersionQualifier, Value: []byte("tok"), Timestamp: e.stamp}
	if _, err := e.backend.Apply(ctx, "orders", []backends.Mutation{{Key: only, Cells: []backends.Cell{version}}}); err != nil {
		t.Fatal(err)
	}
	return e, it, New(e.sdk)
}

// versionCol is the version column's Tablestore name.
const versionCol = "d__" + indexproto.VersionQualifier

func colNames(cols []*ots.AttributeColumn) string {
	var out []string
	for _, c := range cols {
		out = append(out, c.ColumnName)
	}
	return strings.Join(out, " ")
}

// TestIndexedTableWritesRefused: every write to a table with indexes, a batch that also writes a
// table without, fails with ErrIndexedTable and sends nothing; the row and the index are unchanged.
func TestIndexedTableWritesRefused(t *testing.T) {
	put := func(table string) *ots.PutRowChange {
		ch := &ots.PutRowChange{TableName: table, PrimaryKey: bin([]byte("both"))}
		ch.AddColumn("d__a", []byte("9"))
		ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
		return ch
	}
	update := &ots.UpdateRowChange{TableName: "orders", PrimaryKey: bin([]byte("both"))}
	update.PutColumn("d__a", []byte("9"))
	update.SetCondition(ots.RowExistenceExpectation_IGNORE)
	del := &ots.DeleteRowChange{TableName: "orders", PrimaryKey: bin([]byte("both"))}
	del.SetCondition(ots.RowExistenceExpectation_IGNORE)
	batch := func(changes ...ots.RowChange) *ots.BatchWriteRowRequest {
		req := &ots.BatchWriteRowRequest{}
		for _, ch := range changes {
			req.AddRowChange(ch)
		}
		return req
	}
	writes := []struct {
		name string
		do   func(c *Client) error
	}{
		{"PutRow", func(c *Client) error { _, err := c.PutRow(&ots.PutRowRequest{PutRowChange: put("orders")}); return err }},
		{"UpdateRow", func(c *Client) error {
			_, err := c.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: update})
			return err
		}},
		{"DeleteRow", func(c *Client) error { _, err := c.DeleteRow(&ots.DeleteRowRequest{DeleteRowChange: del}); return err }},
		{"BatchWriteRow", func(c *Client) error { _, err := c.BatchWriteRow(batch(put("orders"), del)); return err }},
		{"BatchWriteRow with a plain table", func(c *Client) error {
			_, err := c.BatchWriteRow(batch(put("plain"), put("orders")))
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			ctx := context.Background()
			e, it, c := indexedEnv(t)
			e.srv.ResetStats()
			err := w.do(c)
			if !errors.Is(err, ErrIndexedTable) || !strings.Contains(err.Error(), "client.Table") {
				t.Fatalf("%s: %v, want ErrIndexedTable naming client.Table", w.name, err)
			}
			for op, st := range e.srv.Stats() {
				if slices.Contains([]string{"PutRow", "UpdateRow", "DeleteRow", "BatchWriteRow"}, op) {
					t.Errorf("%d %s requests sent", st.Requests, op)
				}
			}
			row, err := it.Get(ctx, []byte("both"))
			var cells []string
			for _, c := range row.Cells {
				cells = append(cells, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
			}
			if err != nil || strings.Join(cells, " ") != "d:a=1 d:b=2" {
				t.Errorf("row after the refused write: %q, %v", cells, err)
			}
			if rep, err := indextest.Index(t, it, "by_a").Verify(ctx); err != nil || rep.Problems() != 0 {
				t.Errorf("Verify: %v, %v", rep, err)
			}
			// The same write to a table without indexes goes through.
			if _, err := c.PutRow(&ots.PutRowRequest{PutRowChange: put("plain")}); err != nil {
				t.Errorf("PutRow to a table without indexes: %v", err)
			}
		})
	}
}

// TestIndexedTableReadsHideVersion: GetRow, BatchGetRow, GetRange and Scan drop the version column
// unless ColumnsToGet names it, and a row that held it alone reads as a missing row.
func TestIndexedTableReadsHideVersion(t *testing.T) {
	_, _, c := indexedEnv(t)
	for _, tc := range []struct {
		name string
		cols []string
		want map[string]string // key -> column names; absent: no row
	}{
		{"all columns", nil, map[string]string{"both": "d__a d__b"}},
		{"version named", []string{"d__a", versionCol}, map[string]string{"both": versionCol + " d__a", "only": versionCol}}, // by name: "_" < "a"
		{"version not named", []string{"d__b"}, map[string]string{"both": "d__b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, key := range []string{"both", "only", "none"} {
				resp, err := c.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &ots.SingleRowQueryCriteria{
					TableName: "orders", PrimaryKey: bin([]byte(key)), ColumnsToGet: tc.cols, MaxVersion: 1}})
				if err != nil {
					t.Fatalf("GetRow %s: %v", key, err)
				}
				want, found := tc.want[key]
				if got := colNames(resp.Columns); got != want || (len(resp.PrimaryKey.PrimaryKeys) > 0) != found {
					t.Errorf("GetRow %s = %s [%s], want [%s] found %v", key, pkText(&resp.PrimaryKey), got, want, found)
				}
			}

			batch, err := c.BatchGetRow(&ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{{
				TableName: "orders", ColumnsToGet: tc.cols, MaxVersion: 1,
				PrimaryKey: []*ots.PrimaryKey{bin([]byte("both")), bin([]byte("only")), bin([]byte("none"))}}}})
			if err != nil {
				t.Fatal(err)
			}
			for i, key := range []string{"both", "only", "none"} {
				r := batch.TableToRowsResult["orders"][i]
				want, found := tc.want[key]
				if got := colNames(r.Columns); !r.IsSucceed || got != want || (len(r.PrimaryKey.PrimaryKeys) > 0) != found {
					t.Errorf("BatchGetRow %s = %s [%s], want [%s] found %v", key, pkText(&r.PrimaryKey), got, want, found)
				}
			}

			var want []string
			for _, key := range []string{"both", "only"} { // logical order
				if cols, ok := tc.want[key]; ok {
					want = append(want, fmt.Sprintf("pk=%q %s", key, cols))
				}
			}
			crit := ots.RangeRowQueryCriteria{TableName: "orders", StartPrimaryKey: infMin("pk"), EndPrimaryKey: infMax("pk"),
				Direction: ots.FORWARD, ColumnsToGet: tc.cols, MaxVersion: 1, Limit: 1}
			var pages []string
			for {
				q := crit
				resp, err := c.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &q})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range resp.Rows {
					pages = append(pages, pkText(r.PrimaryKey)+" "+colNames(r.Columns))
				}
				if resp.NextStartPrimaryKey == nil {
					break
				}
				crit.StartPrimaryKey = resp.NextStartPrimaryKey
			}
			if !slices.Equal(pages, want) {
				t.Errorf("GetRange pages = %q, want %q", pages, want)
			}
			crit.StartPrimaryKey, crit.Limit = infMin("pk"), 0
			var scanned []string
			for r, err := range c.Scan(context.Background(), &crit) {
				if err != nil {
					t.Fatal(err)
				}
				scanned = append(scanned, pkText(r.PrimaryKey)+" "+colNames(r.Columns))
			}
			if !slices.Equal(scanned, want) {
				t.Errorf("Scan = %q, want %q", scanned, want)
			}
		})
	}
}

// TestIndexedTableDeleteRefused: DeleteTable of a table with indexes fails with ErrIndexedTable (its
// index tables would be left behind) and deletes nothing; a table without indexes is deleted.
func TestIndexedTableDeleteRefused(t *testing.T) {
	e, _, c := indexedEnv(t)
	ctx := context.Background()
	_, err := c.DeleteTable(&ots.DeleteTableRequest{TableName: "orders"})
	if !errors.Is(err, ErrIndexedTable) {
		t.Fatalf("DeleteTable(orders) = %v, want ErrIndexedTable", err)
	}
	for _, name := range []string{"orders", client.IndexTableName("orders", "by_a")} {
		if _, err := e.backend.TableMeta(ctx, name); err != nil {
			t.Errorf("after the refused delete, table %s: %v", name, err)
		}
	}
	if _, err := c.DeleteTable(&ots.DeleteTableRequest{TableName: "plain"}); err != nil {
		t.Fatalf("DeleteTable(plain): %v", err)
	}
	if _, err := e.backend.TableMeta(ctx, "plain"); !errors.Is(err, backends.ErrTableNotFound) {
		t.Errorf("after deleting plain, its meta: %v, want ErrTableNotFound", err)
	}
}
