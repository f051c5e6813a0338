package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/salting"
)

// The copy section's source and target specs.
const (
	copyFrom = "hash:8"
	copyTo   = "hash:16"
)

// CopyResult is migrate.Copy of BulkRows rows, re-salted, against a plain Import of the same rows
// into the same target store (medians over the repeats): into the store itself, and into an
// embedded store beside it. The copy's figure is its reading and writing, from its first row read
// to its last bucket done: what a longer copy costs per row. Its fixed costs (creating the target
// and the checkpoint, dropping the checkpoint) are reported beside it; the Import's table is
// created before its clock starts.
type CopyResult struct {
	Rows           int     `json:"rows_per_repeat"`
	From           string  `json:"from"`
	To             string  `json:"to"`
	ImportRowsPerS float64 `json:"import_rows_per_s"`
	CopyRowsPerS   float64 `json:"copy_rows_per_s"`
	CopyOverImport float64 `json:"copy_over_import"`
	CopyFixedMs    float64 `json:"copy_fixed_ms"` // the whole Copy call less its reading and writing
	// The same into the embedded store (local://, beside the store's own tables).
	LocalImportRowsPerS float64 `json:"embedded_import_rows_per_s"`
	LocalCopyRowsPerS   float64 `json:"embedded_copy_rows_per_s"`
	LocalCopyOverImport float64 `json:"embedded_copy_over_import"`
	// Reading the source alone, every bucket at once as the copy reads it, nothing written: what
	// bounds a copy into a store that writes faster than this one reads.
	ReadRowsPerS        float64 `json:"read_rows_per_s"`
	ReadOverLocalImport float64 `json:"read_over_embedded_import"`
	ReadCPU             CPUUse  `json:"read_cpu"`
	// What each measure cost the machine per row (medians; absent where /proc cannot be read).
	ImportCPU      CPUUse `json:"import_cpu"`
	CopyCPU        CPUUse `json:"copy_cpu"`
	LocalImportCPU CPUUse `json:"embedded_import_cpu"`
	LocalCopyCPU   CPUUse `json:"embedded_copy_cpu"`
}

// copyMeasures are the copy section's measures, in the order they rotate through.
var copyMeasures = [...]string{"import", "copy", "import-embedded", "copy-embedded", "read"}

// copies loads a copyFrom table with BulkRows rows, then times, per repeat in rotating order, an
// Import of those rows into a fresh copyTo table and a Copy of the table into another, on the store
// and on an embedded store.
func (r *runner) copies(ctx context.Context) error {
	n := r.cfg.bulkRows()
	r.log.Info("bench: copy vs import", "rows", n, "from", copyFrom, "to", copyTo)
	from, err := salting.ParseSpec(copyFrom)
	if err != nil {
		return err
	}
	to, err := salting.ParseSpec(copyTo)
	if err != nil {
		return err
	}
	stamp := time.Now().UnixMilli()
	row := func(i int) client.Mutation {
		return client.Mutation{Key: Key(i), Cells: []client.Cell{{Family: family, Qualifier: qualifier, Value: r.value, Timestamp: stamp}}}
	}
	src, err := r.createIn(ctx, r.client, "copysrc", from)
	if err != nil {
		return err
	}
	if _, err := r.importN(ctx, src, n, row); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "brine-bench-copy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lb, err := local.Open(ctx, local.Config{Path: filepath.Join(dir, "db"), NoSync: true})
	if err != nil {
		return err
	}
	embedded := client.New(lb, r.cfg.ClientOptions...)
	defer embedded.Close()

	var imports, copiesS, fixed, localImports, localCopies, reads []float64
	var cpus [len(copyMeasures)][]CPUUse // by measure
	for rep := range r.cfg.Repeat {
		for j := range len(copyMeasures) {
			suffix := strconv.Itoa(rep)
			m := (j + rep) % len(copyMeasures)
			// Labelled for --cpuprofile (go tool pprof -tagfocus bench=copy-embedded).
			pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("bench", copyMeasures[m])))
			var (
				rps  float64
				used CPUUse
				ok   bool
				err  error
			)
			r.settle(ctx)
			switch m {
			case 0:
				rps, used, ok, err = r.timedImport(ctx, func() (*client.Table, error) { return r.createIn(ctx, r.client, "cpimport"+suffix, to) }, n, row)
				imports = append(imports, rps)
			case 1:
				name := TablePrefix + "copydst" + suffix + "_" + r.suffix
				r.viaClient = append(r.viaClient, name)
				var whole float64
				rps, whole, used, ok, err = timedCopy(ctx, r.client, r.client, src.Name(), name, to, n)
				copiesS, fixed = append(copiesS, rps), append(fixed, whole)
			case 2:
				rps, used, ok, err = r.timedImport(ctx, func() (*client.Table, error) {
					return embedded.CreateTable(ctx, "import"+suffix, client.TableConfig{Salter: to})
				}, n, row)
				localImports = append(localImports, rps)
			case 3:
				rps, _, used, ok, err = timedCopy(ctx, r.client, embedded, src.Name(), "copy"+suffix, to, n)
				localCopies = append(localCopies, rps)
			default:
				rps, used, ok, err = timedRead(ctx, src, n)
				reads = append(reads, rps)
			}
			if err != nil {
				return err
			}
			if ok {
				cpus[m] = append(cpus[m], used)
			}
		}
	}
	pprof.SetGoroutineLabels(ctx)
	res := &CopyResult{Rows: n, From: copyFrom, To: copyTo, ImportRowsPerS: Median(imports), CopyRowsPerS: Median(copiesS),
		CopyFixedMs: Median(fixed), LocalImportRowsPerS: Median(localImports), LocalCopyRowsPerS: Median(localCopies),
		ImportCPU: medianUse(cpus[0]), CopyCPU: medianUse(cpus[1]), LocalImportCPU: medianUse(cpus[2]), LocalCopyCPU: medianUse(cpus[3]),
		ReadRowsPerS: Median(reads), ReadCPU: medianUse(cpus[4])}
	res.CopyOverImport = Ratio(res.CopyRowsPerS, res.ImportRowsPerS)
	res.LocalCopyOverImport = Ratio(res.LocalCopyRowsPerS, res.LocalImportRowsPerS)
	res.ReadOverLocalImport = Ratio(res.ReadRowsPerS, res.LocalImportRowsPerS)
	r.rep.Copy = res
	return nil
}

