//go:build integration

package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

// Timings of TestClusterIndexChaos: no write may outlast a rebucket's fence (a writer still acting on
// a step two steps back could copy an old row over a new one), so every write is bounded well
// inside it, directory refresh included.
const (
	ixChaosFence    = 4 * time.Second
	ixChaosWrite    = 2 * time.Second
	ixChaosMaxChaos = 30 * time.Second
)

// TestClusterIndexChaos: on the cluster of scripts/hbase/cluster.sh, indexed writers (two
// clients, shared rows and rows of their own) run while the main table is rebucketed and region
// servers are SIGKILLed and restarted; a scanner checks every answer by index against its row
// meanwhile. A rebucket that fails under a kill is resumed by the same call. Then,
// through a new client: the rebucket finished to its spec, every query by index equals the
// answer computed from the main table, Verify finds 0 problems once a repairing read is done, and
// every write a writer had acknowledged on its own rows is there.
func TestClusterIndexChaos(t *testing.T) {
	cl := hbasetest.FindCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sess, err := cl.Admin.Session()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	open := func(timeout time.Duration) *client.Client { return openChaosClient(t, cl, timeout) }
	c := open(ixChaosWrite)
	name := hbasetest.Table("brine_ixchaos")
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: indextest.OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dropTable(t, c, name)
	if err := importAll(ctx, tbl.Import, 1, 500, nil, 0); err != nil {
		t.Fatal(err)
	}
	other, err := open(ixChaosWrite).OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := indextest.NewWorkload(func(err error) bool {
		// Under kills a write may fail any way the store fails; these would be brine's own mistakes.
		return !errors.Is(err, backends.ErrInvalidArgument) && !errors.Is(err, client.ErrRebucketing)
	})
	w.Timeout = ixChaosWrite
	stopWork := w.Run(t, tbl, []*client.Table{tbl, other}, 1)

	// The rebuckets, each resumed until it finishes; the chaos runs until they have, or for at most
	// ixChaosMaxChaos.
	// The main table only: a rebucket of an index table runs the same router and copy under the same
	// kills, and each costs four fences of the 15-minute make test; TestHBaseIndexRebucket and the
	// SIGKILL'd client tests move index tables too.
	moves := indextest.Rebuckets[:1]
	var (
		rbErr    error
		attempts int
		rbDone   = make(chan struct{})
	)
	go func() {
		defer close(rbDone)
		for _, rb := range moves {
			to, err := salting.ParseSpec(rb.To)
			if err != nil {
				rbErr = err
				return
			}
			opts := client.RebucketOptions{Fence: ixChaosFence, Grace: time.Second, Workers: 2}
			for {
				attempts++
				if rb.Index == "" {
					err = tbl.Rebucket(ctx, to, opts)
				} else {
					err = tbl.RebucketIndex(ctx, rb.Index, to, opts)
				}
				if err == nil || ctx.Err() != nil {
					rbErr = err
					break
				}
				t.Logf("rebucket to %s (index %q) stopped, resuming: %v", rb.To, rb.Index, err)
				time.Sleep(time.Second)
			}
		}
	}()
	// The monkey's table is one the rebuckets leave alone: heal waits for its regions.
	m := newMonkey(t, cl, sess, client.IndexTableName(name, "by_buyer"))
	kills := killUntil(ctx, t, m, rbDone, ixChaosMaxChaos)
	<-rbDone
	stopWork()
	if err := m.heal(ctx); err != nil {
		t.Fatalf("bringing every region server back: %v", err)
	}
	if rbErr != nil {
		t.Fatalf("rebucket: %v", rbErr)
	}
	if t.Failed() {
		return
	}

	// Verify through a client that saw none of it, once every table serves again.
	fresh, err := open(30*time.Second).OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	untilIndexesServed(ctx, t, fresh)
	for _, rb := range moves {
		phys := name
		if rb.Index != "" {
			phys = client.IndexTableName(name, rb.Index)
		}
		if st, err := c.RebucketStatus(ctx, phys); err != nil || st.Spec != rb.To || st.State != "" {
			t.Fatalf("%s after its rebucket: %+v %v, want %s serving", phys, st, err, rb.To)
		}
	}
	indextest.AssertIndexes(t, fresh)
	w.Check(t, fresh)
	fmt.Printf("index chaos: %d region server kills, %d rebucket calls for %d rebuckets\n", kills, attempts, len(moves))
	fmt.Printf("index chaos: writes acknowledged: %d; failed: %v\n", w.Acked(), w.Errors())
	if kills < 2 {
		t.Errorf("only %d kills during the rebuckets: too few to prove anything", kills)
	}
}

// openChaosClient opens a client on the cluster whose requests time out after timeout; it is closed,
// and checked for goroutines left, when the test ends. The pinned gohbase's region clients can
// outlive Close under kills (TestClusterChaos), so its two connection goroutines are excused by
// name, here and in TestMain.
func openChaosClient(t *testing.T, cl *hbasetest.Cluster, timeout time.Duration) *client.Client {
	t.Helper()
	leakOptions = append(leakOptions, goleak.IgnoreAnyFunction(processRPCs))
	c, closeC := openHBaseWith(t, cl.ZK, hbase.Options{RequestTimeout: timeout}, 10*time.Second,
		goleak.IgnoreAnyFunction(receiveRPCs), goleak.IgnoreAnyFunction(processRPCs))
	t.Cleanup(closeC)
	return c
}

// killUntil SIGKILLs region servers, one at a time (the monkey's kill: down 1-4 s, then started
// again), 1-3 s apart, until done is closed or for at most maxChaos; it returns how many it killed.
func killUntil(ctx context.Context, t *testing.T, m *monkey, done <-chan struct{}, maxChaos time.Duration) (kills int) {
	end := time.Now().Add(maxChaos)
	for chaos := true; chaos && time.Now().Before(end); {
		if err := m.do(ctx, "kill"); err != nil {
			t.Fatal(err)
		}
		kills++
		select {
		case <-done:
			chaos = false
		case <-time.After(time.Duration(1000+m.rnd.IntN(2000)) * time.Millisecond):
		}
	}
	return kills
}

// untilIndexesServed waits until a query by each of tbl's indexes is answered whole: the check of a
// cluster test reads what the cluster kept once it serves again (untilServed).
func untilIndexesServed(ctx context.Context, t *testing.T, tbl *client.Table) {
	t.Helper()
	for _, ix := range tbl.Indexes() {
		if err := untilServed(ctx, "index "+ix.Name(), func() error {
			_, err := testkit.CountErr(ix.Scan(ctx, client.Range{}))
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// dropTable deletes a cluster test's table (with its index tables) at its end, with a deadline of
// its own: the test's may have run out.
func dropTable(t *testing.T, c *client.Client, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.DeleteTable(ctx, name); err != nil {
		t.Errorf("DeleteTable(%s): %v", name, err)
	}
}
