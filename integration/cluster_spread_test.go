//go:build integration

package integration

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"
	"sort"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestClusterSpreadOverServers is what salting is for, measured on real servers (the 3-region-server
// cluster of scripts/hbase/cluster.sh): a monotonic import into a hash:12 table spreads its rows and
// its write requests over every server, while the same keys in an unsalted table pre-split into 12
// regions (spread over the servers just the same) all go to one server.
//
// Placement: brine pre-splits at the bucket bounds and HBase's master assigns a new table's regions
// round-robin over the live servers, so with a bucket count that is a multiple of the server count
// each server gets the same number of buckets. brine does not move regions itself; after a server
// restart (which leaves it empty) run the balancer (scripts/hbase/admin.sh balance).
func TestClusterSpreadOverServers(t *testing.T) {
	cl := hbasetest.FindCluster(t)
	const rows, buckets = 60_000, 12
	e := openHBaseAt(t, cl.ZK)
	sess, err := cl.Admin.Session()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	keys := make([][]byte, rows)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+i))
	}

	tbl := e.salted(t, fmt.Sprintf("hash:%d", buckets), 0)
	var splits [][]byte
	for i := 1; i < buckets; i++ {
		splits = append(splits, []byte{byte(i * 256 / buckets)})
	}
	ref := e.unsalted(t, splits)
	refTbl, err := e.client.OpenTable(testkit.Context(t, time.Minute), ref, testkit.Salter(t, "none"))
	if err != nil {
		t.Fatal(err)
	}

	salted := importAndPlace(t, e, sess, tbl, keys)
	unsalted := importAndPlace(t, e, sess, refTbl, keys)
	servers := cl.RegionServers()

	t.Logf("SPREAD-SERVERS salted hash:%d: rows/server %v (max/mean %.3f), write requests/server %v (max/mean %.3f), regions/server %v, import %v",
		buckets, salted.rows, ratio(salted.rows, servers), salted.writes, ratio(salted.writes, servers), salted.regions, salted.took.Round(time.Millisecond))
	t.Logf("SPREAD-SERVERS unsalted: rows/server %v (max/mean %.3f), write requests/server %v (max/mean %.3f), regions/server %v, import %v",
		unsalted.rows, ratio(unsalted.rows, servers), unsalted.writes, ratio(unsalted.writes, servers), unsalted.regions, unsalted.took.Round(time.Millisecond))
	t.Logf("SPREAD-SERVERS import throughput salted/unsalted on %d servers: %.2fx", servers, unsalted.took.Seconds()/salted.took.Seconds())

	if len(salted.regions) != servers || len(unsalted.regions) != servers {
		t.Fatalf("regions are on %d (salted) and %d (unsalted) servers, want all %d", len(salted.regions), len(unsalted.regions), servers)
	}
	if r := ratio(salted.rows, servers); r > 1.10 {
		t.Errorf("salted rows per server max/mean %.3f > 1.10", r)
	}
	if r := ratio(salted.writes, servers); r > 1.10 {
		t.Errorf("salted write requests per server max/mean %.3f > 1.10 (the servers' own counters)", r)
	}
	if len(unsalted.rows) != 1 {
		t.Errorf("unsalted monotonic keys landed on %d servers, want exactly one (the hotspot)", len(unsalted.rows))
	}
}

// placement is where an import's rows and write requests went, per server.
type placement struct {
	rows, writes map[string]int64 // server -> rows held / write requests served
	regions      map[string]int   // server -> regions of the table
	took         time.Duration
}

// importAndPlace imports keys into tbl and counts rows (raw scans of each region's key range) and
// write requests (each region server's own per-region counters) per server.
func importAndPlace(t *testing.T, e *hbaseEnv, sess *hbasetest.Session, tbl *client.Table, keys [][]byte) placement {
	t.Helper()
	ctx := testkit.Context(t, 5*time.Minute)
	began := time.Now()
	st, err := tbl.Import(ctx, importRows(keys), client.ImportOptions{})
	if err != nil || st.Written != int64(len(keys)) {
		t.Fatalf("import into %s: %+v, %v", tbl.Name(), st, err)
	}
	p := placement{rows: map[string]int64{}, writes: map[string]int64{}, regions: map[string]int{}, took: time.Since(began)}
	locs, err := sess.Locate(ctx, tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(locs, func(i, j int) bool { return bytes.Compare(locs[i].Start, locs[j].Start) < 0 })
	for i, l := range locs {
		var stop []byte
		if i+1 < len(locs) {
			stop = locs[i+1].Start
		}
		p.regions[l.Server]++
		if n := len(rawScan(t, e.raw, tbl.Name(), l.Start, stop)); n > 0 {
			p.rows[l.Server] += int64(n)
		}
		if l.Writes > 0 {
			p.writes[l.Server] += l.Writes
		}
	}
	return p
}

func importRows(keys [][]byte) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for i, k := range keys {
			if !yield(client.ImportRow{Source: i, Mutation: brineMutation(k)}, nil) {
				return
			}
		}
	}
}

// ratio is max/mean of the counts over n servers (a server missing from counts holds 0).
func ratio(counts map[string]int64, n int) float64 {
	vals := make([]int64, 0, len(counts))
	var total int64
	for _, c := range counts {
		vals = append(vals, c)
		total += c
	}
	if total == 0 {
		return 0
	}
	return float64(slices.Max(vals)) / (float64(total) / float64(n))
}

// TestHBase256Buckets: the dev server of `make hbase-up` takes writes into two 256-bucket tables at
// once. With HBase's default MSLAB every region that takes a write holds a 2 MiB chunk outside the
// memstore accounting, and a 1 GiB server ran out of heap this way; hbase-site.xml.in turns MSLAB off.
func TestHBase256Buckets(t *testing.T) { import256(t, openHBase(t)) }

// TestCluster256Buckets is TestHBase256Buckets on the multi-server cluster of `make cluster-up`.
func TestCluster256Buckets(t *testing.T) { import256(t, openHBaseAt(t, hbasetest.FindCluster(t).ZK)) }

func import256(t *testing.T, e *hbaseEnv) {
	const tables, rows = 2, 20_000
	value := bytes.Repeat([]byte("v"), 200)
	var g errgroup.Group
	var tbls []*client.Table
	for i := range tables {
		tbl := e.salted(t, "hash:256", 0)
		tbls = append(tbls, tbl)
		g.Go(func() error {
			keys := func(yield func(client.ImportRow, error) bool) {
				for j := range rows {
					k := binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+j))
					m := client.Mutation{Key: k, Cells: []client.Cell{{Family: fam, Qualifier: "v", Value: value}}}
					if !yield(client.ImportRow{Source: j, Mutation: m}, nil) {
						return
					}
				}
			}
			st, err := tbl.Import(testkit.Context(t, 5*time.Minute), keys, client.ImportOptions{})
			if err != nil || st.Written != rows {
				return fmt.Errorf("import %d into %s: %+v, %v", i, tbl.Name(), st, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	// The server is still alive and serves every table.
	for _, tbl := range tbls {
		k := binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+rows-1))
		if _, err := tbl.Get(testkit.Context(t, time.Minute), k); err != nil {
			t.Fatalf("Get from %s after the imports: %v", tbl.Name(), err)
		}
	}
}
