package client_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
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

func (g *gated) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	if ctx.Value(holdKey{}) != nil && table == g.main && slices.ContainsFunc(m.Cells, func(c backends.Cell) bool { return c.Qualifier == "ext" }) {
		g.once.Do(func() {
			close(g.reached)
			<-g.release
		})
	}
	return g.Backend.CheckAndMutate(ctx, table, cond, m)
}

// TestIndexRowRecreated: a write that read its row absent reaches its data write only after other
// writes created the row and deleted it again, so the row is absent once more when it lands. The
// entries its step 2 wrote were taken over by those writes, and the delete removed them: the write
// must not land on a condition ("no version") that the delete made true again, or its row is left
// without its entries. Found by TestIndexDropLive in a fresh run (a unique entry missing).
func TestIndexRowRecreated(t *testing.T) {
	ctx := context.Background()
	g := &gated{Backend: memory.New(), main: "orders", reached: make(chan struct{}), release: make(chan struct{})}
	tbl := indextest.NewOrders(t, g, "orders")
	key := indextest.OrderKey("o1")
	cells := func(seller, amount string) []client.Cell {
		return []client.Cell{
			{Family: "d", Qualifier: "seller", Value: []byte(seller)},
			{Family: "d", Qualifier: "buyer", Value: []byte("b1")},
			{Family: "d", Qualifier: "ext", Value: []byte("x1")},
			{Family: "d", Qualifier: "amount", Value: []byte(amount)},
		}
	}
	late := make(chan error, 1)
	go func() { late <- tbl.Put(context.WithValue(ctx, holdKey{}, true), key, cells("host2", "2")...) }()
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
	if _, err := tbl.Get(ctx, key); err != nil {
		t.Fatalf("the late write's row: %v", err)
	}
	indextest.AssertIndexes(t, tbl)
}
