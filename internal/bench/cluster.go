package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/wait"
	"github.com/brine-kv/brine/salting"
)

// serverLister is a driver that can say which server serves each region of a table (HBase's
// RegionServers). The benchmark asks it where the bench tables live.
type serverLister interface {
	RegionServers(ctx context.Context, table string) (starts [][]byte, servers []string, err error)
}

// ClusterResult is the multi-server section: how the write tables' rows land on the servers, and
// what that does to import throughput, beside the scan and get ratios of the same run.
type ClusterResult struct {
	// Servers holds one entry per server that serves a region of the write tables, by name.
	Servers []ServerLoad `json:"servers"`
	// SaltedMaxMean and UnsaltedMaxMean are max/mean of the rows per server (1.0: even).
	SaltedMaxMean   float64 `json:"salted_rows_per_server_max_over_mean"`
	UnsaltedMaxMean float64 `json:"unsalted_rows_per_server_max_over_mean"`
	// Import throughput of the same monotonic rows through Table.Import, salted and unsalted
	// (medians), and their ratio: unsalted monotonic writes all go to one region, so one server.
	SaltedImportRowsPerS   float64 `json:"salted_import_rows_per_s"`
	UnsaltedImportRowsPerS float64 `json:"unsalted_import_rows_per_s"`
	ImportRatio            float64 `json:"salted_over_unsalted_import"`
	// Forced: the section ran on request (Config.Cluster) although every region is on one server.
	Forced bool `json:"forced,omitempty"`
}

// ServerLoad is what one server holds of the write tables.
type ServerLoad struct {
	Server       string `json:"server"`
	Regions      int    `json:"regions"`
	SaltedRows   int64  `json:"salted_rows"`
	UnsaltedRows int64  `json:"unsalted_rows"`
}

// serverCount is how many distinct servers serve the regions (an unassigned region, "", counts for
// none).
func serverCount(servers []string) int {
	seen := map[string]bool{}
	for _, s := range servers {
		if s != "" {
			seen[s] = true
		}
	}
	return len(seen)
}

// Bounds of placedRegions' wait for a new table's regions to open.
const (
	regionsOpenWait  = time.Minute
	regionsOpenEvery = 500 * time.Millisecond
)

// placedRegions is sl.RegionServers of table once every region has a server: a table just created
// has regions the master has not yet opened, and hbase:meta lists them without one, so read at once
// they were counted as "(unassigned)" (2 of 16 in a fresh run). It asks again every
// regionsOpenEvery up to regionsOpenWait, then goes on with the regions still unassigned noted.
func (r *runner) placedRegions(ctx context.Context, sl serverLister, table string) ([][]byte, []string, error) {
	starts, servers, waited, err := waitAssigned(ctx, sl, table, regionsOpenWait, regionsOpenEvery)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: %w", err)
	}
	if n := len(servers) - assigned(servers); n > 0 {
		r.log.Warn("bench: regions still unassigned", "table", table, "unassigned", n, "regions", len(servers), "waited", waited)
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("%d of the %d regions of %s had no server after %v", n, len(servers), table, waited.Round(time.Second)))
	}
	return starts, servers, nil
}

// waitAssigned asks sl where table's regions are until every one has a server, every `every`, for at
// most `bound`; it returns the last answer and how long it waited.
func waitAssigned(ctx context.Context, sl serverLister, table string, bound, every time.Duration) ([][]byte, []string, time.Duration, error) {
	began := time.Now()
	for {
		starts, servers, err := sl.RegionServers(ctx, table)
		waited := time.Since(began)
		if err != nil || assigned(servers) == len(servers) || waited >= bound {
			return starts, servers, waited, err
		}
		if err := wait.Sleep(ctx, every); err != nil {
			return nil, nil, waited, err
		}
	}
}

// assigned is how many regions have a server.
func assigned(servers []string) int {
	n := 0
	for _, s := range servers {
		if s != "" {
			n++
		}
	}
	return n
}

// placement is one table's regions: the server of each, and the rows it holds.
type placement struct {
	servers []string
	rows    []int64
}

// serverLoads adds both tables' rows up per server. The tables' regions need not sit on the same
// servers; a server's Regions counts the salted table's regions it serves.
func serverLoads(salted, unsalted placement) ([]ServerLoad, error) {
	by := map[string]*ServerLoad{}
	add := func(p placement, f func(l *ServerLoad, rows int64)) error {
		if len(p.rows) != len(p.servers) {
			return fmt.Errorf("bench: %d regions placed, %d counted", len(p.servers), len(p.rows))
		}
		for i, s := range p.servers {
			if s == "" {
				s = "(unassigned)"
			}
			if by[s] == nil {
				by[s] = &ServerLoad{Server: s}
			}
			f(by[s], p.rows[i])
		}
		return nil
	}
	if err := add(salted, func(l *ServerLoad, n int64) { l.Regions++; l.SaltedRows += n }); err != nil {
		return nil, err
	}
	if err := add(unsalted, func(l *ServerLoad, n int64) { l.UnsaltedRows += n }); err != nil {
		return nil, err
	}
	out := make([]ServerLoad, 0, len(by))
	for _, l := range by {
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b ServerLoad) int { return strings.Compare(a.Server, b.Server) })
	return out, nil
}

// loadsMaxMean is max/mean of one column of loads.
func loadsMaxMean(loads []ServerLoad, rows func(ServerLoad) int64) float64 {
	counts := make([]int64, len(loads))
	for i, l := range loads {
		counts[i] = rows(l)
	}
	return MaxOverMean(counts)
}

