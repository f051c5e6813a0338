package dropin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

// indexedClient is a client whose table tbl has indexes (version column in family "d") and whose
// table "plain" has none, both salted hash:4, over a fake holding rows of tbl:
//
//	"both": d:a and the version column; "only": the version column alone;
//	"other": e:_brine_v, a user column that merely shares the name, in another family.
func indexedClient(t *testing.T) (*Client, *fakeHBase) {
	t.Helper()
	s := testkit.Salter(t, "hash:4")
	f := newFake()
	c := New(f)
	t.Cleanup(c.Close)
	c.meta = metaFunc(func(table string) (map[string]string, error) {
		meta := map[string]string{salting.MetaKey: s.Spec()}
		if table == tbl {
			meta[indexproto.MetaFamily] = "d"
			meta[indexproto.MetaPrefix+"by_a"] = "spec of by_a"
		}
		return meta, nil
	})
	v := indexproto.VersionQualifier
	f.rows[tbl] = map[string][]*hrpc.Cell{}
	for key, vals := range map[string]map[string]map[string][]byte{
		"both":  {"d": {"a": []byte("1"), v: []byte("tok")}},
		"only":  {"d": {v: []byte("tok")}},
		"other": {"e": {v: []byte("mine")}},
	} {
		phys := must[[]byte](t)(s.AppendPhysical(nil, []byte(key)))
		f.rows[tbl][string(phys)] = cellsOf(phys, vals)
	}
	return c, f
}

// cellText is "family:qualifier" of every cell.
func cellText(r *hrpc.Result) string {
	var out []string
	for _, c := range r.Cells {
		out = append(out, string(c.Family)+":"+string(c.Qualifier))
	}
	return strings.Join(out, " ")
}

// TestIndexedTableWritesRefused: every write to a table with indexes fails with ErrIndexedTable
// before anything is sent, while the same writes to a table without indexes go through.
func TestIndexedTableWritesRefused(t *testing.T) {
	ctx := context.Background()
	vals := map[string]map[string][]byte{"d": {"a": []byte("2")}}
	writes := []struct {
		name string
		do   func(c *Client, table string) error
	}{
		{"Put", func(c *Client, table string) error {
			_, err := c.Put(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, table, "both", vals)))
			return err
		}},
		{"Delete", func(c *Client, table string) error {
			_, err := c.Delete(must[*hrpc.Mutate](t)(hrpc.NewDelStr(ctx, table, "both", nil)))
			return err
		}},
		{"Append", func(c *Client, table string) error {
			_, err := c.Append(must[*hrpc.Mutate](t)(hrpc.NewAppStr(ctx, table, "both", vals)))
			return err
		}},
		{"Increment", func(c *Client, table string) error {
			_, err := c.Increment(must[*hrpc.Mutate](t)(hrpc.NewIncStrSingle(ctx, table, "both", "d", "n", 1)))
			return err
		}},
		{"CheckAndPut", func(c *Client, table string) error {
			_, err := c.CheckAndPut(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, table, "both", vals)), "d", "a", []byte("1"))
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			c, f := indexedClient(t)
			before := fmt.Sprint(f.keys(tbl))
			err := w.do(c, tbl)
			if !errors.Is(err, ErrIndexedTable) || !strings.Contains(err.Error(), "client.Table") {
				t.Fatalf("%s on a table with indexes: %v, want ErrIndexedTable naming client.Table", w.name, err)
			}
			if n := len(f.calls()); n != 0 || fmt.Sprint(f.keys(tbl)) != before {
				t.Fatalf("%d requests reached gohbase", n)
			}
			if err := w.do(c, "plain"); err != nil || len(f.calls()) != 1 {
				t.Fatalf("%s on a table without indexes: %v, %d requests", w.name, err, len(f.calls()))
			}
		})
	}
}

// TestIndexedTableReadsHideVersion: Get and Scan drop the version column unless the request names
// it, a row holding it alone is no row, and an existence-only Get answers for the visible cells.
func TestIndexedTableReadsHideVersion(t *testing.T) {
	ctx := context.Background()
	v := indexproto.VersionQualifier
	named := hrpc.Families(map[string][]string{"d": {"a", v}})
	family := hrpc.Families(map[string][]string{"d": nil})
	gets := []struct {
		name, key string
		opts      []func(hrpc.Call) error
		want      string
	}{
		{"user cells", "both", nil, "d:a"},
		{"version named", "both", []func(hrpc.Call) error{named}, "d:_brine_v d:a"},
		{"whole family", "both", []func(hrpc.Call) error{family}, "d:a"},
		{"version alone", "only", nil, ""},
		{"version alone, named", "only", []func(hrpc.Call) error{named}, "d:_brine_v"},
		{"same name, other family", "other", nil, "e:_brine_v"},
		{"no such row", "none", nil, ""},
	}
	for _, g := range gets {
		t.Run("Get "+g.name, func(t *testing.T) {
			c, _ := indexedClient(t)
			r, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, g.key, g.opts...)))
			if err != nil || cellText(r) != g.want {
				t.Fatalf("Get %s = %q, %v; want %q", g.key, cellText(r), err, g.want)
			}
		})
	}

	for key, want := range map[string]bool{"both": true, "only": false, "other": true, "none": false} {
		t.Run("ExistsOnly "+key, func(t *testing.T) {
			c, f := indexedClient(t)
			g := must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, key))
			g.ExistsOnly()
			r, err := c.Get(g)
			if err != nil || r.Exists == nil || *r.Exists != want || len(r.Cells) != 0 {
				t.Fatalf("Get %s ExistsOnly = %v, %v; want Exists %v and no cells", key, r, err, want)
			}
			if sent := requestProto(f.calls()[0]).(*pb.GetRequest); sent.Get.GetExistenceOnly() {
				t.Error("sent existence-only: the server would count the hidden column")
			}
		})
	}

	scans := []struct {
		name string
		opts []func(hrpc.Call) error
		want []string
	}{
		{"all", nil, []string{"both: d:a", "other: e:_brine_v"}},
		{"version named", []func(hrpc.Call) error{named}, []string{"both: d:_brine_v d:a", "only: d:_brine_v", "other: e:_brine_v"}},
	}
	for _, sc := range scans {
		t.Run("Scan "+sc.name, func(t *testing.T) {
			c, _ := indexedClient(t)
			s := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanStr(ctx, tbl, sc.opts...)))
			defer s.Close()
			var got []string
			for {
				r, err := s.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(r.Cells[0].Row)+": "+cellText(r))
			}
			if !slices.Equal(got, sc.want) {
				t.Fatalf("Scan = %q, want %q", got, sc.want)
			}
		})
	}
}
