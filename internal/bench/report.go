package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Report holds every figure of one run, the ratios brine/raw, and the goals met or not. It is what
// bench.json holds; Markdown renders it for people.
type Report struct {
	Store    string    `json:"store"`
	Raw      string    `json:"raw_driver"`
	Started  time.Time `json:"started"`
	Duration float64   `json:"duration_s"`
	Config   Config    `json:"config"`

	Spread   *SpreadResult   `json:"spread,omitempty"`
	Write    *WriteResult    `json:"write,omitempty"`
	Scans    []ScanResult    `json:"scans,omitempty"`
	Get      *GetResult      `json:"get,omitempty"`
	Limits   []LimitResult   `json:"limit_scans,omitempty"`
	Index    *IndexResult    `json:"index,omitempty"`
	Rebucket *RebucketResult `json:"rebucket,omitempty"`
	Verify   *VerifyResult   `json:"verify,omitempty"`
	Sync     *SyncResult     `json:"sync,omitempty"`
	Copy     *CopyResult     `json:"copy,omitempty"`
	Shards   *ShardsResult   `json:"shards,omitempty"`
	Filter   *FilterResult   `json:"filter,omitempty"`
	// Cluster is the multi-server section; nil when the regions were all on one server.
	Cluster *ClusterResult `json:"cluster,omitempty"`
	Goals   []GoalResult   `json:"goals"`
	Notes   []string       `json:"notes,omitempty"`
	Tuning  []TuningResult `json:"raw_tuning,omitempty"`
}

// SpreadResult is how N monotonic keys spread over the regions of a table pre-split at the salter's
// bucket boundaries: salted through brine, and unsalted through the raw driver.
type SpreadResult struct {
	Rows            int64   `json:"rows"`
	Salt            string  `json:"salt"`
	Regions         int     `json:"regions"`
	Salted          []int64 `json:"salted_rows_per_region"`
	Unsalted        []int64 `json:"unsalted_rows_per_region"`
	SaltedMaxMean   float64 `json:"salted_max_over_mean"`
	UnsaltedMaxMean float64 `json:"unsalted_max_over_mean"`
	// UnsaltedMaxShare is the fraction of the unsalted rows held by its fullest region (1: one hot region).
	UnsaltedMaxShare float64 `json:"unsalted_max_region_share"`
}

// WriteResult compares write throughput (medians over the repeats).
type WriteResult struct {
	Rows           int     `json:"rows"`
	NaiveRows      int     `json:"naive_rows"`
	NaiveRowsPerS  float64 `json:"naive_rows_per_s"`
	RawRowsPerS    float64 `json:"raw_batched_rows_per_s"`
	BrineRowsPerS  float64 `json:"brine_import_rows_per_s"`
	RawConcurrency int     `json:"raw_concurrency"`
	BrineOverNaive float64 `json:"brine_over_naive"`
	BrineOverRaw   float64 `json:"brine_over_raw"`
	BrineBatches   int64   `json:"brine_batches"`
	// The raw driver's batch call (gohbase's SendBatch) at its best point of the sweep; 0 where the
	// driver has none.
	RawBatchRows      int     `json:"raw_batch_rows,omitempty"`
	RawBatchWriters   int     `json:"raw_batch_writers,omitempty"`
	RawBatchRowsPerS  float64 `json:"raw_batch_rows_per_s,omitempty"`
	BrineOverRawBatch float64 `json:"brine_over_raw_batch,omitempty"`
}

// TuningResult is one point of the raw driver's concurrency sweep.
type TuningResult struct {
	Concurrency int     `json:"concurrency"`
	BatchRows   int     `json:"batch_rows,omitempty"` // > 0: the batch call, this many rows per call
	Rows        int     `json:"rows"`
	RowsPerS    float64 `json:"rows_per_s"`
}

