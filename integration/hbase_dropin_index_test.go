//go:build integration

package integration

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/dropin"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestDropinIndexedTable: on a table with indexes, made and written by client.Table, every
// gohbase write through the drop-in fails with dropin.ErrIndexedTable and changes nothing (the row
// reads the same, the index verifies clean); Get and both scan directions return the user's cells
// without the version column unless the request names it, and a row holding that column alone is
// no row.
func TestDropinIndexedTable(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 3*time.Minute)
	s := testkit.Salter(t, "hash:4")
	name := hbasetest.Table("brine_dropix")
	it, err := e.client.CreateTable(ctx, name, client.TableConfig{Salter: s, Indexes: []client.IndexConfig{
		{Name: "by_a", Parts: []client.IndexPart{client.ColumnPart(fam, "a")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	testkit.DeleteAtEnd(t, name, e.client.DeleteTable)
	for key, a := range map[string]string{"k1": "1", "k2": "2"} {
		if err := it.Put(ctx, []byte(key), client.Cell{Family: fam, Qualifier: "a", Value: []byte(a)},
			client.Cell{Family: fam, Qualifier: "b", Value: []byte("b" + a)}); err != nil {
			t.Fatal(err)
		}
	}
	// A row holding the version column alone, as a write of the protocol may leave one for a moment.
	only, _ := s.AppendPhysical(nil, []byte("k3"))
	version := backends.Cell{Family: fam, Qualifier: indexproto.VersionQualifier, Value: []byte("tok")}
	if _, err := e.backend.Apply(ctx, name, []backends.Mutation{{Key: only, Cells: []backends.Cell{version}}}); err != nil {
		t.Fatal(err)
	}
	dc := newDropin(t, e)

	vals := map[string]map[string][]byte{fam: {"a": []byte("9")}}
	mut := func(m *hrpc.Mutate, err error) *hrpc.Mutate {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	writes := map[string]func() error{
		"Put":    func() error { _, err := dc.Put(mut(hrpc.NewPutStr(ctx, name, "k1", vals))); return err },
		"Delete": func() error { _, err := dc.Delete(mut(hrpc.NewDelStr(ctx, name, "k1", nil))); return err },
		"Append": func() error { _, err := dc.Append(mut(hrpc.NewAppStr(ctx, name, "k1", vals))); return err },
		"Increment": func() error {
			_, err := dc.Increment(mut(hrpc.NewIncStrSingle(ctx, name, "k1", fam, "n", 1)))
			return err
		},
		"CheckAndPut": func() error {
			_, err := dc.CheckAndPut(mut(hrpc.NewPutStr(ctx, name, "k1", vals)), fam, "a", []byte("1"))
			return err
		},
	}
	for call, write := range writes {
		if err := write(); !errors.Is(err, dropin.ErrIndexedTable) {
			t.Errorf("%s: %v, want ErrIndexedTable", call, err)
		}
	}
	row, err := it.Get(ctx, []byte("k1"))
	if got := cellsText(row.Cells); err != nil || got != "d:a=1 d:b=b1" {
		t.Errorf("k1 after the refused writes: %q, %v", got, err)
	}
	if rep, err := indextest.Index(t, it, "by_a").Verify(ctx); err != nil || rep.Problems() != 0 {
		t.Errorf("Verify: %v, %v", rep, err)
	}

	named := hrpc.Families(map[string][]string{fam: {"a", indexproto.VersionQualifier}})
	for _, g := range []struct {
		key  string
		opts []func(hrpc.Call) error
		want string
	}{
		{"k1", nil, "d:a=1 d:b=b1"},
		{"k1", []func(hrpc.Call) error{named}, "d:_brine_v d:a=1"},
		{"k3", nil, ""},
		{"k3", []func(hrpc.Call) error{named}, "d:_brine_v"},
	} {
		get, err := hrpc.NewGetStr(ctx, name, g.key, g.opts...)
		if err != nil {
			t.Fatal(err)
		}
		r, err := dc.Get(get)
		if got := resultText(r); err != nil || got != g.want {
			t.Errorf("Get %s (%d options) = %q, %v; want %q", g.key, len(g.opts), got, err, g.want)
		}
	}
	for key, want := range map[string]bool{"k1": true, "k3": false} {
		get, err := hrpc.NewGetStr(ctx, name, key)
		if err != nil {
			t.Fatal(err)
		}
		get.ExistsOnly()
		if r, err := dc.Get(get); err != nil || r.Exists == nil || *r.Exists != want {
			t.Errorf("Get %s ExistsOnly = %v, %v; want %v", key, r, err, want)
		}
	}

	for _, sc := range []struct {
		name string
		opts []func(hrpc.Call) error
		want []string
	}{
		{"forward", nil, []string{"k1 d:a=1 d:b=b1", "k2 d:a=2 d:b=b2"}},
		{"reversed", []func(hrpc.Call) error{hrpc.Reversed()}, []string{"k2 d:a=2 d:b=b2", "k1 d:a=1 d:b=b1"}},
		{"version named", []func(hrpc.Call) error{named}, []string{"k1 d:_brine_v d:a=1", "k2 d:_brine_v d:a=2", "k3 d:_brine_v"}},
	} {
		scan, err := hrpc.NewScanStr(ctx, name, sc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		scanner := dc.Scan(scan)
		var got []string
		for r, err := range testkit.Seq(scanner.Next, scanner.Close) {
			if err != nil {
				t.Fatalf("Scan %s: %v", sc.name, err)
			}
			got = append(got, string(r.Cells[0].Row)+" "+resultText(r))
		}
		if !slices.Equal(got, sc.want) {
			t.Errorf("Scan %s = %q, want %q", sc.name, got, sc.want)
		}
	}
}

// cellsText is "family:qualifier=value" of each cell, the version column's value left out (a token).
func cellsText(cells []client.Cell) string {
	var out []string
	for _, c := range cells {
		out = append(out, cellText(c.Family, c.Qualifier, c.Value))
	}
	return strings.Join(out, " ")
}

func resultText(r *hrpc.Result) string {
	if r == nil {
		return "<nil>"
	}
	var out []string
	for _, c := range r.Cells {
		out = append(out, cellText(string(c.Family), string(c.Qualifier), c.Value))
	}
	return strings.Join(out, " ")
}

func cellText(family, qualifier string, value []byte) string {
	if qualifier == indexproto.VersionQualifier {
		return family + ":" + qualifier
	}
	return family + ":" + qualifier + "=" + string(value)
}
