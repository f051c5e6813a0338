package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestServerCount(t *testing.T) {
	tests := []struct {
		servers []string
		want    int
	}{
		{nil, 0},
		{[]string{"", ""}, 0},
		{[]string{"a:1", "a:1", "a:1"}, 1},
		{[]string{"a:1", "", "a:1"}, 1},
		{[]string{"a:1", "b:1", "a:1", "c:1"}, 3},
	}
	for _, tc := range tests {
		if got := serverCount(tc.servers); got != tc.want {
			t.Errorf("serverCount(%q) = %d, want %d", tc.servers, got, tc.want)
		}
	}
}

func TestServerLoads(t *testing.T) {
	salted := placement{servers: []string{"b:1", "a:1", "b:1", "c:1", ""}, rows: []int64{10, 11, 9, 12, 3}}
	// The unsalted table's regions sit elsewhere; its rows are all in its first region.
	unsalted := placement{servers: []string{"c:1", "a:1", "a:1", "b:1", "d:1"}, rows: []int64{45, 0, 0, 0, 0}}
	got, err := serverLoads(salted, unsalted)
	if err != nil {
		t.Fatal(err)
	}
	want := []ServerLoad{
		{Server: "(unassigned)", Regions: 1, SaltedRows: 3},
		{Server: "a:1", Regions: 1, SaltedRows: 11},
		{Server: "b:1", Regions: 2, SaltedRows: 19},
		{Server: "c:1", Regions: 1, SaltedRows: 12, UnsaltedRows: 45},
		{Server: "d:1"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("serverLoads =\n%+v\nwant\n%+v", got, want)
	}
	if mm := loadsMaxMean(got, func(l ServerLoad) int64 { return l.UnsaltedRows }); mm != 5 {
		t.Errorf("unsalted max/mean over 5 servers = %v, want 5 (one server holds everything)", mm)
	}
	if _, err := serverLoads(placement{servers: []string{"a"}, rows: nil}, unsalted); err == nil {
		t.Error("mismatched counts: no error")
	}
}

// placed is a memory store whose regions are served round-robin by `servers` fake region servers;
// the first `opening` answers for each table leave every other region without a server, as
// hbase:meta does while a new table's regions open.
type placed struct {
	*recorder
	servers int
	opening int

	mu    sync.Mutex
	calls map[string]int
}

func (p *placed) RegionServers(ctx context.Context, table string) ([][]byte, []string, error) {
	starts, err := p.Regions(ctx, table)
	if err != nil {
		return nil, nil, err
	}
	p.mu.Lock()
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[table]++
	open := p.calls[table] > p.opening
	p.mu.Unlock()
	servers := make([]string, len(starts))
	for i := range starts {
		if open || i%2 == 0 {
			servers[i] = fmt.Sprintf("rs%d:16020", i%p.servers)
		}
	}
	return starts, servers, nil
}

// waitAssigned asks again until every region has a server, within its bound, and returns the last
// answer either way.
func TestWaitAssigned(t *testing.T) {
	tests := []struct {
		name       string
		opening    int
		bound      time.Duration
		calls      int
		unassigned int
	}{
		{"open at once", 0, time.Second, 1, 0},
		{"open after two answers", 2, time.Second, 3, 0},
		{"not open within the bound", 1000, 30 * time.Millisecond, -1, 8},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := memory.New()
			if err := b.CreateTable(t.Context(), "t", backends.TableOptions{SplitKeys: testkit.Salter(t, "hash:16").SplitKeys(0)}); err != nil {
				t.Fatal(err)
			}
			p := &placed{recorder: &recorder{Backend: b}, servers: 3, opening: tc.opening}
			starts, servers, waited, err := waitAssigned(t.Context(), p, "t", tc.bound, 5*time.Millisecond)
			if err != nil || len(starts) != 16 || len(servers) != 16 {
				t.Fatalf("waitAssigned = %d starts, %d servers, %v", len(starts), len(servers), err)
			}
			if n := len(servers) - assigned(servers); n != tc.unassigned {
				t.Errorf("%d regions unassigned, want %d", n, tc.unassigned)
			}
			if tc.calls >= 0 && p.calls["t"] != tc.calls {
				t.Errorf("%d answers asked for, want %d", p.calls["t"], tc.calls)
			}
			if tc.calls < 0 && waited < tc.bound {
				t.Errorf("gave up after %v, before the bound %v", waited, tc.bound)
			}
		})
	}
}