// ScanResult compares one logical range read raw (one unsalted range) and through brine's fan-out
// over Buckets buckets (medians over the repeats).
type ScanResult struct {
	Buckets         int     `json:"buckets"`
	Rows            int64   `json:"rows"`
	RawRowsPerS     float64 `json:"raw_rows_per_s"`
	BrineRowsPerS   float64 `json:"brine_rows_per_s"`
	RawFirstRowMs   float64 `json:"raw_first_row_ms"`
	BrineFirstRowMs float64 `json:"brine_first_row_ms"`
	Ratio           float64 `json:"brine_over_raw"`
	// RawV2RowsPerS is the raw read through the driver's second scanner (gohbase's ScannerV2); 0
	// where it has none.
	RawV2RowsPerS float64 `json:"raw_v2_rows_per_s,omitempty"`
	RatioV2       float64 `json:"brine_over_raw_v2,omitempty"`
	FirstRowRatio float64 `json:"first_row_brine_over_raw"`
	// RawParallelFirstRowMs is the floor of brine's first row: raw scanners over the same buckets'
	// physical ranges, all opened at once, until the last has its first row (0 for one bucket).
	RawParallelFirstRowMs float64 `json:"raw_parallel_first_row_ms,omitempty"`
	FirstRowOverParallel  float64 `json:"first_row_brine_over_raw_parallel,omitempty"`
}

// GetResult compares point-get latency on the same logical keys.
type GetResult struct {
	Gets       int     `json:"gets"`
	RawP50us   float64 `json:"raw_p50_us"`
	RawP99us   float64 `json:"raw_p99_us"`
	BrineP50us float64 `json:"brine_p50_us"`
	BrineP99us float64 `json:"brine_p99_us"`
	// DriverP50us, DriverP99us: brine's driver alone (backends.Read, one key) on the unsalted table.
	DriverP50us float64 `json:"driver_p50_us"`
	DriverP99us float64 `json:"driver_p99_us"`
	P50Ratio    float64 `json:"p50_brine_over_raw"`
	P99Ratio    float64 `json:"p99_brine_over_raw"`
	// RawSaltedP50us, RawSaltedP99us: raw again, on the salted table by physical key, so the server
	// does the same work as for brine; ClientP50Ratio is brine's p50 over it, what the client adds.
	RawSaltedP50us float64 `json:"raw_salted_layout_p50_us"`
	RawSaltedP99us float64 `json:"raw_salted_layout_p99_us"`
	ClientP50Ratio float64 `json:"p50_brine_over_raw_salted_layout"`
	// BackendReadsPerGet is how many backends.Backend.Read calls (and keys) one salted Get made.
	BackendReadsPerGet float64 `json:"backend_reads_per_get"`
	BackendKeysPerGet  float64 `json:"backend_keys_per_get"`
	// DriverRPCsPerGet is how many calls brine's driver made to the store client per Get; -1 when the
	// driver cannot be observed below the backends API.
	DriverRPCsPerGet float64 `json:"driver_rpcs_per_get"`
	// DirReadsPerGet is the table handle's reads of the rebucket directory over the gets (at most one
	// per client.WithRouteRefresh), counted apart from the gets' own calls above.
	DirReadsPerGet float64 `json:"directory_reads_per_get"`
}

// LimitResult is one limited scan over Buckets buckets: how many rows were read for those returned.
type LimitResult struct {
	Limit    int `json:"limit"`
	Buckets  int `json:"buckets"`
	Batch    int `json:"batch"`
	Prefetch int `json:"prefetch"`
	Returned int `json:"returned"`
	// BackendRows is the most rows the backend yielded to the client in one repeat.
	BackendRows int64 `json:"backend_rows"`
	// ServerRows is the most rows the server sent in one repeat (-1: not observable on this store).
	ServerRows int64 `json:"server_rows"`
	// Bound is the goal: 2 × limit + buckets (every bucket's first row, and at most about twice
	// the rows the merge took).
	Bound      int     `json:"bound"`
	ReadPerRow float64 `json:"read_per_returned_row"`
}

