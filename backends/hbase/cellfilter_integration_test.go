//go:build integration

package hbase

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// TestPushedCellFilters: what serverFilters sends to the region servers keeps, on its own, exactly
// the cells the shared evaluator keeps (the driver's re-trim would hide a server that kept more), on
// rows with two families, several qualifiers and an older version.
func TestPushedCellFilters(t *testing.T) {
	zk := hbasetest.ZK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	raw := gohbase.NewClient(zk)
	defer raw.Close()
	b, err := New(raw, gohbase.NewAdminClient(zk), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	table := hbasetest.Table("cellpush")
	if err := b.CreateTable(ctx, table, backends.TableOptions{Families: []string{"d", "x"}, MaxVersions: 2}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.DeleteTable(context.Background(), table) }() // best effort
	ts := time.Now().Add(-time.Hour).UnixMilli()
	c := func(f, q, v string, ts int64) backends.Cell {
		return backends.Cell{Family: f, Qualifier: q, Value: []byte(v), Timestamp: ts}
	}
	muts := []backends.Mutation{
		{Key: []byte("k1"), Cells: []backends.Cell{c("d", "a", "1", ts), c("d", "b", "2", ts), c("d", "c", "3", ts), c("x", "a", "4", ts)}},
		{Key: []byte("k2"), Cells: []backends.Cell{c("d", "b", "5", ts), c("d", "b", "6", ts+1), c("x", "z", "7", ts)}},
		{Key: []byte("k3"), Cells: []backends.Cell{c("x", "n", "8", ts), c("x", "o", "9", ts)}},
	}
	if errs, err := b.Apply(ctx, table, muts); err != nil || errs != nil {
		t.Fatal(err, errs)
	}
	and := func(fs ...backends.Filter) backends.Filter {
		return backends.Filter{Kind: backends.FilterAnd, Subs: fs}
	}
	for _, f := range []backends.Filter{
		backends.FamilyRegexFilter("^x$"),
		backends.QualifierRegexFilter("^[ab]$"),
		backends.QualifierRangeFilter([]byte("a"), false, []byte("c"), true),
		backends.QualifierRangeFilter([]byte("n"), true, nil, false),
		and(backends.FamilyRegexFilter("d"), backends.QualifierRangeFilter(nil, false, []byte("b"), true)),
		backends.CellsPerRowFilter(0, 1),
		backends.CellsPerRowFilter(1, 2),
		backends.CellsPerRowFilter(3, 0),
	} {
		if err := driverkit.CheckFilter(&f, nil); err != nil {
			t.Fatal(err)
		}
		server, _ := serverFilters(&f, 1)
		if server == nil {
			t.Fatalf("%v: not pushed", f.Kind)
		}
		scan, err := hrpc.NewScanStr(ctx, table, hrpc.Filters(server))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		sc := raw.Scan(scan)
		for {
			res, err := sc.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got += rowText(rowFromCells(res.Cells[0].Row, pbCells(res)))
		}
		sc.Close()
		plain, err := b.Read(ctx, table, [][]byte{[]byte("k1"), []byte("k2"), []byte("k3")}, backends.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		for _, r := range plain {
			if r.Cells = driverkit.Apply(&f, r.Cells); len(r.Cells) > 0 {
				want += rowText(r)
			}
		}
		if got != want {
			t.Errorf("%v %+v: the server kept %s, the evaluator %s", f.Kind, f, got, want)
		}
	}
}

func rowText(r backends.Row) string {
	s := string(r.Key) + "["
	for _, c := range r.Cells {
		s += fmt.Sprintf(" %s:%s=%s", c.Family, c.Qualifier, c.Value)
	}
	return s + " ]"
}
