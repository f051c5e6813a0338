package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

// fakeStatus is a cluster status with table t's four bucket regions on two servers (bucket 2 hot),
// plus a region of a table whose name starts the same, which must not count.
func fakeStatus(t *testing.T, s salting.Salter) *pb.ClusterStatus {
	t.Helper()
	starts := append([][]byte{nil}, s.SplitKeys(0)...)
	region := func(table string, start []byte, reads, writes uint64, mb uint32) *pb.RegionLoad {
		name := append([]byte(table+","), start...)
		name = append(name, ",1700000000000.abcdef."...)
		return &pb.RegionLoad{
			RegionSpecifier:   &pb.RegionSpecifier{Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: name},
			ReadRequestsCount: proto.Uint64(reads), WriteRequestsCount: proto.Uint64(writes),
			StorefileSize_MB: proto.Uint32(mb), MemstoreSize_MB: proto.Uint32(1),
		}
	}
	server := func(host string, regions ...*pb.RegionLoad) *pb.LiveServerInfo {
		return &pb.LiveServerInfo{
			Server:     &pb.ServerName{HostName: proto.String(host), Port: proto.Uint32(16020)},
			ServerLoad: &pb.ServerLoad{RegionLoads: regions},
		}
	}
	return &pb.ClusterStatus{LiveServers: []*pb.LiveServerInfo{
		server("rs1", region("t", starts[0], 100, 10, 5), region("t", starts[1], 100, 10, 5),
			region("t2", nil, 9999, 9999, 99)),
		server("rs2", region("t", starts[2], 900, 90, 40), region("t", starts[3], 100, 10, 5)),
	}}
}

func TestAnalyzeLiveGroups(t *testing.T) {
	s := testkit.Salter(t, "hash:4")
	regions := tableRegionLoads(fakeStatus(t, s), "t")
	if len(regions) != 4 {
		t.Fatalf("%d regions of t, want 4 (t2's must not count)", len(regions))
	}
	l := groupLoads("t", s, regions)
	wantReqs := []int64{110, 110, 990, 110}
	for i, g := range l.buckets {
		if g.requests() != wantReqs[i] || g.regions != 1 {
			t.Errorf("bucket %d: %d requests in %d regions, want %d in 1", i, g.requests(), g.regions, wantReqs[i])
		}
	}
	if l.buckets[2].sizeMB != 41 {
		t.Errorf("bucket 2: %d MB, want 41 (store files + memstore)", l.buckets[2].sizeMB)
	}
	if len(l.servers) != 2 || l.servers[0].name != "rs1:16020" || l.servers[0].requests() != 220 || l.servers[1].requests() != 1100 {
		t.Fatalf("servers: %+v", l.servers)
	}

	var out bytes.Buffer
	l.print(&out)
	text := out.String()
	for _, want := range []string{
		"table t   salt: hash:4   4 regions on 2 servers",
		fmt.Sprintf("     2        990 %s\n", strings.Repeat("#", 40)),
		fmt.Sprintf("     0        110 %s\n", strings.Repeat("#", 40*110/990)),
		"bucket max/mean 3.000",
		"rs2:16020 (2 regions, 47 MB)       1100 " + strings.Repeat("#", 40),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}

	var svg bytes.Buffer
	if err := l.writeSVG(&svg); err != nil {
		t.Fatal(err)
	}
	pic := svg.String()
	if !strings.HasPrefix(pic, "<svg ") || strings.Count(pic, "<rect ") != 6 || strings.Count(pic, `fill="#c0392b"`) != 1 ||
		strings.Count(pic, `fill="#e08e3c"`) != 1 {
		t.Errorf("svg: want 6 bars (4 buckets, 2 servers), the hot bucket (3x the mean) red, the busier server (1.7x) orange:\n%s", pic)
	}
}

func TestAnalyzeLiveNeedsHBase(t *testing.T) {
	c := newCLI(t)
	_, _, err := c.run(t.Context(), "analyze", "--store", c.store, "t")
	if err == nil || !strings.Contains(err.Error(), "needs an hbase:// store") {
		t.Fatalf("analyze --store local: %v, want a clear refusal", err)
	}
}
