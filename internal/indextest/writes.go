package indextest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/client"
)

// writeSteps follow steps: the writes beyond Put, Delete and Apply (CheckAndMutate, Increment,
// Import), each checked by the step's queries and by AssertIndexes, and the reads' hiding of the
// version column.
func writeSteps(ctx context.Context) []step {
	col := func(q string) client.Column { return client.Column{Family: "d", Qualifier: q} }
	cell := func(q string, v []byte) client.Cell { return client.Cell{Family: "d", Qualifier: q, Value: v} }
	cond := func(q, v string) client.Condition {
		return client.Condition{Family: "d", Qualifier: q, Value: []byte(v)}
	}
	cam := func(no string, c client.Condition, m client.Mutation, want bool) func(t *testing.T, tbl *client.Table) {
		return func(t *testing.T, tbl *client.Table) {
			m.Key = OrderKey(no)
			if applied, err := tbl.CheckAndMutate(ctx, c, m); err != nil || applied != want {
				t.Fatalf("check and mutate %s: applied %v (%v), want %v", no, applied, err, want)
			}
		}
	}
	counter := driverkit.CounterBytes
	return []step{
		{name: "check and mutate moves an indexed value", do: cam("o4", cond("seller", "host12"), client.Mutation{Cells: []client.Cell{cell("seller", []byte("host1"))}}, true),
			bySeller: map[string][]string{"host1": {"o4"}, "host12": {"o3"}}},
		{name: "check and mutate, condition false", do: cam("o4", cond("seller", "host12"), client.Mutation{Cells: []client.Cell{cell("seller", []byte("\xff"))}}, false),
			bySeller: map[string][]string{"host1": {"o4"}, "\xff": {"o2"}}},
		{name: "check and mutate, condition on an unindexed column", do: cam("o3", cond("buyer", "b"), client.Mutation{Cells: []client.Cell{cell("seller", []byte("host1"))}}, true),
			bySeller: map[string][]string{"host1": {"o4", "o3"}, "host12": nil}},
		{name: "check and mutate of unindexed columns", do: func(t *testing.T, tbl *client.Table) {
			cam("o3", cond("note", ""), client.Mutation{Cells: []client.Cell{cell("note", []byte("x"))}}, true)(t, tbl)
			cam("o3", cond("note", ""), client.Mutation{Cells: []client.Cell{cell("note", []byte("y"))}}, false)(t, tbl)
			if row, err := tbl.Get(ctx, OrderKey("o3"), client.Columns(col("note"))); err != nil || len(row.Cells) != 1 || string(row.Cells[0].Value) != "x" {
				t.Fatalf("note: %v %v", row, err)
			}
		}, bySeller: map[string][]string{"host1": {"o4", "o3"}}},
		{name: "check and mutate deletes the row", do: cam("o0", cond("seller", ""), client.Mutation{Delete: true}, true),
			bySeller: map[string][]string{"": nil}, ext: map[string]string{"e0": ""}},
		{name: "increment a covered counter", do: func(t *testing.T, tbl *client.Table) {
			o := order{no: "o7", seller: "host1", buyer: "b", ext: "e7"}
			cells := append(o.cells(7)[:4], cell("amount", counter(10)))
			if err := tbl.Put(ctx, OrderKey("o7"), cells...); err != nil {
				t.Fatal(err)
			}
			got, err := tbl.Increment(ctx, OrderKey("o7"), client.Increment{Family: "d", Qualifier: "amount", Delta: 5})
			if err != nil || len(got) != 1 {
				t.Fatal(got, err)
			}
			if n, ok := client.CounterValue(got[0]); !ok || n != 15 {
				t.Fatalf("increment returned %d (%v), want 15", n, ok)
			}
		}, bySeller: map[string][]string{"host1": {"o7", "o4", "o3"}}, ext: map[string]string{"e7": "o7"}},
		{name: "increment an indexed counter", do: func(t *testing.T, tbl *client.Table) {
			if _, err := tbl.Increment(ctx, OrderKey("o9"), client.Increment{Family: "d", Qualifier: "seller", Delta: 1},
				client.Increment{Family: "d", Qualifier: "ts", Delta: 9}); err != nil {
				t.Fatal(err)
			}
		}, bySeller: map[string][]string{string(counter(1)): {"o9"}}},
		{name: "increment of a non-counter refused", do: func(t *testing.T, tbl *client.Table) {
			_, err := tbl.Increment(ctx, OrderKey("o4"), client.Increment{Family: "d", Qualifier: "seller", Delta: 1})
			if !errors.Is(err, backends.ErrInvalidArgument) {
				t.Fatalf("got %v, want ErrInvalidArgument", err)
			}
		}, bySeller: map[string][]string{"host1": {"o7", "o4", "o3"}}},
		{name: "import", do: func(t *testing.T, tbl *client.Table) {
			rows := []client.ImportRow{
				{Mutation: client.Mutation{Key: OrderKey("o8"), Cells: order{no: "o8", seller: "host12", buyer: "b", ext: "e8", amount: "1"}.cells(8)}},
				{Mutation: client.Mutation{Key: OrderKey("o7"), Cells: []client.Cell{cell("seller", []byte("host12"))}}},
				{Mutation: client.Mutation{Key: OrderKey("o1"), Delete: true}},
			}
			input := func(yield func(client.ImportRow, error) bool) {
				for _, r := range rows {
					if !yield(r, nil) {
						return
					}
				}
			}
			if stats, err := tbl.Import(ctx, input, client.ImportOptions{}); err != nil || stats.Written != 3 {
				t.Fatal(stats, err)
			}
		}, bySeller: map[string][]string{"host12": {"o8", "o7"}, "host1": {"o4", "o3"}, "\x00": nil}, ext: map[string]string{"e8": "o8", "e1": ""}},
		{name: "column deletes", do: func(t *testing.T, tbl *client.Table) {
			// A delete of the last columns leaves no row behind, not even its version.
			if err := tbl.Put(ctx, OrderKey("o6"), cell("note", []byte("n")), cell("memo", []byte("m"))); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Delete(ctx, OrderKey("o6"), col("note")); err != nil {
				t.Fatal(err)
			}
			if row, err := tbl.Get(ctx, OrderKey("o6")); err != nil || len(row.Cells) != 1 || row.Cells[0].Qualifier != "memo" {
				t.Fatalf("after deleting note: %v %v", row, err)
			}
			if rowErrs, err := tbl.Apply(ctx, []client.Mutation{
				{Key: OrderKey("o6"), Delete: true, Cells: []client.Cell{{Family: "d", Qualifier: "memo"}}},
				{Key: OrderKey("o3"), Delete: true, Cells: []client.Cell{{Family: "d", Qualifier: "note"}}},
			}); err != nil || rowErrs != nil {
				t.Fatal(err, rowErrs)
			}
			version := client.Column{Family: "d", Qualifier: client.IndexVersionQualifier}
			if _, err := tbl.Get(ctx, OrderKey("o6"), client.Columns(version)); !errors.Is(err, client.ErrNotFound) {
				t.Fatalf("o6 after deleting its last columns: %v, want ErrNotFound", err)
			}
			if row, err := tbl.Get(ctx, OrderKey("o3"), client.Columns(col("note"))); !errors.Is(err, client.ErrNotFound) {
				t.Fatalf("o3 note after its delete: %v %v", row, err)
			}
		}, bySeller: map[string][]string{"host1": {"o4", "o3"}}},
		{name: "reads hide the version column", do: func(t *testing.T, tbl *client.Table) {
			version := client.Column{Family: "d", Qualifier: client.IndexVersionQualifier}
			hasVersion := func(cells []client.Cell) bool {
				return slices.ContainsFunc(cells, func(c client.Cell) bool { return c.Qualifier == version.Qualifier })
			}
			row, err := tbl.Get(ctx, OrderKey("o4"))
			if err != nil || hasVersion(row.Cells) || len(row.Cells) != 5 {
				t.Fatalf("get: %v %v", row, err)
			}
			if row, err := tbl.Get(ctx, OrderKey("o4"), client.Columns(version)); err != nil || len(row.Cells) != 1 || !hasVersion(row.Cells) {
				t.Fatalf("get asking for the version: %v %v", row, err)
			}
			rows, err := tbl.GetMany(ctx, [][]byte{OrderKey("o4"), OrderKey("o1")})
			if err != nil || hasVersion(rows[0].Cells) || len(rows[0].Cells) != 5 || len(rows[1].Cells) != 0 {
				t.Fatalf("get many: %v %v", rows, err)
			}
			n := 0
			for row, err := range tbl.Scan(ctx, client.Range{}) {
				if err != nil || hasVersion(row.Cells) {
					t.Fatalf("scan: %v %v", row, err)
				}
				n++
			}
			if n != 7 { // o2-o5, o7-o9
				t.Fatalf("scan: %d rows, want 7", n)
			}
		}},
	}
}
