//go:build integration

package bench

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
)

func openHBase(tb testing.TB) *Store {
	tb.Helper()
	zk := hbasetest.ZK(tb)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := OpenHBase(ctx, hbase.Config{ZKQuorum: zk})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// TestRunHBase runs the whole bench, tiny, against the real HBase: raw gohbase against brine, with the
// gohbase calls below brine's driver counted.
func TestRunHBase(t *testing.T) {
	st := openHBase(t)
	rec := &recorder{Backend: st.Backend}
	st.Backend = struct {
		*recorder
		serverLister
	}{rec, st.Backend.(serverLister)}
	cfg := smallConfig()
	cfg.Cluster = true // one server here: run the multi-server section anyway
	cfg.Rows = 1000
	cfg.ScanRows = 600
	cfg.Limits = []int{10, 100}
	cfg.RawConcurrency = []int{8, 32}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Run(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkCleanedUp(t, rec)
	if rep.Spread == nil || rep.Spread.Regions != 16 || rep.Spread.UnsaltedMaxShare != 1 {
		t.Errorf("spread: %+v", rep.Spread)
	}
	if g := rep.Get; g == nil || g.DriverRPCsPerGet != 1 || g.BackendReadsPerGet != 1 {
		t.Errorf("a salted get is not one RPC: %+v", g)
	}
	for _, l := range rep.Limits {
		// Buckets start small and read on only when the merge needs more: every bucket's first row,
		// and at most about twice what the merge took.
		if l.ServerRows < int64(l.Limit) || l.ServerRows > int64(2*l.Limit+l.Buckets) {
			t.Errorf("limit %d, prefetch %d: server sent %d rows", l.Limit, l.Prefetch, l.ServerRows)
		}
	}
	if c := rep.Cluster; c == nil || len(c.Servers) != 1 || c.Servers[0].SaltedRows != int64(cfg.Rows) ||
		c.Servers[0].UnsaltedRows != int64(cfg.Rows) || c.Servers[0].Regions != 16 || c.ImportRatio <= 0 || !c.Forced {
		t.Errorf("cluster section on one server: %+v", rep.Cluster)
	}
	checkIndex(t, rep.Index, cfg)
	checkRebucket(t, rep.Rebucket, cfg)
	// HBase keeps delete markers: the planted differences and the sync's repairs must write above them.
	checkSync(t, rep.Sync, cfg)
	checkShards(t, rep.Shards, cfg, "separate")
	// The filter runs on the region servers: they send the matching rows only, and every row when the
	// client filters.
	checkFilter(t, rep.Filter, cfg, int64(min(cfg.Rows, filterRows)))
	if len(rep.Scans) != len(cfg.ScanBuckets) || rep.Write == nil || rep.Write.BrineRowsPerS <= 0 {
		t.Errorf("report: %+v", rep)
	}
	for _, name := range rec.created {
		if name == client.DirTable { // checkCleanedUp: deleted, or left to another program's rebucket
			continue
		}
		if _, err := st.Backend.TableMeta(ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
			t.Errorf("table %s left behind: %v", name, err)
		}
	}
}

func TestOpenHBaseBadQuorum(t *testing.T) {
	hbasetest.ZK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := OpenHBase(ctx, hbase.Config{ZKQuorum: "127.0.0.1:1"}); err == nil {
		t.Fatal("OpenHBase with no ZooKeeper there succeeded")
	}
	if _, err := OpenHBase(ctx, hbase.Config{}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("empty quorum: %v", err)
	}
}
