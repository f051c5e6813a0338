package client_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// holdKey marks the context of the write that gated stops at its data write.
type holdKey struct{}

// gated holds the first data write (a main-table compare-and-set that writes column d:ext) made
// under holdKey until release is closed; reached is closed when it gets there.
type gated struct {
	*memory.Backend
	main             string
	once             sync.Once
	reached, release chan struct{}
}

func (g *gated) hold(ctx context.Context, table string, m backends.Mutation) {
	if ctx.Value(holdKey{}) != nil && table == g.main && slices.ContainsFunc(m.Cells, func(c backends.Cell) bool { return c.Qualifier == "ext" }) {
		g.once.Do(func() {
			close(g.reached)
			<-g.release
		})
	}
}

func (g *gated) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	g.hold(ctx, table, m)
	return g.Backend.CheckAndMutate(ctx, table, cond, m)
}

func (g *gated) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	for _, m := range ms {
		g.hold(ctx, table, m.Mut)
	}
	return g.Backend.CheckAndMutateBatch(ctx, table, ms)
}

// TestIndexRowRecreated: a write that read its row absent reaches its data write only after other
// writes created the row and deleted it again, so the row is absent once more when it lands. The
// entries its step 2 wrote were taken over by those writes, and the delete removed them: the write
// must not land on a condition ("no version") that the delete made true again, or its row is left
// without its entries. Found by TestIndexDropLive in a fresh run (a unique entry missing).
func TestIndexRowRecreated(t *testing.T) {
	cells := func(seller, amount string) []client.Cell {
		return []client.Cell{
			{Family: "d", Qualifier: "seller", Value: []byte(seller)},
			{Family: "d", Qualifier: "buyer", Value: []byte("b1")},
			{Family: "d", Qualifier: "ext", Value: []byte("x1")},
			{Family: "d", Qualifier: "amount", Value: []byte(amount)},
		}
	}
	key := indextest.OrderKey("o1")
	// The late write, through each write path of the protocol.
	for name, write := range map[string]func(context.Context, *client.Table) error{
		"put": func(ctx context.Context, tbl *client.Table) error {
			return tbl.Put(ctx, key, cells("host2", "2")...)
		},
		"apply": func(ctx context.Context, tbl *client.Table) error {
			rowErrs, err := tbl.Apply(ctx, []client.Mutation{{Key: key, Cells: cells("host2", "2")}})
			if err == nil && rowErrs != nil {
				err = rowErrs[0]
			}
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			g := &gated{Backend: memory.New(), main: "orders", reached: make(chan struct{}), release: make(chan struct{})}
			tbl := indextest.NewOrders(t, g, "orders")
			late := make(chan error, 1)
			go func() { late <- write(context.WithValue(ctx, holdKey{}, true), tbl) }()
			<-g.reached
			if err := tbl.Put(ctx, key, cells("host1", "1")...); err != nil {
				t.Fatal(err)
			}
			if err := tbl.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			close(g.release)
			if err := <-late; err != nil {
				t.Fatal(err)
			}
			row, err := tbl.Get(ctx, key)
			if err != nil {
				t.Fatalf("the late write's row: %v", err)
			}
			if i := slices.IndexFunc(row.Cells, func(c client.Cell) bool { return c.Qualifier == "seller" }); i < 0 || string(row.Cells[i].Value) != "host2" {
				t.Fatalf("row %v, want the late write's seller host2", row.Cells)
			}
			indextest.AssertIndexes(t, tbl)
		})
	}
}

// TestIndexScanLimitPastWriteInFlight: a new row's write holds the row with only its version between
// its version write and its data write. A scan with a limit does not count that row: it returns as
// many rows as the limit asks while the range has them.
func TestIndexScanLimitPastWriteInFlight(t *testing.T) {
	ctx := context.Background()
	g := &gated{Backend: memory.New(), main: "orders", reached: make(chan struct{}), release: make(chan struct{})}
	tbl := indextest.NewOrders(t, g, "orders")
	cells := []client.Cell{{Family: "d", Qualifier: "ext", Value: []byte("x")}}
	for i := 1; i <= 4; i++ {
		c := []client.Cell{{Family: "d", Qualifier: "seller", Value: []byte("s")}, {Family: "d", Qualifier: "ext", Value: fmt.Appendf(nil, "x%d", i)}}
		if err := tbl.Put(ctx, indextest.OrderKey(fmt.Sprint("o", i)), c...); err != nil {
			t.Fatal(err)
		}
	}
	late := make(chan error, 1)
	go func() { late <- tbl.Put(context.WithValue(ctx, holdKey{}, true), indextest.OrderKey("o0"), cells...) }()
	<-g.reached
	for _, tc := range []struct {
		limit int
		want  []string
	}{
		{1, []string{"o1"}},
		{3, []string{"o1", "o2", "o3"}},
		{4, []string{"o1", "o2", "o3", "o4"}},
		{9, []string{"o1", "o2", "o3", "o4"}},
	} {
		got := testkit.KeyStrings(testkit.Collect(t, tbl.Scan(ctx, client.Range{}, client.Limit(tc.limit))))
		var want []string
		for _, no := range tc.want {
			want = append(want, string(indextest.OrderKey(no)))
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d while o0's write is in flight: %q, want %q", tc.limit, got, tc.want)
		}
	}
	close(g.release)
	if err := <-late; err != nil {
		t.Fatal(err)
	}
}
