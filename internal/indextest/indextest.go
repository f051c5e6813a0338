// Package indextest holds the index-table cases every store runs: the table-driven steps (insert,
// update of an indexed value and of a covered column, delete, re-insert, unique keys, adversarial
// values), scan options, writers racing index scans, and the check that every index answers what
// the main table alone says and verifies clean after repair. client's tests run them on the embedded
// stores; integration/ runs them on HBase and on the Tablestore server.
package indextest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
)

// OrderIndexes are the guides' order example: orders keyed [order_no], queried by seller
// ([seller][ts desc][order_no], amount covered), by buyer, and by a unique external id.
func OrderIndexes(t testing.TB) []client.IndexConfig {
	return []client.IndexConfig{
		{Name: "by_seller", Salter: testkit.Salter(t, "hash:4:fields=1"), Covered: []client.Column{{Family: "d", Qualifier: "amount"}},
			Parts: []client.IndexPart{client.ColumnPart("d", "seller"), client.ColumnPart("d", "ts").Descending(), client.KeyPart(0)}},
		{Name: "by_buyer", Salter: testkit.Salter(t, "hash:3"), Parts: []client.IndexPart{client.ColumnPart("d", "buyer")}},
		{Name: "by_ext", Salter: testkit.Salter(t, "hash:2"), Unique: true, Covered: []client.Column{{Family: "d", Qualifier: "amount"}},
			Parts: []client.IndexPart{client.ColumnPart("d", "ext")}},
	}
}

// NewOrders creates the order table with OrderIndexes on b, under name, and drops it (with its
// index tables) when the test ends.
func NewOrders(t testing.TB, b backends.Backend, name string) *client.Table {
	t.Helper()
	c := client.New(b, client.WithConcurrency(4), client.WithLogger(slog.New(slog.DiscardHandler)))
	tbl, err := c.CreateTable(context.Background(), name, client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.DeleteTable(context.Background(), name) })
	return tbl
}

