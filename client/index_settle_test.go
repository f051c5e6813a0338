package client_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
)

// settleGate holds the step 4 of the write whose context carries it: every call to an index table
// that verifies an entry (a put of the write's token in the "ok" column) or deletes one, until
// release is closed. reached is closed at the first such call.
type settleGate struct {
	once             sync.Once
	reached, release chan struct{}
}

type settleGateKey struct{}

func newSettleGate() *settleGate {
	return &settleGate{reached: make(chan struct{}), release: make(chan struct{})}
}

// settleHold is a memory store whose step-4 calls wait on their write's settleGate.
type settleHold struct{ *memory.Backend }

func (h settleHold) wait(ctx context.Context, table string) {
	g, _ := ctx.Value(settleGateKey{}).(*settleGate)
	if g == nil || !strings.Contains(table, "__ix_") {
		return
	}
	g.once.Do(func() { close(g.reached) })
	<-g.release
}

func (h settleHold) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	if slices.ContainsFunc(muts, func(m backends.Mutation) bool {
		return slices.ContainsFunc(m.Cells, func(c backends.Cell) bool { return c.Qualifier == "ok" })
	}) {
		h.wait(ctx, table)
	}
	return h.Backend.Apply(ctx, table, muts)
}

func (h settleHold) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	if slices.ContainsFunc(ms, func(m backends.CondMutation) bool { return m.Mut.Delete }) {
		h.wait(ctx, table)
	}
	return h.Backend.CheckAndMutateBatch(ctx, table, ms)
}

// TestIndexLateVerify: a write's step 4 reaches the index only after a later write of the same row
// took its entries over (moving the row to another seller), before or after that write's own step 4.
// Step 4 verifies by a plain put of the write's token, so it lands either way: it must verify none
// of the entries the later write holds, and what it leaves on an entry the later write deleted (a
// row with no status) is removed by the next reader.
func TestIndexLateVerify(t *testing.T) {
	order := func(seller, amount string) []client.Cell {
		return []client.Cell{
			{Family: "d", Qualifier: "seller", Value: []byte(seller)},
			{Family: "d", Qualifier: "buyer", Value: []byte("b1")},
			{Family: "d", Qualifier: "ext", Value: []byte("x1")},
			{Family: "d", Qualifier: "ts", Value: indextest.TS(1)},
			{Family: "d", Qualifier: "amount", Value: []byte(amount)},
		}
	}
	key := indextest.OrderKey("o1")
	for _, laterFirst := range []bool{false, true} {
		name := "before the later write's step 4"
		if laterFirst {
			name = "after the later write's step 4"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b := settleHold{memory.New()}
			tbl := indextest.NewOrders(t, b, "orders")
			early, later := newSettleGate(), newSettleGate()
			earlyDone, laterDone := make(chan error, 1), make(chan error, 1)
			go func() { earlyDone <- tbl.Put(context.WithValue(ctx, settleGateKey{}, early), key, order("s1", "1")...) }()
			<-early.reached // its data landed, its entries pending
			go func() { laterDone <- tbl.Put(context.WithValue(ctx, settleGateKey{}, later), key, order("s2", "2")...) }()
			<-later.reached // it took the entries over and its data landed
			if laterFirst {
				close(later.release)
				if err := <-laterDone; err != nil {
					t.Fatal(err)
				}
			}
			close(early.release)
			if err := <-earlyDone; err != nil {
				t.Fatal(err)
			}
			if laterFirst && orphans(t, b, "orders__ix_by_seller") == 0 {
				t.Fatal("the late step 4 left nothing on the deleted entry: the test does not reach its case")
			}
			// Whatever the late step 4 wrote, no reader trusts an entry for it: the entry of seller
			// s1, which the later write holds or deleted, answers nothing, whole or covered.
			indextest.AssertQueries(t, tbl)
			if !laterFirst {
				close(later.release)
				if err := <-laterDone; err != nil {
					t.Fatal(err)
				}
			}
			indextest.AssertIndexes(t, tbl)
			if n := orphans(t, b, "orders__ix_by_seller"); n != 0 {
				t.Fatalf("%d index rows without a status left after a read", n)
			}
		})
	}
}

// orphans counts the rows of an index table that have no status ("s"): what a late step 4 leaves.
func orphans(t *testing.T, b backends.Backend, table string) int {
	t.Helper()
	n := 0
	for row, err := range b.Scan(context.Background(), table, backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(row.Cells, func(c backends.Cell) bool { return c.Qualifier == "s" }) {
			n++
		}
	}
	return n
}