// timedImport creates a table (untimed) and imports n rows into it: rows/s, and the CPU the
// import cost (ok false: not measured).
func (r *runner) timedImport(ctx context.Context, create func() (*client.Table, error), n int, row func(int) client.Mutation) (_ float64, _ CPUUse, ok bool, _ error) {
	t, err := create()
	if err != nil {
		return 0, CPUUse{}, false, err
	}
	r.settle(ctx) // after the creation: on HBase, opening the table's regions
	cpu0, began := sampleCPU(), time.Now()
	if _, err := r.importN(ctx, t, n, row); err != nil {
		return 0, CPUUse{}, false, err
	}
	el := time.Since(began)
	used, ok := cpu0.use(sampleCPU(), n)
	return RowsPerSecond(int64(n), el), used, ok, nil
}

// timedCopy copies table from one client to another under a new name and spec: rows/s of its
// reading and writing, the ms the rest of the call took, and the CPU its reading and writing cost
// (ok false: not measured).
func timedCopy(ctx context.Context, from, to *client.Client, table, as string, s salting.Salter, n int) (rps, fixedMs float64, _ CPUUse, ok bool, _ error) {
	var mu sync.Mutex
	var first, last time.Time
	var cpu0, cpu1 cpuSample
	began := time.Now()
	st, err := migrate.Copy(ctx, from, to, table, migrate.Options{As: as, Salter: s, Progress: func(p migrate.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first, cpu0 = time.Now(), sampleCPU() // the checkpoint read, before the first row
		}
		if p.Buckets == p.Total {
			last, cpu1 = time.Now(), sampleCPU()
		}
	}})
	whole := time.Since(began)
	if err != nil {
		return 0, 0, CPUUse{}, false, fmt.Errorf("bench: copy %s to %s: %w", table, as, err)
	}
	if st.Rows != int64(n) {
		return 0, 0, CPUUse{}, false, fmt.Errorf("bench: copy %s to %s: %d of %d rows", table, as, st.Rows, n)
	}
	rows := last.Sub(first)
	used, ok := cpu0.use(cpu1, n)
	return RowsPerSecond(int64(n), rows), msOf(whole - rows), used, ok, nil
}