// Index is tbl's index of that name, failing the test when it has none.
func Index(t testing.TB, tbl *client.Table, name string) *client.Index {
	t.Helper()
	ix, err := tbl.Index(name)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// OrderKey is an order's logical key.
func OrderKey(no string) []byte { return keys.AppendText(nil, keys.KindString, no) }

// TS is a big-endian timestamp value.
func TS(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

type order struct{ no, seller, buyer, ext, amount string }

func (o order) cells(time uint64) []client.Cell {
	return []client.Cell{
		{Family: "d", Qualifier: "seller", Value: []byte(o.seller)},
		{Family: "d", Qualifier: "buyer", Value: []byte(o.buyer)},
		{Family: "d", Qualifier: "ext", Value: []byte(o.ext)},
		{Family: "d", Qualifier: "ts", Value: TS(time)},
		{Family: "d", Qualifier: "amount", Value: []byte(o.amount)},
	}
}

// Answer is one row of a query by index, reduced to what the checks compare.
type Answer struct {
	Entry, Main string
	Cells       string
}

func answerOf(key, main []byte, cells []client.Cell, cols []client.Column) Answer {
	var b bytes.Buffer
	for _, c := range cells {
		if c.Qualifier == client.IndexVersionQualifier {
			continue
		}
		if len(cols) > 0 && !slices.ContainsFunc(cols, func(col client.Column) bool {
			return col.Family == c.Family && (col.Qualifier == "" || col.Qualifier == c.Qualifier)
		}) {
			continue
		}
		fmt.Fprintf(&b, "%s:%s=%q;", c.Family, c.Qualifier, c.Value)
	}
	return Answer{Entry: string(key), Main: string(main), Cells: b.String()}
}

// Reference is the answer to a full query by ix computed from the main table alone.
func Reference(t testing.TB, tbl *client.Table, ix *client.Index, cols []client.Column) []Answer {
	t.Helper()
	var out []Answer
	for row, err := range tbl.Scan(context.Background(), client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		k, ok, err := ix.EntryKey(row.Key, row.Cells)
		if err != nil {
			t.Fatal(err)
		}
		// A row with none of the columns asked for is not an answer, as in Table.Scan.
		if a := answerOf(k, row.Key, row.Cells, cols); ok && (len(cols) == 0 || a.Cells != "") {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b Answer) int { return bytes.Compare([]byte(a.Entry), []byte(b.Entry)) })
	return out
}

// Query returns a query's answers; cols, when given, are passed as Columns.
func Query(t testing.TB, ix *client.Index, r client.Range, opts ...client.ReadOption) []Answer {
	t.Helper()
	var out []Answer
	for ir, err := range ix.Scan(context.Background(), r, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, answerOf(ir.IndexKey, ir.Key, ir.Cells, nil))
	}
	return out
}

// AssertQueries asserts that every index answers what the main table says, whole and covered,
// without repairing anything: what a reader sees whatever writers left (or died leaving).
func AssertQueries(t testing.TB, tbl *client.Table) {
	t.Helper()
	for _, ix := range tbl.Indexes() {
		assertQuery(t, tbl, ix)
	}
}

// assertQuery asserts that ix answers what the main table says, whole and covered.
func assertQuery(t testing.TB, tbl *client.Table, ix *client.Index) {
	t.Helper()
	amount := []client.Column{{Family: "d", Qualifier: "amount"}}
	if got, want := Query(t, ix, client.Range{}), Reference(t, tbl, ix, nil); !slices.Equal(got, want) {
		t.Fatalf("index %s:\n got %q\nwant %q", ix.Name(), got, want)
	}
	if len(ix.Config().Covered) > 0 {
		if got, want := Query(t, ix, client.Range{}, client.Columns(amount...)), Reference(t, tbl, ix, amount); !slices.Equal(got, want) {
			t.Fatalf("index %s covered:\n got %q\nwant %q", ix.Name(), got, want)
		}
	}
}

// AssertServing asserts what a reader sees where indexes may be building (under an exclusive
// job's fence, or what a killed job left): a query by a building index fails with
// ErrIndexBuilding, and every active one answers what the main table says, as in AssertQueries. It
// returns the building ones' names, sorted.
func AssertServing(t testing.TB, tbl *client.Table) (building []string) {
	t.Helper()
	for _, ix := range tbl.Indexes() {
		if ix.State() != client.IndexBuilding {
			assertQuery(t, tbl, ix)
			continue
		}
		if n, err := testkit.CountErr(ix.Scan(context.Background(), client.Range{})); !errors.Is(err, client.ErrIndexBuilding) {
			t.Fatalf("index %s is building, yet a query by it gave %d rows, %v; want ErrIndexBuilding", ix.Name(), n, err)
		}
		building = append(building, ix.Name())
	}
	return building
}

// AssertIndexes asserts AssertQueries and, after a repairing read (grace 0: no writer may be
// running), that Verify finds no problem.
func AssertIndexes(t testing.TB, tbl *client.Table) {
	t.Helper()
	AssertQueries(t, tbl)
	for _, ix := range tbl.Indexes() {
		Query(t, ix.WithGrace(0), client.Range{})
		rep, err := ix.Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Problems() != 0 {
			t.Fatalf("after repair: %v %q", rep, rep.Examples)
		}
	}
}

func mainKeys(answers []Answer) []string {
	out := make([]string, len(answers))
	for i, a := range answers {
		out[i] = a.Main
	}
	return out
}

type step struct {
	name string
	do   func(t *testing.T, tbl *client.Table)
	// seller -> the orders a query by that seller returns, newest first.
	bySeller map[string][]string
	ext      map[string]string // unique ext -> order ("" absent)
}

func steps(ctx context.Context) []step {
	// Adversarial values: empty, 0x00/0xFF, and a value that is a prefix of another.
	sellers := []string{"", "\x00", "\xff", "host1", "host12", "a\x00b"}
	put := func(o order, tm uint64) func(t *testing.T, tbl *client.Table) {
		return func(t *testing.T, tbl *client.Table) {
			if err := tbl.Put(ctx, OrderKey(o.no), o.cells(tm)...); err != nil {
				t.Fatal(err)
			}
		}
	}
	putCell := func(no, q, v string) func(t *testing.T, tbl *client.Table) {
		return func(t *testing.T, tbl *client.Table) {
			if err := tbl.Put(ctx, OrderKey(no), client.Cell{Family: "d", Qualifier: q, Value: []byte(v)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return []step{
		{name: "insert", do: func(t *testing.T, tbl *client.Table) {
			for i, s := range sellers {
				put(order{no: fmt.Sprint("o", i), seller: s, buyer: "b", ext: "e" + fmt.Sprint(i), amount: "1"}, uint64(i))(t, tbl)
			}
			put(order{no: "o10", seller: "host1", buyer: "b", ext: "e10", amount: "2"}, 100)(t, tbl)
		}, bySeller: map[string][]string{"host1": {"o10", "o3"}, "host12": {"o4"}, "": {"o0"}, "\x00": {"o1"}, "\xff": {"o2"}},
			ext: map[string]string{"e3": "o3", "e10": "o10"}},
		{name: "update indexed value", do: putCell("o3", "seller", "host12"),
			bySeller: map[string][]string{"host1": {"o10"}, "host12": {"o4", "o3"}}},
		{name: "update covered column", do: putCell("o10", "amount", "9"), bySeller: map[string][]string{"host1": {"o10"}}},
		{name: "delete", do: func(t *testing.T, tbl *client.Table) {
			if err := tbl.Delete(ctx, OrderKey("o10")); err != nil {
				t.Fatal(err)
			}
		}, bySeller: map[string][]string{"host1": nil}, ext: map[string]string{"e10": ""}},
		{name: "re-insert", do: put(order{no: "o10", seller: "host1", buyer: "c", ext: "e10", amount: "3"}, 5),
			bySeller: map[string][]string{"host1": {"o10"}}, ext: map[string]string{"e10": "o10"}},
		{name: "unique key taken", do: func(t *testing.T, tbl *client.Table) {
			err := tbl.Put(ctx, OrderKey("o4"), client.Cell{Family: "d", Qualifier: "ext", Value: []byte("e10")})
			if !errors.Is(err, client.ErrUniqueViolation) {
				t.Fatalf("got %v, want ErrUniqueViolation", err)
			}
		}, ext: map[string]string{"e10": "o10", "e4": "o4"}},
		{name: "apply moves a unique key", do: func(t *testing.T, tbl *client.Table) {
			rowErrs, err := tbl.Apply(ctx, []client.Mutation{
				{Key: OrderKey("o10"), Delete: true},
				{Key: OrderKey("o5"), Cells: []client.Cell{{Family: "d", Qualifier: "amount", Value: []byte("7")}}},
			})
			if err != nil || rowErrs != nil {
				t.Fatal(err, rowErrs)
			}
			putCell("o4", "ext", "e10")(t, tbl)
		}, bySeller: map[string][]string{"host1": nil}, ext: map[string]string{"e10": "o4", "e4": ""}},
		{name: "refused column delete", do: func(t *testing.T, tbl *client.Table) {
			if err := tbl.Delete(ctx, OrderKey("o4"), client.Column{Family: "d", Qualifier: "seller"}); !errors.Is(err, backends.ErrInvalidArgument) {
				t.Fatalf("got %v, want ErrInvalidArgument", err)
			}
		}, bySeller: map[string][]string{"host12": {"o4", "o3"}}},
	}
}

// Steps runs the table-driven cases on a fresh order table, checking after each step the queries
// it names and every index against the main table.
func Steps(t *testing.T, tbl *client.Table) {
	ctx := context.Background()
	bySeller, byExt := Index(t, tbl, "by_seller"), Index(t, tbl, "by_ext")
	for _, st := range append(steps(ctx), writeSteps(ctx)...) {
		st.do(t, tbl)
		for seller, want := range st.bySeller {
			p, err := bySeller.Prefix([]byte(seller))
			if err != nil {
				t.Fatal(err)
			}
			var wantKeys []string
			for _, no := range want {
				wantKeys = append(wantKeys, string(OrderKey(no)))
			}
			if got := mainKeys(Query(t, bySeller, client.PrefixRange(p))); !slices.Equal(got, wantKeys) {
				t.Fatalf("%s: seller %q: got %q, want %q", st.name, seller, got, wantKeys)
			}
		}
		for ext, no := range st.ext {
			k, _ := byExt.Prefix([]byte(ext))
			row, err := byExt.Get(ctx, k)
			switch {
			case no == "" && !errors.Is(err, client.ErrNotFound):
				t.Fatalf("%s: ext %q: got %v, want ErrNotFound", st.name, ext, err)
			case no != "" && (err != nil || string(row.Key) != string(OrderKey(no))):
				t.Fatalf("%s: ext %q: got %q %v, want %q", st.name, ext, row.Key, err, no)
			}
		}
		AssertIndexes(t, tbl)
	}
}

// RandomWrite is one write of the crash and concurrency tests: new values for some columns of one
// of a few rows (sellers, buyers and unique ids from small sets, so that they collide), a row
// delete, or a batch through Apply.
func RandomWrite(ctx context.Context, tbl *client.Table, rng *rand.Rand, rows int) error {
	key := func() []byte { return OrderKey(fmt.Sprint("o", rng.IntN(rows))) }
	cells := func() []client.Cell {
		var cs []client.Cell
		if rng.IntN(2) == 0 {
			cs = append(cs, client.Cell{Family: "d", Qualifier: "seller", Value: []byte([]string{"", "host1", "host12", "\xff"}[rng.IntN(4)])})
		}
		if rng.IntN(2) == 0 {
			cs = append(cs, client.Cell{Family: "d", Qualifier: "buyer", Value: []byte(fmt.Sprint("b", rng.IntN(3)))})
		}
		if rng.IntN(3) == 0 {
			cs = append(cs, client.Cell{Family: "d", Qualifier: "ext", Value: []byte(fmt.Sprint("e", rng.IntN(rows)))})
		}
		return append(cs,
			client.Cell{Family: "d", Qualifier: "ts", Value: TS(uint64(rng.IntN(3)))},
			client.Cell{Family: "d", Qualifier: "amount", Value: []byte(fmt.Sprint(rng.IntN(100)))})
	}
	switch rng.IntN(8) {
	case 0:
		return tbl.Delete(ctx, key())
	case 1:
		_, err := tbl.Apply(ctx, []client.Mutation{{Key: key(), Cells: cells()}, {Key: key(), Cells: cells()}, {Key: key(), Delete: true}})
		return err
	default:
		return tbl.Put(ctx, key(), cells()...)
	}
}