// The cluster section counts a new table's regions once they are open: none "(unassigned)".
func TestRunClusterWaitsForRegions(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	st := BackendStore("memory://", &placed{recorder: &recorder{Backend: memory.New()}, servers: 3, opening: 1})
	cfg := smallConfig()
	cfg.Sections = []string{SectionCluster}
	rep, err := Run(t.Context(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cluster == nil {
		t.Fatalf("no cluster section; notes %q", rep.Notes)
	}
	regions := 0
	for _, s := range rep.Cluster.Servers {
		if s.Server == "(unassigned)" {
			t.Errorf("%d regions counted unassigned: %+v", s.Regions, rep.Cluster.Servers)
		}
		regions += s.Regions
	}
	if regions != 16 {
		t.Errorf("%d regions counted, want 16", regions)
	}
}

func TestRunCluster(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name    string
		servers int
		force   bool
		want    bool // the section ran
	}{
		{"three servers", 3, false, true},
		{"one server", 1, false, false},
		{"one server, forced", 1, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := BackendStore("memory://", &placed{recorder: &recorder{Backend: memory.New()}, servers: tc.servers})
			cfg := smallConfig()
			cfg.Sections = []string{SectionGet, SectionScan, SectionCluster}
			cfg.ScanBuckets = []int{1, 8, 32} // 32: the first-row goal against baselines
			cfg.Cluster = tc.force
			rep, err := Run(t.Context(), st, cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Cluster
			if (c != nil) != tc.want {
				t.Fatalf("cluster section %+v, want run=%v; notes %q", c, tc.want, rep.Notes)
			}
			if c == nil {
				if len(rep.Notes) == 0 || !strings.Contains(rep.Notes[0], "on 1 server") {
					t.Errorf("no note saying why the section was skipped: %q", rep.Notes)
				}
				return
			}
			if len(c.Servers) != tc.servers || c.Forced != tc.force {
				t.Fatalf("servers %+v (forced %v), want %d", c.Servers, c.Forced, tc.servers)
			}
			var salted, unsalted int64
			regions := 0
			for _, s := range c.Servers {
				salted += s.SaltedRows
				unsalted += s.UnsaltedRows
				regions += s.Regions
			}
			if salted != int64(cfg.Rows) || unsalted != int64(cfg.Rows) || regions != 16 {
				t.Errorf("servers hold %d salted and %d unsalted rows in %d regions, want %d, %d, 16", salted, unsalted, regions, cfg.Rows, cfg.Rows)
			}
			// Unsalted monotonic keys all land in the first region, on rs0.
			if c.Servers[0].UnsaltedRows != int64(cfg.Rows) || c.UnsaltedMaxMean != float64(tc.servers) {
				t.Errorf("unsalted rows not all on rs0: %+v, max/mean %v", c.Servers, c.UnsaltedMaxMean)
			}
			if c.SaltedMaxMean < 1 || c.SaltedMaxMean > 1.2 {
				t.Errorf("salted rows per server max/mean %v", c.SaltedMaxMean)
			}
			if c.SaltedImportRowsPerS <= 0 || c.UnsaltedImportRowsPerS <= 0 || c.ImportRatio <= 0 {
				t.Errorf("import figures %+v", c)
			}
			var md bytes.Buffer
			if err := rep.Markdown(&md); err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				fmt.Sprintf("## 6. Multi-server: %d servers", tc.servers),
				fmt.Sprintf("| rs0:16020 | %d | %d | %d |", c.Servers[0].Regions, c.Servers[0].SaltedRows, cfg.Rows),
				"| monotonic import, salted / unsalted",
				"| fan-out scan / raw scan, 8 buckets |",
				"| first row / raw scanner's, 32 buckets |",
				"| first row / 32 raw scanners at once, 32 buckets |",
				"| salted get / raw get, p50 / p99 |",
			} {
				if !strings.Contains(md.String(), want) {
					t.Errorf("Markdown lacks %q:\n%s", want, md.String())
				}
			}
			// The scaling targets again under the section, unless every region was on one server.
			_, section, _ := strings.Cut(md.String(), "## 6. Multi-server")
			if got := strings.Contains(section, "| first row, 32-bucket scan, vs its floor |"); got == tc.force {
				t.Errorf("the scaling targets in the multi-server section: %v, want %v:\n%s", got, !tc.force, section)
			}
		})
	}
}