// timedRead reads every row of src, its buckets at once, as migrate.Copy reads them (no write):
// rows/s, and the CPU it cost (ok false: not measured).
func timedRead(ctx context.Context, src *client.Table, n int) (float64, CPUUse, bool, error) {
	var rows atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	cpu0, began := sampleCPU(), time.Now()
	for b := range src.Salter().Buckets() {
		g.Go(func() error {
			for _, err := range src.Scan(gctx, client.Range{}, client.BatchSize(4096), client.Buckets(b)) {
				if err != nil {
					return err
				}
				rows.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, CPUUse{}, false, fmt.Errorf("bench: read %s: %w", src.Name(), err)
	}
	el := time.Since(began)
	if got := rows.Load(); got != int64(n) {
		return 0, CPUUse{}, false, fmt.Errorf("bench: read %s: %d of %d rows", src.Name(), got, n)
	}
	used, ok := cpu0.use(sampleCPU(), n)
	return RowsPerSecond(int64(n), el), used, ok, nil
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (c *CopyResult) markdown(p func(format string, args ...any)) {
	p("## Copy: %d rows from %s to %s vs Import of the same rows\n\n", c.Rows, c.From, c.To)
	p("| target | writer | rows/s | over Import | machine CPU µs/row | of it, this process | machine busy |\n|---|---|---:|---:|---:|---:|---:|\n")
	p("| this store | `Table.Import` into a fresh %s table | %.0f | 1.00x | %s |\n", c.To, c.ImportRowsPerS, c.ImportCPU.cell())
	p("| this store | `migrate.Copy` (`brine copy --salt %s`): its reading and writing | %.0f | %.2fx | %s |\n", c.To, c.CopyRowsPerS, c.CopyOverImport, c.CopyCPU.cell())
	p("| embedded | `Table.Import` into a fresh %s table | %.0f | 1.00x | %s |\n", c.To, c.LocalImportRowsPerS, c.LocalImportCPU.cell())
	p("| embedded | `migrate.Copy` from this store: its reading and writing | %.0f | %.2fx | %s |\n", c.LocalCopyRowsPerS, c.LocalCopyOverImport, c.LocalCopyCPU.cell())
	p("| none | reading the source alone, every bucket at once as the copy reads it | %.0f | %.2fx the embedded Import | %s |\n\n", c.ReadRowsPerS, c.ReadOverLocalImport, c.ReadCPU.cell())
	p("A copy runs at most as fast as it reads: where reading the source alone is slower than importing into the target, the copy's ratio stays below the reading's.\n\n")
	if c.CopyCPU.MachinePerRow > 0 && c.LocalCopyCPU.MachinePerRow > 0 {
		p("Machine CPU is every process's, this client's and the store's servers' alike (Linux /proc/stat). Where the machine is busy near 100%% in both measures, rows/s are its cores over CPU per row, and a copy's ratio can reach at most the import's CPU per row over the copy's: %.2fx on this store, %.2fx into the embedded store. A copy does what the import does and reads the source too.\n\n",
			Ratio(c.ImportCPU.MachinePerRow, c.CopyCPU.MachinePerRow), Ratio(c.LocalImportCPU.MachinePerRow, c.LocalCopyCPU.MachinePerRow))
	}
	p("A copy's fixed cost on this store (creating the target and its checkpoint, dropping the checkpoint): %.0f ms.\n\n", c.CopyFixedMs)
}

func (c *CopyResult) goals() []GoalResult {
	return []GoalResult{{
		Name: fmt.Sprintf("copy, %s to %s on this store", c.From, c.To),
		Want: ">= 0.8x a plain Import of the same rows",
		Got:  fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", c.CopyOverImport, c.CopyRowsPerS, c.ImportRowsPerS),
		Met:  c.CopyOverImport >= 0.8,
	}, {
		Name: "copy from this store to the embedded store",
		Want: ">= 0.8x a plain Import of the same rows",
		Got:  fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", c.LocalCopyOverImport, c.LocalCopyRowsPerS, c.LocalImportRowsPerS),
		Met:  c.LocalCopyOverImport >= 0.8,
	}, {
		Name: "copy's client CPU per row",
		Want: "<= 1.25x a plain Import's",
		Got: fmt.Sprintf("%.2fx (%.2f vs %.2f µs/row; its read alone %.2f µs/row)", c.CopyClientOverImport(),
			c.CopyCPU.ClientPerRow, c.ImportCPU.ClientPerRow, c.ReadCPU.ClientPerRow),
		Met: c.CopyClientOverImport() > 0 && c.CopyClientOverImport() <= 1.25,
	}}
}

// CopyClientOverImport is the copy's client CPU per row over a plain Import's (0 where /proc could
// not be read): what brine controls of a copy, where the server shares the client's cores.
func (c *CopyResult) CopyClientOverImport() float64 {
	return Ratio(c.CopyCPU.ClientPerRow, c.ImportCPU.ClientPerRow)
}
