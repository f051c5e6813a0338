package compare_test

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counted is a Source that counts the rows its scans yield.
type counted struct {
	t    *client.Table
	rows atomic.Int64
}

func (c *counted) Scan(ctx context.Context, r client.Range, opts ...client.ReadOption) iter.Seq2[client.Row, error] {
	return func(yield func(client.Row, error) bool) {
		for row, err := range c.t.Scan(ctx, r, opts...) {
			if err == nil {
				c.rows.Add(1)
			}
			if !yield(row, err) {
				return
			}
		}
	}
}

const rows = 3000

func key(i int) []byte { return fmt.Appendf(nil, "k%05d", i) }

// pair returns two tables on two stores, salted apart (hash:4 and hash:8), holding the same rows.
func pair(t *testing.T) (a, b *client.Table) {
	t.Helper()
	ctx := context.Background()
	open := func(spec string) *client.Table {
		c := client.New(memory.New())
		t.Cleanup(func() { _ = c.Close() })
		tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, spec), MaxVersions: 3})
		if err != nil {
			t.Fatal(err)
		}
		muts := make([]client.Mutation, rows)
		for i := range muts {
			muts[i] = client.Mutation{Key: key(i), Cells: []client.Cell{
				{Family: "d", Qualifier: "v", Value: fmt.Appendf(nil, "%d", i), Timestamp: 1000},
				{Family: "d", Qualifier: "w", Value: []byte("x"), Timestamp: 2000},
			}}
		}
		if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
			t.Fatal(err, rowErrs)
		}
		return tbl
	}
	return open("hash:4"), open("hash:8")
}

func put(t *testing.T, tbl *client.Table, k []byte, cells ...client.Cell) {
	t.Helper()
	if err := tbl.Put(context.Background(), k, cells...); err != nil {
		t.Fatal(err)
	}
}

// TestTables: each kind of difference is found at its key, and nothing else; equal tables are read
// once per side.
func TestTables(t *testing.T) {
	ctx := context.Background()
	type want struct {
		kind compare.Kind
		key  int
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, b *client.Table)
		all    bool // Options.AllVersions
		want   []want
	}{
		{name: "equal"},
		{name: "one changed cell", change: func(t *testing.T, b *client.Table) {
			put(t, b, key(1234), client.Cell{Family: "d", Qualifier: "v", Value: []byte("changed"), Timestamp: 1000})
		}, want: []want{{compare.Changed, 1234}}},
		{name: "one changed timestamp", change: func(t *testing.T, b *client.Table) {
			if err := b.Delete(ctx, key(77), client.Column{Family: "d", Qualifier: "w"}); err != nil {
				t.Fatal(err)
			}
			put(t, b, key(77), client.Cell{Family: "d", Qualifier: "w", Value: []byte("x"), Timestamp: 2001})
		}, want: []want{{compare.Changed, 77}}},
		{name: "missing row", change: func(t *testing.T, b *client.Table) {
			if err := b.Delete(ctx, key(2999)); err != nil {
				t.Fatal(err)
			}
		}, want: []want{{compare.OnlyInA, 2999}}},
		{name: "extra row", change: func(t *testing.T, b *client.Table) {
			put(t, b, []byte("k01500x"), client.Cell{Family: "d", Qualifier: "v", Value: []byte("new")})
		}, want: []want{{compare.OnlyInB, -1}}},
		{name: "an older version, newest only", change: func(t *testing.T, b *client.Table) {
			put(t, b, key(5), client.Cell{Family: "d", Qualifier: "v", Value: []byte("old"), Timestamp: 10})
		}},
		{name: "an older version, all versions", all: true, change: func(t *testing.T, b *client.Table) {
			put(t, b, key(5), client.Cell{Family: "d", Qualifier: "v", Value: []byte("old"), Timestamp: 10})
		}, want: []want{{compare.Changed, 5}}},
		{name: "all at once", change: func(t *testing.T, b *client.Table) {
			put(t, b, key(10), client.Cell{Family: "d", Qualifier: "v", Value: []byte("changed"), Timestamp: 1000})
			if err := b.Delete(ctx, key(11)); err != nil {
				t.Fatal(err)
			}
			put(t, b, []byte("k01500x"), client.Cell{Family: "d", Qualifier: "v", Value: []byte("new")})
		}, want: []want{{compare.Changed, 10}, {compare.OnlyInA, 11}, {compare.OnlyInB, -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ta, tb := pair(t)
			if tc.change != nil {
				tc.change(t, tb)
			}
			a, b := &counted{t: ta}, &counted{t: tb}
			var st compare.Stats
			var got []want
			for d, err := range compare.Tables(ctx, a, b, client.Range{}, compare.Options{Chunk: 64, AllVersions: tc.all, Stats: &st}) {
				if err != nil {
					t.Fatal(err)
				}
				k := -1
				if _, err := fmt.Sscanf(string(d.Key), "k%05d", &k); err != nil || string(d.Key) != string(key(k)) {
					k = -1
				}
				got = append(got, want{d.Kind, k})
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("differences %v, want %v", got, tc.want)
			}
			if st.RowsA != rows || st.Chunks < rows/64/2 {
				t.Errorf("first pass: %d rows of a in %d chunks", st.RowsA, st.Chunks)
			}
			if len(tc.want) == 0 && (a.rows.Load() != rows || b.rows.Load() != st.RowsB || st.Differing != 0) {
				t.Errorf("equal tables: a read %d rows, b %d, %d ranges again; want each side once", a.rows.Load(), b.rows.Load(), st.Differing)
			}
			if len(tc.want) > 0 && st.RereadA > int64(len(tc.want))*64*8 {
				t.Errorf("read %d rows of a again for %d differences", st.RereadA, len(tc.want))
			}
		})
	}
}

