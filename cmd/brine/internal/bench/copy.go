package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"

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
}

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
	lb, err := local.Open(filepath.Join(dir, "db"), local.WithNoSync())
	if err != nil {
		return err
	}
	embedded := client.New(lb, r.cfg.ClientOptions...)
	defer embedded.Close()

	var imports, copiesS, fixed, localImports, localCopies []float64
	for rep := range r.cfg.Repeat {
		for j := range 4 {
			suffix := strconv.Itoa(rep)
			// Labelled for --cpuprofile (go tool pprof -tagfocus bench=copy-embedded).
			pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("bench", [...]string{"import", "copy", "import-embedded", "copy-embedded"}[(j+rep)%4])))
			switch (j + rep) % 4 {
			case 0:
				rps, err := r.timedImport(ctx, func() (*client.Table, error) { return r.createIn(ctx, r.client, "cpimport"+suffix, to) }, n, row)
				if err != nil {
					return err
				}
				imports = append(imports, rps)
			case 1:
				name := TablePrefix + "copydst" + suffix + "_" + r.suffix
				r.viaClient = append(r.viaClient, name)
				rps, whole, err := timedCopy(ctx, r.client, r.client, src.Name(), name, to, n)
				if err != nil {
					return err
				}
				copiesS, fixed = append(copiesS, rps), append(fixed, whole)
			case 2:
				rps, err := r.timedImport(ctx, func() (*client.Table, error) {
					return embedded.CreateTable(ctx, "import"+suffix, client.TableConfig{Salter: to})
				}, n, row)
				if err != nil {
					return err
				}
				localImports = append(localImports, rps)
			default:
				rps, _, err := timedCopy(ctx, r.client, embedded, src.Name(), "copy"+suffix, to, n)
				if err != nil {
					return err
				}
				localCopies = append(localCopies, rps)
			}
		}
	}
	pprof.SetGoroutineLabels(ctx)
	res := &CopyResult{Rows: n, From: copyFrom, To: copyTo, ImportRowsPerS: Median(imports), CopyRowsPerS: Median(copiesS),
		CopyFixedMs: Median(fixed), LocalImportRowsPerS: Median(localImports), LocalCopyRowsPerS: Median(localCopies)}
	res.CopyOverImport = Ratio(res.CopyRowsPerS, res.ImportRowsPerS)
	res.LocalCopyOverImport = Ratio(res.LocalCopyRowsPerS, res.LocalImportRowsPerS)
	r.rep.Copy = res
	return nil
}

// timedImport creates a table (untimed) and imports n rows into it: rows/s.
func (r *runner) timedImport(ctx context.Context, create func() (*client.Table, error), n int, row func(int) client.Mutation) (float64, error) {
	t, err := create()
	if err != nil {
		return 0, err
	}
	began := time.Now()
	if _, err := r.importN(ctx, t, n, row); err != nil {
		return 0, err
	}
	return RowsPerSecond(int64(n), time.Since(began)), nil
}

// timedCopy copies table from one client to another under a new name and spec: rows/s of its
// reading and writing, and the ms the rest of the call took.
func timedCopy(ctx context.Context, from, to *client.Client, table, as string, s salting.Salter, n int) (float64, float64, error) {
	var mu sync.Mutex
	var first, last time.Time
	began := time.Now()
	st, err := migrate.Copy(ctx, from, to, table, migrate.Options{As: as, Salter: s, Progress: func(p migrate.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if first.IsZero() {
			first = time.Now() // the checkpoint read, before the first row
		}
		if p.Buckets == p.Total {
			last = time.Now()
		}
	}})
	whole := time.Since(began)
	if err != nil {
		return 0, 0, fmt.Errorf("bench: copy %s to %s: %w", table, as, err)
	}
	if st.Rows != int64(n) {
		return 0, 0, fmt.Errorf("bench: copy %s to %s: %d of %d rows", table, as, st.Rows, n)
	}
	rows := last.Sub(first)
	return RowsPerSecond(int64(n), rows), msOf(whole - rows), nil
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (c *CopyResult) markdown(p func(format string, args ...any)) {
	p("## Copy: %d rows from %s to %s vs Import of the same rows\n\n", c.Rows, c.From, c.To)
	p("| target | writer | rows/s | over Import |\n|---|---|---:|---:|\n")
	p("| this store | `Table.Import` into a fresh %s table | %.0f | 1.00x |\n", c.To, c.ImportRowsPerS)
	p("| this store | `migrate.Copy` (`brine copy --salt %s`): its reading and writing | %.0f | %.2fx |\n", c.To, c.CopyRowsPerS, c.CopyOverImport)
	p("| embedded | `Table.Import` into a fresh %s table | %.0f | 1.00x |\n", c.To, c.LocalImportRowsPerS)
	p("| embedded | `migrate.Copy` from this store: its reading and writing | %.0f | %.2fx |\n\n", c.LocalCopyRowsPerS, c.LocalCopyOverImport)
	p("A copy's fixed cost on this store (creating the target and its checkpoint, dropping the checkpoint): %.0f ms.\n\n", c.CopyFixedMs)
}

func (c *CopyResult) goals() []GoalResult {
	return []GoalResult{{
		Issue: "28.6",
		Name:  fmt.Sprintf("copy, %s to %s on this store", c.From, c.To),
		Want:  ">= 0.8x a plain Import of the same rows",
		Got:   fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", c.CopyOverImport, c.CopyRowsPerS, c.ImportRowsPerS),
		Met:   c.CopyOverImport >= 0.8,
	}, {
		Issue: "28.6",
		Name:  "copy from this store to the embedded store",
		Want:  ">= 0.8x a plain Import of the same rows",
		Got:   fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", c.LocalCopyOverImport, c.LocalCopyRowsPerS, c.LocalImportRowsPerS),
		Met:   c.LocalCopyOverImport >= 0.8,
	}}
}