// read is the figure held against the bound: what the server sent when that is known, else what the
// backend yielded.
func (l LimitResult) read() int64 {
	if l.ServerRows >= 0 {
		return l.ServerRows
	}
	return l.BackendRows
}

// GoalResult is one target, evaluated.
type GoalResult struct {
	Name string `json:"name"`
	Want string `json:"want"`
	Got  string `json:"got"`
	Met  bool   `json:"met"`
	// Scaling marks the targets of how brine scales with the servers (first rows, batching, indexes,
	// rebuckets), which the multi-server section shows again.
	Scaling bool `json:"scaling,omitempty"`
}

// Evaluate holds the figures against the targets. A section that did not run yields no goal.
func Evaluate(r *Report) []GoalResult {
	var goals []GoalResult
	if s := r.Spread; s != nil {
		goals = append(goals, GoalResult{
			Name: "write spread, salted",
			Want: "max/mean <= 1.10",
			Got:  fmt.Sprintf("%.3f", s.SaltedMaxMean),
			Met:  s.SaltedMaxMean > 0 && s.SaltedMaxMean <= 1.10,
		}, GoalResult{
			Name: "write spread, unsalted",
			Want: "all rows in one region",
			Got:  fmt.Sprintf("%.1f%% in the fullest of %d regions", 100*s.UnsaltedMaxShare, s.Regions),
			Met:  s.UnsaltedMaxShare == 1,
		})
	}
	if w := r.Write; w != nil {
		goals = append(goals, GoalResult{
			Name: "import vs naive loop",
			Want: ">= 5.0x",
			Got:  fmt.Sprintf("%.2fx", w.BrineOverNaive),
			Met:  w.BrineOverNaive >= 5,
		}, GoalResult{
			Scaling: true,
			Name:    "import vs raw batching",
			Want:    ">= 1.1x",
			Got:     fmt.Sprintf("%.2fx", w.BrineOverRaw),
			Met:     w.BrineOverRaw >= 1.1,
		})
		if w.RawBatchRowsPerS > 0 {
			goals = append(goals, GoalResult{
				Scaling: true,
				Name:    "import vs raw SendBatch",
				Want:    ">= 1.1x",
				Got:     fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", w.BrineOverRawBatch, w.BrineRowsPerS, w.RawBatchRowsPerS),
				Met:     w.BrineOverRawBatch >= 1.1,
			})
		}
	}
	for _, s := range r.Scans {
		if s.Buckets > 1 && s.RawFirstRowMs > 0 {
			goals = append(goals, GoalResult{
				Name: fmt.Sprintf("time to first row, %d buckets", s.Buckets),
				Want: "<= 2.0x raw",
				Got:  fmt.Sprintf("%.2fx (%.2f ms vs %.2f ms)", s.FirstRowRatio, s.BrineFirstRowMs, s.RawFirstRowMs),
				Met:  s.FirstRowRatio > 0 && s.FirstRowRatio <= 2,
			})
		}
		if (s.Buckets == 8 || s.Buckets == 32) && s.RawParallelFirstRowMs > 0 {
			goals = append(goals, GoalResult{
				Scaling: true,
				Name:    fmt.Sprintf("first row, %d-bucket scan, vs its floor", s.Buckets),
				Want:    fmt.Sprintf("<= 1.1x the floor (%d raw scanners opened at once)", s.Buckets),
				Got:     fmt.Sprintf("%.2fx (%.2f ms; floor %.2f ms)", s.FirstRowOverParallel, s.BrineFirstRowMs, s.RawParallelFirstRowMs),
				Met:     s.FirstRowOverParallel > 0 && s.FirstRowOverParallel <= 1.1,
			})
		}
		if s.Buckets != 8 {
			continue
		}
		goals = append(goals, GoalResult{
			Name: "fan-out scan, 8 buckets, vs raw Scan",
			Want: ">= 2.0x raw rows/s",
			Got:  fmt.Sprintf("%.2fx", s.Ratio),
			Met:  s.Ratio >= 2,
		})
		if s.RawV2RowsPerS > 0 {
			goals = append(goals, GoalResult{
				Name: "fan-out scan, 8 buckets, vs raw ScanV2",
				Want: ">= 2.0x raw rows/s",
				Got:  fmt.Sprintf("%.2fx", s.RatioV2),
				Met:  s.RatioV2 >= 2,
			})
		}
	}
	if g := r.Get; g != nil {
		goals = append(goals, GoalResult{
			Name: "salted get p50",
			Want: "<= 1.02x raw",
			Got:  fmt.Sprintf("%.3fx", g.P50Ratio),
			Met:  g.P50Ratio > 0 && g.P50Ratio <= 1.02,
		})
		rpcs := g.DriverRPCsPerGet
		if rpcs < 0 {
			rpcs = g.BackendReadsPerGet
		}
		goals = append(goals, GoalResult{
			Name: "salted get RPCs",
			Want: "1 per get",
			Got:  fmt.Sprintf("%.2f", rpcs),
			Met:  rpcs == 1 && g.BackendKeysPerGet == 1,
		})
	}
	if x := r.Index; x != nil {
		if e := x.Exclusive; e != nil {
			goals = append(goals, e.goals()...)
		}
		if im := x.Import; im != nil {
			goals = append(goals, GoalResult{
				Scaling: true,
				Name:    "indexed Import, 2 indexes",
				Want:    fmt.Sprintf(">= 10x the first indexed Import's %d rows/s and >= 0.10x a plain Import", IndexImportBaseline),
				Got: fmt.Sprintf("%.0f rows/s: %.2fx that, %.3fx plain (%.0f rows/s)",
					im.IndexRowsPerS, im.IndexOverBaseline, im.IndexOverPlain, im.PlainRowsPerS),
				Met: im.IndexOverBaseline >= 10 && im.IndexOverPlain >= 0.1,
			})
		}
		for _, u := range x.Puts {
			if u.Indexes != 1 {
				continue
			}
			goals = append(goals, GoalResult{
				Scaling: true,
				Name:    "indexed Put, 1 index",
				Want:    ">= 0.5x a plain Put",
				Got:     fmt.Sprintf("%.2fx (%.0f rows/s)", u.OverNoIndex, u.RowsPerS),
				Met:     u.OverNoIndex >= 0.5,
			})
		}
	}
	if b := r.Rebucket; b != nil {
		goals = append(goals, GoalResult{
			Scaling: true,
			Name:    fmt.Sprintf("rebucket copy, %s to %s", b.From, b.To),
			Want:    ">= 0.5x a plain Import of the same rows",
			Got:     fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", b.CopyOverImport, b.CopyRowsPerS, b.ImportRowsPerS),
			Met:     b.CopyOverImport >= 0.5,
		})
	}
	if v := r.Verify; v != nil {
		goals = append(goals, v.goal())
	}
	if s := r.Sync; s != nil {
		goals = append(goals, s.goal())
	}
	if c := r.Copy; c != nil {
		goals = append(goals, c.goals()...)
	}
	for _, l := range r.Limits {
		goals = append(goals, GoalResult{
			Name: fmt.Sprintf("limit %d scan, %d buckets, prefetch %d", l.Limit, l.Buckets, l.Prefetch),
			Want: fmt.Sprintf("reads <= %d rows (2 x limit + buckets)", l.Bound),
			Got:  fmt.Sprintf("%d rows", l.read()),
			Met:  l.Returned > 0 && l.read() <= int64(l.Bound),
		})
	}
	return goals
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("bench: encode report: %w", err)
	}
	return nil
}

