package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The guides' order example: orders keyed [order_no], queried by seller ([seller][ts desc][order_no]),
// by buyer, and by a unique external id.
func orderIndexes(t testing.TB) []IndexConfig {
	s := func(spec string) salting.Salter {
		sl, err := salting.ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		return sl
	}
	return []IndexConfig{
		{Name: "by_seller", Salter: s("hash:4:fields=1"), Covered: []Column{{Family: "d", Qualifier: "amount"}},
			Parts: []IndexPart{ColumnPart("d", "seller"), ColumnPart("d", "ts").Descending(), KeyPart(0)}},
		{Name: "by_buyer", Salter: s("hash:3"), Parts: []IndexPart{ColumnPart("d", "buyer")}},
		{Name: "by_ext", Salter: s("hash:2"), Unique: true, Covered: []Column{{Family: "d", Qualifier: "amount"}},
			Parts: []IndexPart{ColumnPart("d", "ext")}},
	}
}

// indexStores are the stores every index test runs on.
func indexStores(t *testing.T) map[string]func(t *testing.T) backends.Backend {
	return map[string]func(t *testing.T) backends.Backend{
		"memory": func(*testing.T) backends.Backend { return memory.New() },
		"local": func(t *testing.T) backends.Backend {
			s, err := local.Open(filepath.Join(t.TempDir(), "db"), local.WithNoSync())
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"faulty": func(*testing.T) backends.Backend { return faulty.Wrap(memory.New(), faulty.Config{Seed: 1}) },
	}
}

func newOrders(t testing.TB, b backends.Backend) *Table {
	t.Helper()
	c := New(b, WithConcurrency(4), WithLogger(slog.New(slog.DiscardHandler)))
	t.Cleanup(func() { c.Close() })
	s, _ := salting.ParseSpec("hash:4")
	tbl, err := c.CreateTable(context.Background(), "orders", TableConfig{Salter: s, Indexes: orderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func orderKey(no string) []byte { return keys.AppendText(nil, keys.KindString, no) }

func ts(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

type order struct{ no, seller, buyer, ext, amount string }

func (o order) cells(time uint64) []Cell {
	return []Cell{
		{Family: "d", Qualifier: "seller", Value: []byte(o.seller)},
		{Family: "d", Qualifier: "buyer", Value: []byte(o.buyer)},
		{Family: "d", Qualifier: "ext", Value: []byte(o.ext)},
		{Family: "d", Qualifier: "ts", Value: ts(time)},
		{Family: "d", Qualifier: "amount", Value: []byte(o.amount)},
	}
}

// indexAnswer is one row of a query by index, reduced to what the tests compare.
type indexAnswer struct {
	entry, main string
	cells       string
}

func answerOf(key, main []byte, cells []Cell) indexAnswer {
	var b bytes.Buffer
	for _, c := range dataCells(cells) {
		fmt.Fprintf(&b, "%s:%s=%q;", c.Family, c.Qualifier, c.Value)
	}
	return indexAnswer{entry: string(key), main: string(main), cells: b.String()}
}

// reference is the answer to a full query by ix computed from the main table alone.
func reference(t testing.TB, ix *Index, cols []Column) []indexAnswer {
	t.Helper()
	var out []indexAnswer
	for row, err := range ix.t.Scan(context.Background(), Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		k, ok, err := ix.entryKey(row.Key, row.Cells)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			out = append(out, answerOf(k, row.Key, project(dataCells(row.Cells), cols)))
		}
	}
	slices.SortFunc(out, func(a, b indexAnswer) int { return bytes.Compare([]byte(a.entry), []byte(b.entry)) })
	return out
}

func query(t testing.TB, ix *Index, r Range, opts ...ReadOption) []indexAnswer {
	t.Helper()
	var out []indexAnswer
	for ir, err := range ix.Scan(context.Background(), r, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, answerOf(ir.IndexKey, ir.Key, ir.Cells))
	}
	return out
}

// assertIndexes asserts that every index answers what the main table says, whole and covered, and,
// after a repairing read, that Verify finds nothing wrong.
func assertIndexes(t testing.TB, tbl *Table) {
	t.Helper()
	amount := []Column{{Family: "d", Qualifier: "amount"}}
	for _, ix := range tbl.Indexes() {
		if got, want := query(t, ix, Range{}), reference(t, ix, nil); !slices.Equal(got, want) {
			t.Fatalf("index %s:\n got %q\nwant %q", ix.Name(), got, want)
		}
		if len(ix.cfg.Covered) > 0 {
			if got, want := query(t, ix, Range{}, Columns(amount...)), reference(t, ix, amount); !slices.Equal(got, want) {
				t.Fatalf("index %s covered:\n got %q\nwant %q", ix.Name(), got, want)
			}
		}
		query(t, ix.WithGrace(0), Range{}) // repairs what it meets
		rep, err := ix.Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Problems() != 0 {
			t.Fatalf("after repair: %v %q", rep, rep.Examples)
		}
	}
}

func mainKeys(answers []indexAnswer) []string {
	out := make([]string, len(answers))
	for i, a := range answers {
		out[i] = a.main
	}
	return out
}

func TestIndexSteps(t *testing.T) {
	ctx := context.Background()
	// Adversarial values: empty, 0x00/0xFF, and a value that is a prefix of another.
	sellers := []string{"", "\x00", "\xff", "host1", "host12", "a\x00b"}
	type step struct {
		name string
		do   func(t *testing.T, tbl *Table)
		// seller -> the orders a query by that seller returns, newest first.
		bySeller map[string][]string
		ext      map[string]string // unique ext -> order ("" absent)
	}
	put := func(o order, tm uint64) func(t *testing.T, tbl *Table) {
		return func(t *testing.T, tbl *Table) {
			if err := tbl.Put(ctx, orderKey(o.no), o.cells(tm)...); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []step{
		{name: "insert", do: func(t *testing.T, tbl *Table) {
			for i, s := range sellers {
				put(order{no: fmt.Sprint("o", i), seller: s, buyer: "b", ext: "e" + fmt.Sprint(i), amount: "1"}, uint64(i))(t, tbl)
			}
			put(order{no: "o10", seller: "host1", buyer: "b", ext: "e10", amount: "2"}, 100)(t, tbl)
		}, bySeller: map[string][]string{"host1": {"o10", "o3"}, "host12": {"o4"}, "": {"o0"}, "\x00": {"o1"}, "\xff": {"o2"}},
			ext: map[string]string{"e3": "o3", "e10": "o10"}},
		{name: "update indexed value", do: func(t *testing.T, tbl *Table) {
			if err := tbl.Put(ctx, orderKey("o3"), Cell{Family: "d", Qualifier: "seller", Value: []byte("host12")}); err != nil {
				t.Fatal(err)
			}
		}, bySeller: map[string][]string{"host1": {"o10"}, "host12": {"o4", "o3"}}},
		{name: "update covered column", do: func(t *testing.T, tbl *Table) {
			if err := tbl.Put(ctx, orderKey("o10"), Cell{Family: "d", Qualifier: "amount", Value: []byte("9")}); err != nil {
				t.Fatal(err)
			}
		}, bySeller: map[string][]string{"host1": {"o10"}}},
		{name: "delete", do: func(t *testing.T, tbl *Table) {
			if err := tbl.Delete(ctx, orderKey("o10")); err != nil {
				t.Fatal(err)
			}
		}, bySeller: map[string][]string{"host1": nil}, ext: map[string]string{"e10": ""}},
		{name: "re-insert", do: put(order{no: "o10", seller: "host1", buyer: "c", ext: "e10", amount: "3"}, 5),
			bySeller: map[string][]string{"host1": {"o10"}}, ext: map[string]string{"e10": "o10"}},
		{name: "unique key taken", do: func(t *testing.T, tbl *Table) {
			err := tbl.Put(ctx, orderKey("o4"), Cell{Family: "d", Qualifier: "ext", Value: []byte("e10")})
			if !errors.Is(err, ErrUniqueViolation) {
				t.Fatalf("got %v, want ErrUniqueViolation", err)
			}
		}, ext: map[string]string{"e10": "o10", "e4": "o4"}},
		{name: "apply moves a unique key", do: func(t *testing.T, tbl *Table) {
			rowErrs, err := tbl.Apply(ctx, []Mutation{
				{Key: orderKey("o10"), Delete: true},
				{Key: orderKey("o5"), Cells: []Cell{{Family: "d", Qualifier: "amount", Value: []byte("7")}}},
			})
			if err != nil || rowErrs != nil {
				t.Fatal(err, rowErrs)
			}
			if err := tbl.Put(ctx, orderKey("o4"), Cell{Family: "d", Qualifier: "ext", Value: []byte("e10")}); err != nil {
				t.Fatal(err)
			}
		}, bySeller: map[string][]string{"host1": nil}, ext: map[string]string{"e10": "o4", "e4": ""}},
		{name: "refused column delete", do: func(t *testing.T, tbl *Table) {
			if err := tbl.Delete(ctx, orderKey("o4"), Column{Family: "d", Qualifier: "seller"}); !errors.Is(err, backends.ErrInvalidArgument) {
				t.Fatalf("got %v, want ErrInvalidArgument", err)
			}
		}, bySeller: map[string][]string{"host12": {"o4", "o3"}}},
	}
	for name, open := range indexStores(t) {
		t.Run(name, func(t *testing.T) {
			tbl := newOrders(t, open(t))
			bySeller, byExt := tbl.Index("by_seller"), tbl.Index("by_ext")
			for _, st := range steps {
				st.do(t, tbl)
				for seller, want := range st.bySeller {
					p, err := bySeller.Prefix([]byte(seller))
					if err != nil {
						t.Fatal(err)
					}
					var wantKeys []string
					for _, no := range want {
						wantKeys = append(wantKeys, string(orderKey(no)))
					}
					if got := mainKeys(query(t, bySeller, PrefixRange(p))); !slices.Equal(got, wantKeys) {
						t.Fatalf("%s: seller %q: got %q, want %q", st.name, seller, got, wantKeys)
					}
				}
				for ext, no := range st.ext {
					k, _ := byExt.Prefix([]byte(ext))
					row, err := byExt.Get(ctx, k)
					switch {
					case no == "" && !errors.Is(err, ErrNotFound):
						t.Fatalf("%s: ext %q: got %v, want ErrNotFound", st.name, ext, err)
					case no != "" && (err != nil || string(row.Key) != string(orderKey(no))):
						t.Fatalf("%s: ext %q: got %q %v, want %q", st.name, ext, row.Key, err, no)
					}
				}
				assertIndexes(t, tbl)
			}
		})
	}
}

func TestIndexScanOptions(t *testing.T) {
	ctx := context.Background()
	tbl := newOrders(t, memory.New())
	for i := range 40 {
		o := order{no: fmt.Sprintf("o%02d", i), seller: fmt.Sprint("s", i%3), buyer: "b", ext: fmt.Sprint("e", i), amount: fmt.Sprint(i)}
		if err := tbl.Put(ctx, orderKey(o.no), o.cells(uint64(i))...); err != nil {
			t.Fatal(err)
		}
	}
	ix := tbl.Index("by_seller")
	all := query(t, ix, Range{})
	if len(all) != 40 {
		t.Fatalf("got %d rows", len(all))
	}
	rev := query(t, ix, Range{}, Reverse())
	slices.Reverse(rev)
	if !slices.Equal(rev, all) {
		t.Fatal("reverse is not the reverse order")
	}
	// Paging with a cursor, forward and backward, gives the whole answer once.
	for _, reverse := range []bool{false, true} {
		var got []indexAnswer
		var cursor []byte
		for {
			opts := []ReadOption{Limit(7)}
			if reverse {
				opts = append(opts, Reverse())
			}
			if cursor != nil {
				opts = append(opts, ResumeAfter(cursor))
			}
			page := query(t, ix, Range{}, opts...)
			if len(page) > 7 {
				t.Fatalf("page of %d", len(page))
			}
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			cursor = []byte(page[len(page)-1].entry)
		}
		if reverse {
			slices.Reverse(got)
		}
		if !slices.Equal(got, all) {
			t.Fatalf("reverse=%v: paged answer differs", reverse)
		}
	}
	cols := query(t, ix, Range{}, Columns(Column{Family: "d", Qualifier: "buyer"}), Limit(1))
	if len(cols) != 1 || cols[0].cells != `d:buyer="b";` {
		t.Fatalf("columns: %q", cols)
	}
	if _, err := tbl.Index("by_buyer").Get(ctx, []byte("x")); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("Get on a non-unique index: %v", err)
	}
}

func TestIndexDefinitions(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	tbl := newOrders(t, b)
	c := tbl.c
	s, _ := salting.ParseSpec("hash:4")
	got, err := c.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Indexes()) != 3 || got.Index("by_seller").Spec() != "salt=hash:4:fields=1|key=c:d:seller,c:d:ts:desc,k0|cover=d:amount" {
		t.Fatalf("opened with %d indexes, by_seller %q", len(got.Indexes()), got.Index("by_seller").Spec())
	}
	other := orderIndexes(t)[:2]
	if _, err := c.CreateOrOpenTable(ctx, "orders", TableConfig{Salter: s, Indexes: other}); !errors.Is(err, ErrIndexMismatch) {
		t.Fatalf("reopen with other indexes: %v", err)
	}
	if _, err := c.CreateOrOpenTable(ctx, "orders", TableConfig{Salter: s, Indexes: orderIndexes(t)}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []IndexConfig{
		{Name: "", Parts: []IndexPart{KeyPart(0)}},
		{Name: "x y", Parts: []IndexPart{KeyPart(0)}},
		{Name: "x"},
		{Name: "x", Parts: []IndexPart{ColumnPart("nofamily", "q")}},
		{Name: "x", Parts: []IndexPart{ColumnPart("d", "a:b")}},
		{Name: "x", Parts: []IndexPart{KeyPart(0).Descending()}},
	} {
		if _, err := c.CreateTable(ctx, "bad", TableConfig{Salter: s, Indexes: []IndexConfig{bad}}); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Fatalf("%+v: got %v, want ErrInvalidArgument", bad, err)
		}
	}
	if err := c.DeleteTable(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	names, _ := c.Tables(ctx)
	if len(names) != 0 {
		t.Fatalf("tables left: %q", names)
	}
}