// cluster runs the multi-server section when the write tables' regions are on more than one server
// (or Config.Cluster asks for it); otherwise it notes why it did not.
func (r *runner) cluster(ctx context.Context) error {
	sl, ok := r.store.Backend.(serverLister)
	if !ok {
		r.rep.Notes = append(r.rep.Notes, "multi-server section skipped: the store cannot say which server serves a region")
		return nil
	}
	// Both write tables are split at the same keys; the salted one's placement is the one measured.
	starts, servers, err := r.placedRegions(ctx, sl, r.salted.Name())
	if err != nil {
		return err
	}
	n := serverCount(servers)
	if n <= 1 && !r.cfg.Cluster {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("multi-server section skipped: the %d regions of the bench tables are on %d server(s) (--cluster forces it)", len(servers), n))
		return nil
	}
	plainStarts, plainServers, err := r.placedRegions(ctx, sl, r.plain)
	if err != nil {
		return err
	}
	salted, err := r.countRanges(ctx, r.salted.Name(), starts)
	if err != nil {
		return err
	}
	unsalted, err := r.countRanges(ctx, r.plain, plainStarts)
	if err != nil {
		return err
	}
	loads, err := serverLoads(placement{servers, salted}, placement{plainServers, unsalted})
	if err != nil {
		return err
	}
	res := &ClusterResult{
		Servers:         loads,
		SaltedMaxMean:   loadsMaxMean(loads, func(l ServerLoad) int64 { return l.SaltedRows }),
		UnsaltedMaxMean: loadsMaxMean(loads, func(l ServerLoad) int64 { return l.UnsaltedRows }),
		Forced:          n <= 1,
	}
	if err := r.clusterImports(ctx, res); err != nil {
		return err
	}
	r.rep.Cluster = res
	return nil
}

// clusterImports times Table.Import of the same monotonic rows into the salted write table and into
// an unsalted table split at the same keys, alternating which goes first.
func (r *runner) clusterImports(ctx context.Context, res *ClusterResult) error {
	none, err := salting.ParseSpec("none")
	if err != nil {
		return err
	}
	unsalted, err := r.createTable(ctx, "unsalted", none, r.splits)
	if err != nil {
		return err
	}
	r.log.Info("bench: salted vs unsalted import", "rows", r.cfg.Rows)
	if _, err := r.importRows(ctx, unsalted, min(r.cfg.Rows, 5000)); err != nil { // warm-up
		return err
	}
	var salted, plain []float64
	timed := func(t *client.Table, into *[]float64) error {
		began := time.Now()
		if _, err := r.importRows(ctx, t, r.cfg.Rows); err != nil {
			return err
		}
		*into = append(*into, RowsPerSecond(int64(r.cfg.Rows), time.Since(began)))
		return nil
	}
	for rep := range r.cfg.Repeat {
		first, second := r.salted, unsalted
		a, b := &salted, &plain
		if rep%2 == 1 {
			first, second, a, b = second, first, b, a
		}
		if err := timed(first, a); err != nil {
			return err
		}
		if err := timed(second, b); err != nil {
			return err
		}
	}
	res.SaltedImportRowsPerS, res.UnsaltedImportRowsPerS = Median(salted), Median(plain)
	res.ImportRatio = Ratio(res.SaltedImportRowsPerS, res.UnsaltedImportRowsPerS)
	return nil
}

// markdown renders the section, with the run's scan and get ratios beside the import ratio.
func (c *ClusterResult) markdown(p func(format string, args ...any), r *Report) {
	p("## 6. Multi-server: %d servers\n\n", len(c.Servers))
	if c.Forced {
		p("(Run on request: every region is on one server.)\n\n")
	}
	p("| server | regions (salted table) | salted rows | unsalted rows |\n|---|---:|---:|---:|\n")
	for _, s := range c.Servers {
		p("| %s | %d | %d | %d |\n", s.Server, s.Regions, s.SaltedRows, s.UnsaltedRows)
	}
	p("| **max/mean** | | **%.3f** | **%.3f** |\n\n", c.SaltedMaxMean, c.UnsaltedMaxMean)
	p("| ratio, same run | value |\n|---|---:|\n")
	p("| monotonic import, salted / unsalted (%.0f / %.0f rows/s) | %.2fx |\n", c.SaltedImportRowsPerS, c.UnsaltedImportRowsPerS, c.ImportRatio)
	for _, s := range r.Scans {
		p("| fan-out scan / raw scan, %d buckets | %.2fx |\n", s.Buckets, s.Ratio)
		if s.Buckets > 1 && s.RawFirstRowMs > 0 {
			p("| first row / raw scanner's, %d buckets | %.2fx |\n", s.Buckets, s.FirstRowRatio)
		}
		if s.RawParallelFirstRowMs > 0 {
			p("| first row / %d raw scanners at once, %d buckets | %.2fx |\n", s.Buckets, s.Buckets, s.FirstRowOverParallel)
		}
	}
	if g := r.Get; g != nil {
		p("| salted get / raw get, p50 / p99 | %.3fx / %.3fx |\n", g.P50Ratio, g.P99Ratio)
	}
	p("\n")
	var scaling []GoalResult
	for _, g := range r.Goals {
		if g.Scaling {
			scaling = append(scaling, g)
		}
	}
	if len(scaling) > 0 && !c.Forced {
		p("The scaling targets, measured on these %d servers:\n\n", len(c.Servers))
		goalsTable(p, scaling)
	}
}
