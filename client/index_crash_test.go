package client_test

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
	"github.com/brine-kv/brine/internal/indextest"
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

// TestIndexCrashPoints fails the protocol's calls (the row read, the index writes, the data write,
// the verify and delete steps: each before or, for compare-and-sets, after it is applied) by seed,
// then checks that every query by index equals the main table's answer, and that after a
// repairing read (or, for odd seeds, Rebuild) Verify finds nothing wrong.
func TestIndexCrashPoints(t *testing.T) {
	ctx := context.Background()
	var failed, lost int64
	for seed := range uint64(240) {
		fb := faulty.New(memory.New(), faulty.Config{Seed: seed, Rules: []faulty.Rule{
			{Fault: faulty.Error, Ops: faulty.OpRead | faulty.OpApply | faulty.OpAtomic, Prob: 0.12},
			{Fault: faulty.AfterWrite, Ops: faulty.OpApply, Prob: 0.1},
		}})
		lb := &lostReply{Backend: fb, rng: rand.New(rand.NewPCG(seed, 7))}
		fb.SetActive(false)
		tbl := indextest.NewOrders(t, lb, "orders")
		fb.SetActive(true)
		lb.on.Store(true)
		rng := rand.New(rand.NewPCG(seed, 1))
		for range 30 {
			if err := indextest.RandomWrite(ctx, tbl, rng, 6); err != nil {
				failed++
			}
		}
		fb.SetActive(false)
		lb.on.Store(false)
		lost += lb.n.Load()
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			if seed%2 == 1 { // odd seeds: Rebuild repairs what the crashes left, before the queries do
				for _, ix := range tbl.Indexes() {
					if _, err := ix.WithGrace(0).Rebuild(ctx, nil); err != nil {
						t.Fatal(err)
					}
					if rep, err := ix.Verify(ctx); err != nil || rep.Problems() != 0 {
						t.Fatalf("after rebuild: %v %v %q", rep, err, rep.Examples)
					}
				}
			}
			indextest.AssertIndexes(t, tbl)
		})
		if t.Failed() {
			return
		}
	}
	t.Logf("%d writes failed, %d replies lost", failed, lost)
	if failed == 0 || lost == 0 {
		t.Fatal("no faults injected: the test proves nothing")
	}
}
