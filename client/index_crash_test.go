package client

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
)

// lostReply applies a compare-and-set and then, by the seed, reports a failure: the crash right
// after a step's write, which faulty's Error (failing before the call) does not give.
type lostReply struct {
	*faulty.Backend
	mu  sync.Mutex // rand.Rand is not safe for concurrent use
	rng *rand.Rand
	on  atomic.Bool
	n   atomic.Int64
}

func (l *lostReply) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	applied, err := l.Backend.CheckAndMutate(ctx, table, cond, m)
	l.mu.Lock()
	lose := l.rng.IntN(8) == 0
	l.mu.Unlock()
	if err == nil && l.on.Load() && lose {
		l.n.Add(1)
		return false, fmt.Errorf("lost reply: %w", faulty.ErrInjected)
	}
	return applied, err
}

// randomWrite is one write of the crash and concurrency tests: new values for some columns of one of
// a few rows (sellers, buyers and unique ids drawn from small sets so that they collide), a row
// delete, or a batch through Apply.
func randomWrite(ctx context.Context, tbl *Table, rng *rand.Rand, rows int) error {
	key := func() []byte { return orderKey(fmt.Sprint("o", rng.IntN(rows))) }
	cells := func() []Cell {
		var cs []Cell
		if rng.IntN(2) == 0 {
			cs = append(cs, Cell{Family: "d", Qualifier: "seller", Value: []byte([]string{"", "host1", "host12", "\xff"}[rng.IntN(4)])})
		}
		if rng.IntN(2) == 0 {
			cs = append(cs, Cell{Family: "d", Qualifier: "buyer", Value: []byte(fmt.Sprint("b", rng.IntN(3)))})
		}
		if rng.IntN(3) == 0 {
			cs = append(cs, Cell{Family: "d", Qualifier: "ext", Value: []byte(fmt.Sprint("e", rng.IntN(rows)))})
		}
		cs = append(cs,
			Cell{Family: "d", Qualifier: "ts", Value: ts(uint64(rng.IntN(3)))},
			Cell{Family: "d", Qualifier: "amount", Value: []byte(fmt.Sprint(rng.IntN(100)))})
		return cs
	}
	switch rng.IntN(8) {
	case 0:
		return tbl.Delete(ctx, key())
	case 1:
		muts := []Mutation{{Key: key(), Cells: cells()}, {Key: key(), Cells: cells()}, {Key: key(), Delete: true}}
		_, err := tbl.Apply(ctx, muts)
		return err
	default:
		return tbl.Put(ctx, key(), cells()...)
	}
}

// TestIndexCrashPoints fails the protocol's calls (the row read, the index writes, the data write,
// the verify and delete steps: each before or, for compare-and-sets, after it is applied) by seed,
// then checks that every query by index equals the main table's answer, and that after a
// repairing read Verify finds nothing wrong.
func TestIndexCrashPoints(t *testing.T) {
	ctx := context.Background()
	var failed, lost int64
	for seed := range uint64(240) {
		fb := faulty.Wrap(memory.New(), faulty.Config{Seed: seed, Rules: []faulty.Rule{
			{Fault: faulty.Error, Ops: faulty.OpRead | faulty.OpApply | faulty.OpAtomic, Prob: 0.12},
			{Fault: faulty.AfterWrite, Ops: faulty.OpApply, Prob: 0.1},
		}})
		lb := &lostReply{Backend: fb, rng: rand.New(rand.NewPCG(seed, 7))}
		fb.SetActive(false)
		tbl := newOrders(t, lb)
		fb.SetActive(true)
		lb.on.Store(true)
		rng := rand.New(rand.NewPCG(seed, 1))
		for range 30 {
			if err := randomWrite(ctx, tbl, rng, 6); err != nil {
				failed++
			}
		}
		fb.SetActive(false)
		lb.on.Store(false)
		lost += lb.n.Load()
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { assertIndexes(t, tbl) })
		if t.Failed() {
			return
		}
	}
	t.Logf("%d writes failed, %d replies lost", failed, lost)
	if failed == 0 || lost == 0 {
		t.Fatal("no faults injected: the test proves nothing")
	}
}
