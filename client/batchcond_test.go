package client_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// condCounting counts, per table, the conditional writes sent one row per call and those sent in
// batches: what tells a batched protocol step from one round trip per row.
type condCounting struct {
	*memory.Backend
	mu      sync.Mutex
	single  map[string]int // CheckAndMutate calls
	batches map[string]int // CheckAndMutateBatch calls
	batched map[string]int // rows sent in them
}

func newCondCounting() *condCounting {
	return &condCounting{Backend: memory.New(), single: map[string]int{}, batches: map[string]int{}, batched: map[string]int{}}
}

func (c *condCounting) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	c.mu.Lock()
	c.single[table]++
	c.mu.Unlock()
	return c.Backend.CheckAndMutate(ctx, table, cond, m)
}

func (c *condCounting) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	c.mu.Lock()
	c.batches[table]++
	c.batched[table] += len(ms)
	c.mu.Unlock()
	return c.Backend.CheckAndMutateBatch(ctx, table, ms)
}

func (c *condCounting) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.single)
	clear(c.batches)
	clear(c.batched)
}

// TestRebucketCopyBatched: the copy writes the new table with batches of put-if-absent, never one
// row per call, and copies every row.
func TestRebucketCopyBatched(t *testing.T) {
	ctx := context.Background()
	b := newCondCounting()
	c := client.New(b, client.WithRouteRefresh(testRefresh))
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	const rows = 300
	var muts []client.Mutation
	for i := range rows {
		muts = append(muts, put(fmt.Sprintf("k%04d", i), "v", fmt.Sprint(i)))
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
		t.Fatalf("preload: %v %v", err, rowErrs)
	}
	b.reset()
	if err := tbl.Rebucket(ctx, testkit.Salter(t, "hash:8"), client.RebucketOptions{Fence: 3 * testRefresh, Grace: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	for table, n := range b.single {
		if table != client.DirTable {
			t.Errorf("%d rows copied one per call into %s", n, table)
		}
	}
	batched := 0
	for table, n := range b.batched {
		if table != client.DirTable {
			batched += n
		}
	}
	b.mu.Unlock()
	if batched != rows {
		t.Errorf("%d rows copied in batches, want %d", batched, rows)
	}
	if n := testkit.Count(t, tbl.Scan(ctx, client.Range{})); n != rows {
		t.Fatalf("%d rows after the rebucket, want %d", n, rows)
	}
}