// Markdown renders the report as Markdown tables.
func (r *Report) Markdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	c := r.Config
	p("# brine vs the raw driver\n\n")
	p("store `%s`, raw driver: %s; started %s, took %.0fs.\n", r.Store, r.Raw, r.Started.UTC().Format(time.RFC3339), r.Duration)
	p("Sizes: %d rows (%d-byte values), naive loop %d rows, %d gets, %d repeats (medians shown), scan batch %d.\n",
		c.Rows, c.ValueSize, c.NaiveRows, c.Gets, c.Repeat, c.ScanBatch)
	p("Raw and brine runs alternate within every repeat, after a warm-up of each.\n\n")

	if len(r.Goals) > 0 {
		p("## Targets\n\n")
		goalsTable(p, r.Goals)
		p("Every figure is a ratio of two measurements of this run. The import's baselines are raw gohbase's best " +
			"batching as section 2 measures it: concurrent Puts, which gohbase batches per region server (the best of the " +
			"concurrency sweep), and SendBatch of rows in hand (the best of its sweep).\n\n")
	}
	if s := r.Spread; s != nil {
		p("## 1. Write spread: %d monotonic keys, %d regions pre-split at the same keys\n\n", s.Rows, s.Regions)
		p("| region | brine `%s` | raw, unsalted |\n|---:|---:|---:|\n", s.Salt)
		for i := range s.Salted {
			var u int64
			if i < len(s.Unsalted) {
				u = s.Unsalted[i]
			}
			p("| %d | %d | %d |\n", i, s.Salted[i], u)
		}
		p("| **max/mean** | **%.3f** | **%.3f** |\n\n", s.SaltedMaxMean, s.UnsaltedMaxMean)
	}
	if wr := r.Write; wr != nil {
		p("## 2. Write throughput\n\n| writer | rows | rows/s | brine import / this |\n|---|---:|---:|---:|\n")
		p("| raw, one Put at a time (sequential) | %d | %.0f | %.2fx |\n", wr.NaiveRows, wr.NaiveRowsPerS, wr.BrineOverNaive)
		p("| raw, %d concurrent Puts (client batching) | %d | %.0f | %.2fx |\n", wr.RawConcurrency, wr.Rows, wr.RawRowsPerS, wr.BrineOverRaw)
		workers := "default workers"
		if c.ImportWorkers > 0 {
			workers = fmt.Sprintf("%d workers", c.ImportWorkers)
		}
		if wr.RawBatchRowsPerS > 0 {
			p("| raw, SendBatch of %d rows from %d writers | %d | %.0f | %.2fx |\n", wr.RawBatchRows, wr.RawBatchWriters, wr.Rows, wr.RawBatchRowsPerS, wr.BrineOverRawBatch)
		}
		p("| brine `Table.Import` (%s) | %d | %.0f | 1.00x |\n\n", workers, wr.Rows, wr.BrineRowsPerS)
		if len(r.Tuning) > 0 {
			p("Raw sweeps (best used above):")
			for _, t := range r.Tuning {
				if t.BatchRows > 0 {
					p(" SendBatch %d rows × %d → %.0f rows/s;", t.BatchRows, t.Concurrency, t.RowsPerS)
				} else {
					p(" %d → %.0f rows/s;", t.Concurrency, t.RowsPerS)
				}
			}
			p("\n\n")
		}
	}
	if len(r.Scans) > 0 {
		p("## 3. Range scan: the same logical range, raw unsalted vs brine fan-out\n\n")
		p("| buckets | rows | raw rows/s | raw ScanV2 rows/s | brine rows/s | brine/raw | brine/raw ScanV2 | raw first row | brine first row | brine/raw | raw, N scanners at once | brine/that |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, s := range r.Scans {
			floor := "– | –"
			if s.RawParallelFirstRowMs > 0 {
				floor = fmt.Sprintf("%.2f ms | %.2fx", s.RawParallelFirstRowMs, s.FirstRowOverParallel)
			}
			var v2 string
			if s.RawV2RowsPerS > 0 {
				v2 = fmt.Sprintf("%.0f | %.0f | %.2fx | %.2fx", s.RawV2RowsPerS, s.BrineRowsPerS, s.Ratio, s.RatioV2)
			} else {
				v2 = fmt.Sprintf("– | %.0f | %.2fx | –", s.BrineRowsPerS, s.Ratio)
			}
			p("| %d | %d | %.0f | %s | %.2f ms | %.2f ms | %.2fx | %s |\n", s.Buckets, s.Rows, s.RawRowsPerS, v2, s.RawFirstRowMs, s.BrineFirstRowMs, s.FirstRowRatio, floor)
		}
		p("\nRows/s: medians of the full scans. First rows: medians of %d samples of each, taken in turn, each scan broken off at its first row. \"Raw, N scanners at once\": raw scanners over the same N buckets' physical ranges, all opened together with brine's first batch, timed until the last has its first row: what opening N scanners costs this server and client before any merging.\n\n", r.Config.FirstRows)
	}
	if g := r.Get; g != nil {
		p("## 4. Point get (%d keys, each read by both)\n\n", g.Gets)
		p("| | p50 | p99 |\n|---|---:|---:|\n")
		p("| raw | %.0f µs | %.0f µs |\n| brine `Table.Get` (salted table) | %.0f µs | %.0f µs |\n", g.RawP50us, g.RawP99us, g.BrineP50us, g.BrineP99us)
		p("| brine's driver alone (`Backend.Read`, unsalted table) | %.0f µs | %.0f µs |\n", g.DriverP50us, g.DriverP99us)
		p("| raw, salted table by physical key | %.0f µs | %.0f µs |\n", g.RawSaltedP50us, g.RawSaltedP99us)
		p("| brine/raw | %.3fx | %.3fx |\n\n", g.P50Ratio, g.P99Ratio)
		p("Brine's p50 over raw's on the same salted table (what the client adds): %.3fx.\n\n", g.ClientP50Ratio)
		p("Per salted Get: %.2f backend Read call(s) for %.2f key(s)", g.BackendReadsPerGet, g.BackendKeysPerGet)
		if g.DriverRPCsPerGet >= 0 {
			p(", %.2f driver RPC(s)", g.DriverRPCsPerGet)
		}
		if g.DirReadsPerGet > 0 {
			p("; besides, the table handle read the rebucket directory %.4f times per get (once per `WithRouteRefresh` at most)", g.DirReadsPerGet)
		}
		p(".\n\n")
	}
	if len(r.Limits) > 0 {
		p("## 5. Scan with limit: rows read per row returned\n\n")
		p("| limit | buckets | batch | client prefetch | returned | rows from server | rows from backend | read/returned | bound |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, l := range r.Limits {
			server := "n/a"
			if l.ServerRows >= 0 {
				server = fmt.Sprint(l.ServerRows)
			}
			p("| %d | %d | %d | %d | %d | %s | %d | %.1f | %d |\n", l.Limit, l.Buckets, l.Batch, l.Prefetch, l.Returned, server, l.BackendRows, l.ReadPerRow, l.Bound)
		}
		p("\n")
	}
	if x := r.Index; x != nil {
		x.markdown(p)
	}
	if rb := r.Rebucket; rb != nil {
		rb.markdown(p)
	}
	if v := r.Verify; v != nil {
		v.markdown(p)
	}
	if s := r.Sync; s != nil {
		s.markdown(p)
	}
	if c := r.Copy; c != nil {
		c.markdown(p)
	}
	if s := r.Shards; s != nil {
		s.markdown(p)
	}
	if f := r.Filter; f != nil {
		f.markdown(p)
	}
	if c := r.Cluster; c != nil {
		c.markdown(p, r)
	}
	for _, n := range r.Notes {
		p("- %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// goalsTable renders goals as one table.
func goalsTable(p func(format string, args ...any), goals []GoalResult) {
	p("| target | want | got | met |\n|---|---|---|---|\n")
	for _, g := range goals {
		p("| %s | %s | %s | %s |\n", g.Name, g.Want, g.Got, yesNo(g.Met))
	}
	p("\n")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}
