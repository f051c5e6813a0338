//go:build integration

package hbase_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// takeResponses returns the Multi responses and single-row calls seen since the last take.
func (c *writeCounter) takeResponses() ([]*pb.MultiResponse, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	resps, n := c.resps, c.puts
	c.multis, c.resps, c.puts = nil, nil, 0
	return resps, n
}

func openRecorded(t *testing.T) (*hbase.Backend, *writeCounter, *hbasetest.Admin) {
	t.Helper()
	zk := hbasetest.ZK(t)
	admin, err := hbasetest.FindAdmin(zk)
	if err != nil {
		t.Fatal(err)
	}
	raw := gohbase.NewClient(zk)
	t.Cleanup(raw.Close)
	rec := &writeCounter{Client: raw, rpc: raw.(gohbase.RPCClient)}
	b, err := hbase.New(rec, gohbase.NewAdminClient(zk), hbase.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, rec, admin
}

// rawProcessed is RegionActionResult.processed (field 3), which this gohbase's pb lacks: present
// tells whether the server set it at all.
func rawProcessed(t *testing.T, r *pb.RegionActionResult) (value, present bool) {
	t.Helper()
	raw := r.ProtoReflect().GetUnknown()
	for len(raw) > 0 {
		num, typ, n := protowire.ConsumeTag(raw)
		raw = raw[n:]
		if num == 3 && typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(raw)
			value, present, raw = v != 0, true, raw[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, raw)
		if n < 0 {
			t.Fatalf("bad unknown fields in %v", r)
		}
		raw = raw[n:]
	}
	return value, present
}

// callRows is how many rows a conditional Multi's answer is for: one RegionActionResult per row,
// then, in a call of two or more, the WAL sync barrier's (condsync.go). synced: the barrier
// succeeded (no processed field, no exception, one ResultOrException without one), or there is none.
func callRows(t *testing.T, resp *pb.MultiResponse) (rows int, synced bool) {
	t.Helper()
	results := resp.GetRegionActionResult()
	if len(results) == 1 {
		return 1, true
	}
	if len(results) < 3 {
		t.Fatalf("a conditional call answered with %d results: 1 row, or 2 and more and the barrier", len(results))
	}
	last := results[len(results)-1]
	_, present := rawProcessed(t, last)
	roe := last.GetResultOrException()
	return len(results) - 1, !present && last.GetException() == nil && len(roe) == 1 && roe[0].GetException() == nil
}

func cond(fam, qual, val string) backends.Condition {
	return backends.Condition{Family: fam, Qualifier: qual, Value: []byte(val)}
}

// TestCheckAndMutateBatchWire records what HBase 2.6 answers to one Multi of conditional
// RegionActions (facts the protocol does not spell out): each RegionAction is answered on its own,
// in order; a false condition or a failed row leaves the other rows of the same Multi applied; a
// RegionActionResult without exception always carries processed, true or false, and one
// ResultOrException for the row's single action, with index 0 and no result; a failed row carries
// only its exception (no processed, no ResultOrException). The call's last RegionAction, the WAL sync
// barrier (condsync.go), is answered with a success and leaves the rows as they were.
func TestCheckAndMutateBatchWire(t *testing.T) {
	b, rec, _ := openRecorded(t)
	table := newTable(t, b, backends.TableOptions{})
	ctx := testCtx(t)
	testkit.Apply(t, testCtx(t), b, table, put([]byte("b"), cell("d", "q", "1")), put([]byte("d"), cell("d", "q", "1")))
	rec.takeResponses()

	ms := []backends.CondMutation{
		{Cond: cond("d", "q", ""), Mut: put([]byte("a"), cell("d", "q", "new"))},                             // absent: applied
		{Cond: cond("d", "q", ""), Mut: put([]byte("b"), cell("d", "q", "2"))},                               // present: not applied
		{Cond: cond("zz", "q", ""), Mut: put([]byte("c"), cell("d", "q", "new"))},                            // no family zz: fails
		{Cond: cond("d", "q", "1"), Mut: backends.Mutation{Key: []byte("d"), Delete: true}},                  // equal: deleted
		{Cond: cond("d", "q", ""), Mut: put([]byte("e"), cell("zz", "q", "new"))},                            // mutation names zz: fails
		{Cond: cond("d", "q", "1"), Mut: put([]byte("f"), cell("d", "q", "never"), cell("e", "q", "never"))}, // absent, not equal: not applied
		{Cond: cond("e", "q", ""), Mut: put([]byte("g"), cell("d", "q", "new"), cell("e", "q", "new"))},      // applied, two families
	}
	applied, rowErrs, err := b.CheckAndMutateBatch(ctx, table, ms)
	if err != nil {
		t.Fatalf("CheckAndMutateBatch: %v", err)
	}
	wantApplied := []bool{true, false, false, true, false, false, true}
	wantFailed := []bool{false, false, true, false, true, false, false}
	for i := range ms {
		if applied[i] != wantApplied[i] || (rowErrs != nil && rowErrs[i] != nil) != wantFailed[i] {
			t.Errorf("row %q: applied %v, error %v; want %v, failed %v", ms[i].Mut.Key, applied[i], rowErrs, wantApplied[i], wantFailed[i])
		}
		if wantFailed[i] && !errors.Is(rowErrs[i], backends.ErrInvalidArgument) {
			t.Errorf("row %q: error %v, want ErrInvalidArgument", ms[i].Mut.Key, rowErrs[i])
		}
	}

	resps, mutates := rec.takeResponses()
	if len(resps) != 1 || mutates != 0 {
		t.Fatalf("%d Multi calls and %d Mutate calls, want one Multi for the batch (the region is one)", len(resps), mutates)
	}
	results := resps[0].GetRegionActionResult()
	if n, synced := callRows(t, resps[0]); n != len(ms) || !synced {
		t.Fatalf("%d region action results for %d rows, barrier synced %v", n, len(ms), synced)
	}
	for i, r := range results[:len(ms)] {
		processed, present := rawProcessed(t, r)
		roe := r.GetResultOrException()
		t.Logf("row %q: processed=%v (set: %v), exception=%q, resultOrException=%v", ms[i].Mut.Key, processed, present, r.GetException().GetName(), roe)
		if wantFailed[i] {
			if r.GetException() == nil || present || len(roe) != 0 {
				t.Errorf("row %q failed: exception %v, processed set %v, %d results; want an exception only", ms[i].Mut.Key, r.GetException(), present, len(roe))
			}
			continue
		}
		if !present || processed != wantApplied[i] || len(roe) != 1 || roe[0].GetIndex() != 0 || roe[0].GetException() != nil || roe[0].GetResult() != nil {
			t.Errorf("row %q: processed %v (set %v), results %v; want processed %v and one ResultOrException, index 0, no result", ms[i].Mut.Key, processed, present, roe, wantApplied[i])
		}
	}

	rows, err := b.Read(ctx, table, [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d"), []byte("e"), []byte("f"), []byte("g")}, backends.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"new", "1", "", "", "", "", "new"}
	for i, r := range rows {
		got := ""
		if len(r.Cells) > 0 {
			got = string(r.Cells[0].Value)
		}
		if got != want[i] {
			t.Errorf("row %q: d:q = %q, want %q", r.Key, got, want[i])
		}
	}
}

// TestCheckAndMutateBatchAcrossSplits: a batch is one Multi per region, and answers every row when a
// region splits under the driver's and gohbase's region caches.
func TestCheckAndMutateBatchAcrossSplits(t *testing.T) {
	b, rec, admin := openRecorded(t)
	table := newTable(t, b, backends.TableOptions{SplitKeys: [][]byte{[]byte("r/100")}})
	ctx := testCtx(t)
	const n = 200
	key := func(i int) []byte { return fmt.Appendf(nil, "r/%03d", i) }
	batch := func(gen int) {
		t.Helper()
		ms := make([]backends.CondMutation, n)
		for i := range n {
			// Generation gen expects the value gen-1 left (absent for the first), on even rows only;
			// odd rows expect a value that is never there.
			c := cond("d", "q", fmt.Sprint(gen-1))
			if gen == 1 {
				c = cond("d", "q", "")
			}
			if i%2 == 1 {
				c = cond("d", "q", "never")
			}
			ms[n-1-i] = backends.CondMutation{Cond: c, Mut: put(key(i), cell("d", "q", fmt.Sprint(gen)))}
		}
		applied, rowErrs, err := b.CheckAndMutateBatch(ctx, table, ms)
		if err != nil || rowErrs != nil {
			t.Fatalf("generation %d: %v, %v", gen, rowErrs, err)
		}
		for i := range n {
			if applied[n-1-i] != (i%2 == 0) {
				t.Fatalf("generation %d: row %s applied %v", gen, key(i), applied[n-1-i])
			}
		}
	}
	// sizes are the rows of each call since the last, and the calls sent alone; a call whose barrier
	// failed counts as -1.
	sizes := func() ([]int, int) {
		resps, mutates := rec.takeResponses()
		var s []int
		for _, r := range resps {
			n, synced := callRows(t, r)
			if !synced {
				n = -1
			}
			s = append(s, n)
		}
		slices.Sort(s)
		return s, mutates
	}

	rec.takeResponses()
	batch(1)
	if s, m := sizes(); !slices.Equal(s, []int{100, 100}) || m != 0 {
		t.Errorf("two regions: Multi calls of %v rows, %d single calls; want [100 100] and none", s, m)
	}
	if err := admin.Split(ctx, table, []byte("r/050")); err != nil {
		t.Fatalf("split: %v", err)
	}
	batch(2)
	batch(3)
	s, m := sizes()
	t.Logf("while the caches caught up: Multi calls of %v rows, %d single calls", s, m)
	batch(4)
	if s, m := sizes(); !slices.Equal(s, []int{50, 50, 100}) || m != 0 {
		t.Errorf("three regions: Multi calls of %v rows, %d single calls; want [50 50 100] and none", s, m)
	}
	keys := make([][]byte, n)
	for i := range n {
		keys[i] = key(i)
	}
	rows, err := b.Read(ctx, table, keys, backends.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		want := "4"
		if i%2 == 1 {
			want = ""
		}
		got := ""
		if len(r.Cells) > 0 {
			got = string(r.Cells[0].Value)
		}
		if got != want {
			t.Errorf("row %q = %q, want %q", r.Key, got, want)
		}
	}
}

// TestCheckAndMutateBatchChunks: a batch larger than one Multi call may carry (4 MiB of cells) goes
// as several calls to its one region, and every row is answered.
func TestCheckAndMutateBatchChunks(t *testing.T) {
	b, rec, _ := openRecorded(t)
	table := newTable(t, b, backends.TableOptions{})
	ctx := testCtx(t)
	value := string(make([]byte, 64<<10))
	ms := make([]backends.CondMutation, 100)
	for i := range ms {
		ms[i] = backends.CondMutation{Cond: cond("d", "q", ""), Mut: put(fmt.Appendf(nil, "big/%03d", i), cell("d", "q", value))}
	}
	rec.takeResponses()
	applied, rowErrs, err := b.CheckAndMutateBatch(ctx, table, ms)
	if err != nil || rowErrs != nil || slices.Contains(applied, false) {
		t.Fatalf("CheckAndMutateBatch = %v, %v, %v; want every row applied", applied, rowErrs, err)
	}
	resps, singles := rec.takeResponses()
	var sizes []int
	for _, r := range resps {
		n, synced := callRows(t, r)
		if !synced {
			t.Errorf("a call's WAL sync barrier failed: %v", r)
		}
		sizes = append(sizes, n)
	}
	if len(sizes) != 2 || sizes[0]+sizes[1] != len(ms) || singles != 0 {
		t.Errorf("Multi calls of %v rows and %d single calls; want two calls of 100 rows in all, none single", sizes, singles)
	}
}