// TestTablesEmptySide: against an empty table, every row is one side's, streamed.
func TestTablesEmptySide(t *testing.T) {
	ctx := context.Background()
	ta, _ := pair(t)
	c := client.New(memory.New())
	defer c.Close()
	empty, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:2")})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for d, err := range compare.Tables(ctx, ta, empty, client.Range{}, compare.Options{}) {
		if err != nil {
			t.Fatal(err)
		}
		if d.Kind != compare.OnlyInA {
			t.Fatalf("%s: %v", d.Key, d.Kind)
		}
		n++
	}
	if n != rows {
		t.Fatalf("%d rows only in a, want %d", n, rows)
	}
	// Breaking out of the loop stops both scans (goleak checks at the end).
	for range compare.Tables(ctx, empty, ta, client.Range{}, compare.Options{}) {
		break
	}
}

func TestCellDiff(t *testing.T) {
	c := func(f, q, v string, ts int64) client.Cell {
		return client.Cell{Family: f, Qualifier: q, Value: []byte(v), Timestamp: ts}
	}
	for _, tc := range []struct {
		name         string
		a, b         []client.Cell
		onlyA, onlyB []client.Cell
	}{
		{"equal, in other orders", []client.Cell{c("d", "b", "2", 1), c("d", "a", "1", 1)}, []client.Cell{c("d", "a", "1", 1), c("d", "b", "2", 1)}, nil, nil},
		{"a deleted middle column", []client.Cell{c("d", "a", "1", 1000), c("d", "c", "3", 1000)},
			[]client.Cell{c("d", "a", "1", 1000), c("d", "b", "2", 1000), c("d", "c", "3", 1000)}, nil, []client.Cell{c("d", "b", "2", 1000)}},
		{"a value changed, same stamp", []client.Cell{c("d", "v", "x", 5)}, []client.Cell{c("d", "v", "y", 5)}, []client.Cell{c("d", "v", "x", 5)}, []client.Cell{c("d", "v", "y", 5)}},
		{"re-stamped", []client.Cell{c("d", "v", "x", 9)}, []client.Cell{c("d", "v", "x", 5)}, []client.Cell{c("d", "v", "x", 9)}, []client.Cell{c("d", "v", "x", 5)}},
		{"versions: one missing", []client.Cell{c("d", "v", "2", 2), c("d", "v", "1", 1)}, []client.Cell{c("d", "v", "2", 2)}, []client.Cell{c("d", "v", "1", 1)}, nil},
		{"another family", []client.Cell{c("m", "v", "1", 1)}, []client.Cell{c("d", "v", "1", 1), c("m", "v", "1", 1)}, nil, []client.Cell{c("d", "v", "1", 1)}},
		{"empty a", nil, []client.Cell{c("d", "v", "1", 1)}, nil, []client.Cell{c("d", "v", "1", 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onlyA, onlyB := compare.CellDiff(tc.a, tc.b)
			if fmt.Sprint(onlyA) != fmt.Sprint(tc.onlyA) || fmt.Sprint(onlyB) != fmt.Sprint(tc.onlyB) {
				t.Errorf("CellDiff = %v, %v; want %v, %v", onlyA, onlyB, tc.onlyA, tc.onlyB)
			}
		})
	}
}
