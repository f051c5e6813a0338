//go:build integration

package hbase_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// writeCounter records the rows of every Multi call that got a response, and the per-row puts.
type writeCounter struct {
	gohbase.Client
	rpc gohbase.RPCClient

	mu     sync.Mutex
	multis []int               // rows per Multi call
	resps  []*pb.MultiResponse // every Multi call's response
	puts   int                 // single-row Put or Mutate calls
}

func (c *writeCounter) SendRPC(call hrpc.Call) (proto.Message, error) {
	msg, err := c.rpc.SendRPC(call)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch call.Name() {
	case "Multi":
		if err == nil { // ToProto holds the rows of the region the call was sent to
			c.multis = append(c.multis, len(call.ToProto().(*pb.MultiRequest).GetRegionAction()[0].GetAction()))
			c.resps = append(c.resps, msg.(*pb.MultiResponse))
		}
	case "Mutate":
		c.puts++
	}
	return msg, err
}

func (c *writeCounter) Put(p *hrpc.Mutate) (*hrpc.Result, error) {
	c.mu.Lock()
	c.puts++
	c.mu.Unlock()
	return c.Client.Put(p)
}

// take returns the calls seen since the last take, Multi row counts sorted.
func (c *writeCounter) take() ([]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	multis, puts := c.multis, c.puts
	c.multis, c.puts = nil, 0
	slices.Sort(multis)
	return multis, puts
}

// TestApplyMultiPerRegion: Apply sends its puts as one Multi call per region, and keeps writing
// every row when a region splits under both the driver's and gohbase's region caches; once the
// caches have caught up, it is one call per region again.
func TestApplyMultiPerRegion(t *testing.T) {
	zk := hbasetest.ZK(t)
	admin, err := hbasetest.FindAdmin(zk)
	if err != nil {
		t.Fatal(err)
	}
	raw := gohbase.NewClient(zk)
	defer raw.Close()
	wc := &writeCounter{Client: raw, rpc: raw.(gohbase.RPCClient)}
	b, err := hbase.New(wc, gohbase.NewAdminClient(zk), hbase.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	table := newTable(t, b, backends.TableOptions{SplitKeys: [][]byte{[]byte("m")}})
	ctx := testCtx(t)

	var keys [][]byte
	for c := 'z'; c >= 'a'; c-- { // not in key order: Apply sorts
		keys = append(keys, []byte{byte(c)})
	}
	apply := func(gen int) {
		t.Helper()
		muts := make([]backends.Mutation, len(keys))
		for i, k := range keys {
			muts[i] = put(k, cell("d", "q", fmt.Sprint(gen)), cell("e", "q", fmt.Sprint(gen)))
		}
		testkit.Apply(t, testCtx(t), b, table, muts...)
	}

	wc.take()
	apply(1)
	if multis, puts := wc.take(); !slices.Equal(multis, []int{12, 14}) || puts != 0 {
		t.Errorf("two regions: Multi calls of %v rows and %d single puts, want [12 14] and none", multis, puts)
	}

	if err := admin.Split(ctx, table, []byte("g")); err != nil {
		t.Fatalf("split: %v", err)
	}
	apply(2) // both caches know the region [, m) that split
	apply(3)
	multis, puts := wc.take()
	t.Logf("while the caches caught up: Multi calls of %v rows, %d single puts", multis, puts)
	if !slices.Contains(multis, 6) {
		t.Errorf("after the split: Multi calls of %v rows, want one cut at the new region's end (6 rows)", multis)
	}

	apply(4)
	if multis, puts := wc.take(); !slices.Equal(multis, []int{6, 6, 14}) || puts != 0 {
		t.Errorf("three regions: Multi calls of %v rows and %d single puts, want [6 6 14] and none", multis, puts)
	}
	rows, err := b.Read(ctx, table, keys, backends.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if len(r.Cells) != 2 || string(r.Cells[0].Value) != "4" || string(r.Cells[1].Value) != "4" {
			t.Errorf("row %q = %+v, want d:q and e:q of the last Apply", r.Key, r.Cells)
		}
	}
}
