package indextest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
)

// ConditionalRace runs writers that use one row's unindexed column "owner" as a lock: each takes it
// by a CheckAndMutate on its absence that also moves the row's indexed seller and bumps a covered
// counter (the index protocol's path), checks that it holds the lock, and gives it back by a
// CheckAndMutate deleting the column only while it holds it (the column-delete path). Were a
// condition not checked atomically with the write, two writers would hold the lock at once, or a
// release would fail. Then every index must answer what the main table says.
func ConditionalRace(t *testing.T, tbl *client.Table, writers, rounds int) {
	ctx := context.Background()
	key := OrderKey("lock")
	owner := client.Column{Family: "d", Qualifier: "owner"}
	var holders, taken atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			me := []byte(fmt.Sprint("w", w))
			for r := range rounds {
				applied, err := tbl.CheckAndMutate(ctx, client.Condition{Family: owner.Family, Qualifier: owner.Qualifier},
					client.Mutation{Key: key, Cells: []client.Cell{
						{Family: owner.Family, Qualifier: owner.Qualifier, Value: me},
						{Family: "d", Qualifier: "seller", Value: me},
						{Family: "d", Qualifier: "ts", Value: TS(uint64(r))},
					}})
				if err != nil || !applied {
					continue // contention is an outcome; holding the lock twice is the failure
				}
				if n := holders.Add(1); n != 1 {
					errs <- fmt.Errorf("writer %s: %d holders at once", me, n)
					return
				}
				taken.Add(1)
				if _, err := tbl.Increment(ctx, key, client.Increment{Family: "d", Qualifier: "amount", Delta: 1}); err != nil {
					errs <- fmt.Errorf("writer %s: increment: %w", me, err)
					return
				}
				holders.Add(-1)
				released, err := tbl.CheckAndMutate(ctx, client.Condition{Family: owner.Family, Qualifier: owner.Qualifier, Value: me},
					client.Mutation{Key: key, Delete: true, Cells: []client.Cell{{Family: owner.Family, Qualifier: owner.Qualifier}}})
				if err != nil || !released {
					errs <- fmt.Errorf("writer %s: release: applied %v, %v", me, released, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	row, err := tbl.Get(ctx, key, client.Columns(client.Column{Family: "d", Qualifier: "amount"}))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := client.CounterValue(row.Cells[0]); !ok || n != taken.Load() || n == 0 {
		t.Fatalf("counter %d (%v), want the %d times the lock was taken", n, ok, taken.Load())
	}
	t.Logf("lock taken %d times by %d writers", taken.Load(), writers)
	AssertIndexes(t, tbl)
}

// RevokeRace runs writers that change a row's covered amount (the index protocol's path) only while
// its unindexed column "grant" is set, by CheckAndMutate, against one revoker that sets the grant, deletes it
// (the column-delete path), and then reads the amount twice: once the delete is acknowledged, no
// conditional write may land, so both reads must agree. A write that checked its condition on the
// row before the delete and wrote after it would change the amount between them.
func RevokeRace(t *testing.T, tbl *client.Table, writers, rounds int) {
	ctx := context.Background()
	key := OrderKey("grant")
	grant := client.Column{Family: "d", Qualifier: "grant"}
	amount := client.Columns(client.Column{Family: "d", Qualifier: "amount"})
	var stop atomic.Bool
	var wg sync.WaitGroup
	var wrote atomic.Int64
	for w := range writers {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				applied, err := tbl.CheckAndMutate(ctx, client.Condition{Family: grant.Family, Qualifier: grant.Qualifier, Value: []byte("1")},
					client.Mutation{Key: key, Cells: []client.Cell{
						{Family: "d", Qualifier: "amount", Value: fmt.Appendf(nil, "w%d.%d", w, i)},
						{Family: "d", Qualifier: "seller", Value: fmt.Appendf(nil, "w%d", w)},
					}})
				if err == nil && applied {
					wrote.Add(1)
				}
			}
		})
	}
	defer func() { stop.Store(true); wg.Wait() }()
	read := func() string {
		row, err := tbl.Get(ctx, key, amount)
		if err != nil && !errors.Is(err, client.ErrNotFound) {
			t.Fatal(err)
		}
		return fmt.Sprint(row.Cells)
	}
	for r := range rounds {
		if err := tbl.Put(ctx, key, client.Cell{Family: grant.Family, Qualifier: grant.Qualifier, Value: []byte("1")}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond) // let some writes through
		if err := tbl.Delete(ctx, key, grant); err != nil {
			t.Fatal(err)
		}
		before := read()
		time.Sleep(2 * time.Millisecond)
		if after := read(); after != before {
			t.Fatalf("round %d: amount changed after the grant was deleted: %s, then %s", r, before, after)
		}
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d conditional writes in %d rounds", wrote.Load(), rounds)
	if wrote.Load() == 0 {
		t.Fatal("no conditional write applied: the race was not run")
	}
	AssertIndexes(t, tbl)
}
