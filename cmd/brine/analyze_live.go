package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// regionLoad is one region of a table as its server last reported it to the master. The request
// counters count since the region was opened; sizes are in MB, HBase's unit for them.
type regionLoad struct {
	server         string
	start          []byte
	reads, writes  uint64
	storeMB, memMB uint32
}

// liveLoad is a table's load grouped per bucket and per server.
type liveLoad struct {
	table, spec string
	regions     int
	buckets     []loadGroup // index: bucket
	servers     []loadGroup // sorted by name
}

type loadGroup struct {
	name          string
	regions       int
	reads, writes int64
	sizeMB        int64
}

func (g loadGroup) requests() int64 { return g.reads + g.writes }

// tableRegionLoads picks table's regions out of a cluster status. A region name is
// "TABLE,STARTKEY,ID.ENCODED.": the table has no comma, the id part none either, the start key may.
func tableRegionLoads(status *pb.ClusterStatus, table string) []regionLoad {
	var out []regionLoad
	for _, srv := range status.GetLiveServers() {
		sn := srv.GetServer()
		server := fmt.Sprintf("%s:%d", sn.GetHostName(), sn.GetPort())
		for _, rl := range srv.GetServerLoad().GetRegionLoads() {
			name := rl.GetRegionSpecifier().GetValue()
			rest, ok := bytes.CutPrefix(name, []byte(table+","))
			if !ok {
				continue
			}
			i := bytes.LastIndexByte(rest, ',')
			if i < 0 {
				continue
			}
			out = append(out, regionLoad{
				server: server, start: rest[:i],
				reads: rl.GetReadRequestsCount(), writes: rl.GetWriteRequestsCount(),
				storeMB: rl.GetStorefileSize_MB(), memMB: rl.GetMemstoreSize_MB(),
			})
		}
	}
	slices.SortFunc(out, func(a, b regionLoad) int { return bytes.Compare(a.start, b.start) })
	return out
}

// groupLoads sums regions per bucket (the bucket holding a region's start key: regions pre-split at
// bucket boundaries hold one bucket each) and per server.
func groupLoads(table string, s salting.Salter, regions []regionLoad) liveLoad {
	l := liveLoad{table: table, spec: s.Spec(), regions: len(regions), buckets: make([]loadGroup, s.Buckets())}
	bounds := s.SplitKeys(0)
	byServer := map[string]*loadGroup{}
	for _, r := range regions {
		size := int64(r.storeMB) + int64(r.memMB)
		b := &l.buckets[regionOf(bounds, r.start)]
		srv := byServer[r.server]
		if srv == nil {
			srv = &loadGroup{name: r.server}
			byServer[r.server] = srv
		}
		for _, g := range []*loadGroup{b, srv} {
			g.regions++
			g.reads += int64(r.reads)
			g.writes += int64(r.writes)
			g.sizeMB += size
		}
	}
	for i := range l.buckets {
		l.buckets[i].name = fmt.Sprint(i)
	}
	for _, g := range byServer {
		l.servers = append(l.servers, *g)
	}
	slices.SortFunc(l.servers, func(a, b loadGroup) int { return strings.Compare(a.name, b.name) })
	return l
}

func requestCounts(gs []loadGroup) []int64 {
	out := make([]int64, len(gs))
	for i, g := range gs {
		out[i] = g.requests()
	}
	return out
}

func (l liveLoad) print(w io.Writer) {
	fmt.Fprintf(w, "table %s   salt: %s   %d regions on %d servers (requests since each region opened)\n\n",
		l.table, l.spec, l.regions, len(l.servers))
	bucketReqs := spread{counts: requestCounts(l.buckets)}
	fmt.Fprintln(w, "requests per bucket (reads + writes):")
	printBars(w, bucketReqs.counts)
	fmt.Fprintf(w, "bucket max/mean %.3f, %d without requests of %d\n\n", bucketReqs.maxOverMean(), bucketReqs.empty(), len(l.buckets))
	fmt.Fprintln(w, "per bucket: regions, reads, writes, MB (store files + memstore)")
	for _, g := range l.buckets {
		fmt.Fprintf(w, "  %4s %3d %12d %12d %8d\n", g.name, g.regions, g.reads, g.writes, g.sizeMB)
	}
	serverReqs := spread{counts: requestCounts(l.servers)}
	fmt.Fprintln(w, "\nrequests per server:")
	names := make([]string, len(l.servers))
	for i, g := range l.servers {
		names[i] = fmt.Sprintf("%s (%d regions, %d MB)", g.name, g.regions, g.sizeMB)
	}
	printLabelledBars(w, names, serverReqs.counts)
	fmt.Fprintf(w, "server max/mean %.3f\n", serverReqs.maxOverMean())
}

// runAnalyzeLive is `brine analyze --store hbase://... TABLE`: the table's live load per bucket and
// per server, from the region loads the region servers report to the master (no info port needed).
func runAnalyzeLive(ctx context.Context, env *cliEnv, storeURL, table, svgPath string) error {
	if !strings.HasPrefix(storeURL, "hbase://") {
		return fmt.Errorf("analyze --store %s: live load needs an hbase:// store", storeURL)
	}
	b, err := openStore(ctx, env, storeURL, true)
	if err != nil {
		return err
	}
	c := env.newClient(b)
	defer c.Close()
	t, err := openSalted(ctx, c, table, nil)
	var s salting.Salter
	switch {
	case errors.Is(err, client.ErrNoSpec):
		s, _ = salting.ParseSpec("none") // a table brine did not create: one bucket
	case err != nil:
		return err
	default:
		s = t.Salter()
	}
	hb, ok := b.(*hbase.Backend)
	if !ok {
		return fmt.Errorf("analyze: store %s is not HBase", storeURL)
	}
	status, err := clusterStatus(ctx, hb)
	if err != nil {
		return err
	}
	regions := tableRegionLoads(status, table)
	if len(regions) == 0 {
		return fmt.Errorf("analyze %s: the cluster reports no region of it (regions report every few seconds after opening; try again)", table)
	}
	load := groupLoads(table, s, regions)
	load.print(env.stdout)
	if svgPath == "" {
		return nil
	}
	f, err := os.Create(svgPath)
	if err != nil {
		return fmt.Errorf("--svg: %w", err)
	}
	if err := load.writeSVG(f); err != nil {
		f.Close()
		return fmt.Errorf("--svg: %w", err)
	}
	return f.Close()
}

// clusterStatus asks the master for the cluster status; gohbase's call takes no context, so ctx
// ending returns at once and leaves the call to finish in the background.
func clusterStatus(ctx context.Context, b *hbase.Backend) (*pb.ClusterStatus, error) {
	type result struct {
		st  *pb.ClusterStatus
		err error
	}
	ch := make(chan result, 1)
	go func() {
		st, err := b.AdminClient().ClusterStatus()
		ch <- result{st, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("cluster status: %w", r.err)
		}
		return r.st, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("cluster status: %w", ctx.Err())
	}
}
