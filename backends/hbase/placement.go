package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
)

// RegionServers returns the start keys of table's online regions, in key order, and the region
// server serving each ("host:port", from hbase:meta's info:server; empty while a region is not
// assigned). It is how a benchmark tells whether a table's regions live on more than one server.
// A region whose meta row names no server is looked up in the master's cluster status, where each
// live server lists the regions it reports serving: in fresh test runs hbase:meta named no server
// for 2 of 16 regions that served rows, for longer than a minute.
func (b *Backend) RegionServers(ctx context.Context, table string) (starts [][]byte, servers []string, err error) {
	spans, err := b.metaRegions(ctx, table, true)
	if err != nil {
		return nil, nil, err
	}
	starts = make([][]byte, len(spans))
	servers = make([]string, len(spans))
	var reported map[string]string
	for i, s := range spans {
		starts[i], servers[i] = s.Start, s.Server
		if s.Server != "" {
			continue
		}
		if reported == nil {
			if reported, err = b.reportedRegions(); err != nil {
				return nil, nil, fmt.Errorf("hbase: regions %q: %w", table, err)
			}
		}
		servers[i] = reported[s.Name]
	}
	return starts, servers, nil
}

// reportedRegions maps each region name the live servers report serving to that server.
func (b *Backend) reportedRegions() (map[string]string, error) {
	st, err := b.admin.ClusterStatus()
	if err != nil {
		return nil, err
	}
	return regionsByServer(st), nil
}

// regionsByServer is reportedRegions' reading of a cluster status.
func regionsByServer(st *pb.ClusterStatus) map[string]string {
	m := map[string]string{}
	for _, ls := range st.GetLiveServers() {
		sn := ls.GetServer()
		server := fmt.Sprintf("%s:%d", sn.GetHostName(), sn.GetPort())
		for _, rl := range ls.GetServerLoad().GetRegionLoads() {
			m[string(rl.GetRegionSpecifier().GetValue())] = server
		}
	}
	return m
}

// metaRegions scans hbase:meta for table's online regions, in key order; withServer also reads
// where each is served.
func (b *Backend) metaRegions(ctx context.Context, table string, withServer bool) ([]regionSpan, error) {
	if err := checkTable(table); err != nil {
		return nil, err
	}
	qualifiers := []string{"regioninfo"}
	if withServer {
		qualifiers = append(qualifiers, "server")
	}
	start, stop := metaScanRange(table)
	cn, rctx, done := b.begin(ctx)
	defer done()
	sc, err := hrpc.NewScanRange(rctx, []byte("hbase:meta"), start, stop,
		hrpc.Families(map[string][]string{"info": qualifiers}), hrpc.NumberOfRows(1000))
	if err != nil {
		return nil, fmt.Errorf("hbase: regions %q: %w", table, err)
	}
	scanner := cn.client.Scan(sc)
	defer scanner.Close()
	var spans []regionSpan
	for {
		res, err := scanner.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, b.rpcErr(ctx, cn, "regions", table, err)
		}
		cells := pbCells(res)
		span, ok, err := spanFromMetaRow(table, cells)
		if ok && len(cells) > 0 {
			span.Name = string(cells[0].GetRow()) // a meta row's key is its region's name
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, c := range cells {
			if withServer && string(c.GetFamily()) == "info" && string(c.GetQualifier()) == "server" {
				span.Server = string(c.GetValue())
			}
		}
		spans = append(spans, span)
	}
	if len(spans) == 0 {
		return nil, fmt.Errorf("hbase: regions %q: %w", table, backends.ErrTableNotFound)
	}
	// hbase:meta's comparator already orders them by start key; sorting keeps that promise explicit.
	slices.SortFunc(spans, func(a, b regionSpan) int { return bytes.Compare(a.Start, b.Start) })
	return spans, nil
}
