package bench

import (
	"context"
	"fmt"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// exclusiveRefresh is the exclusive measures' client's WithRouteRefresh: only that client's handles
// use their tables, so the fence need only outlast it; short, so that fencing costs the run little.
const exclusiveRefresh = 20 * time.Millisecond

// ExclusiveResult is the exclusive bulk mode against a plain Import of the same new orders
// into a fresh table without index (medians over the repeats): an exclusive Import into a fresh table
// with 2 indexes, and an index built under the fence (AddIndex of by_seller to a loaded table). The
// fence's own wait is left out of both: it is a fixed few refresh intervals, not a cost per row. So
// is, in the build's goal, the creation of the index's table, reported beside it.
type ExclusiveResult struct {
	Rows            int     `json:"rows_per_repeat"`
	PlainRowsPerS   float64 `json:"plain_rows_per_s"`
	ImportRowsPerS  float64 `json:"exclusive_import_rows_per_s"`
	ImportOverPlain float64 `json:"exclusive_import_over_plain"`
	BuildRowsPerS   float64 `json:"index_build_rows_per_s"`
	BuildOverPlain  float64 `json:"index_build_over_plain"`
	// WholeBuild: the build with its index table's creation, a fixed cost (HBase: a procedure on
	// the master, about half a second) that the figures above leave out as the plain Import's
	// table is created before its clock starts.
	WholeBuildRowsPerS  float64 `json:"index_build_with_create_rows_per_s"`
	WholeBuildOverPlain float64 `json:"index_build_with_create_over_plain"`
	// What the plain and the exclusive Import cost the machine per row (medians).
	PlainCPU           CPUUse  `json:"plain_import_cpu"`
	ImportCPU          CPUUse  `json:"exclusive_import_cpu"`
	ProtocolOverPlain  float64 `json:"protocol_import_over_plain,omitempty"` // the index protocol's Import, for scale
	ExclusiveOverProto float64 `json:"exclusive_over_protocol_import,omitempty"`
}

// exclusive times, per repeat, in rotating order: a plain Import of BulkRows new orders into a fresh
// table, an exclusive Import of them into a fresh table with the 2 order indexes, and AddIndex of
// by_seller, under the fence, to a fresh table loaded with them and by_buyer.
func (r *runner) exclusive(ctx context.Context, all []client.IndexConfig) (*ExclusiveResult, error) {
	n := r.cfg.bulkRows()
	c := client.New(r.count, append([]client.Option{client.WithLogger(r.log), client.WithRouteRefresh(exclusiveRefresh)}, r.cfg.ClientOptions...)...)
	salter, err := salting.ParseSpec("hash:8")
	if err != nil {
		return nil, err
	}
	r.log.Info("bench: exclusive import and index build vs plain import", "rows", n)
	create := func(kind string, rep int, indexes []client.IndexConfig) (client.TableAPI, *client.Table, error) {
		name := TablePrefix + kind + strconv.Itoa(rep) + "_" + r.suffix
		r.viaClient = append(r.viaClient, name)
		t, err := c.CreateTable(ctx, name, client.TableConfig{Salter: salter, Indexes: indexes})
		if err != nil || len(indexes) == 0 {
			return t, nil, err
		}
		return t, t, nil
	}
	orders := func(i int) client.Mutation { return client.Mutation{Key: orderKey(0, i), Cells: orderCells(i)} }
	rows := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			if !yield(client.ImportRow{Mutation: orders(i)}, nil) {
				return
			}
		}
	}
	var plains, imports, builds, wholeBuilds []float64
	var plainCPU, importCPU []CPUUse
	for rep := range r.cfg.Repeat {
		for j := range 3 {
			// Labelled for --cpuprofile (go tool pprof -tagfocus bench=exclusive-import): the
			// goroutines each part starts inherit it.
			pprof.SetGoroutineLabels(pprof.WithLabels(ctx, pprof.Labels("bench", [...]string{"plain-import", "exclusive-import", "exclusive-build"}[(j+rep)%3])))
			made := len(r.viaClient)
			switch (j + rep) % 3 {
			case 0:
				t, _, err := create("explain", rep, nil)
				if err != nil {
					return nil, fmt.Errorf("bench: %w", err)
				}
				r.settle(ctx)
				cpu0, began := sampleCPU(), time.Now()
				if _, err := r.importN(ctx, t, n, orders); err != nil {
					return nil, err
				}
				plains = append(plains, RowsPerSecond(int64(n), time.Since(began)))
				if used, ok := cpu0.use(sampleCPU(), n); ok {
					plainCPU = append(plainCPU, used)
				}
			case 1:
				_, it, err := create("eximport", rep, all)
				if err != nil {
					return nil, fmt.Errorf("bench: %w", err)
				}
				var cpu0, cpu1 cpuSample
				el, err := underFence(ctx, it, func() { r.settle(ctx) }, func(x *client.ExclusiveTable) error {
					cpu0 = sampleCPU()
					stats, err := x.Import(ctx, rows, client.ImportOptions{Workers: r.cfg.ImportWorkers})
					if err == nil && stats.Written != int64(n) {
						err = fmt.Errorf("wrote %d of %d rows", stats.Written, n)
					}
					return err
				})
				cpu1 = sampleCPU() // after the Release, which underFence times too
				if err != nil {
					return nil, fmt.Errorf("bench: exclusive import: %w", err)
				}
				imports = append(imports, RowsPerSecond(int64(n), el))
				if used, ok := cpu0.use(cpu1, n); ok {
					importCPU = append(importCPU, used)
				}
			default:
				_, it, err := create("exbuild", rep, all[1:])
				if err != nil {
					return nil, fmt.Errorf("bench: %w", err)
				}
				if _, err := underFence(ctx, it, func() {}, func(x *client.ExclusiveTable) error {
					_, err := x.Import(ctx, rows, client.ImportOptions{Workers: r.cfg.ImportWorkers})
					return err
				}); err != nil {
					return nil, fmt.Errorf("bench: load for the index build: %w", err)
				}
				var readFrom, readTo time.Time // the build's reading and writing, its table created
				el, err := underFence(ctx, it, func() { r.settle(ctx) }, func(x *client.ExclusiveTable) error {
					p, err := x.AddIndex(ctx, all[0], func(p client.RebuildProgress) {
						if p.Buckets == 0 {
							readFrom = time.Now()
						}
					})
					readTo = time.Now()
					if err == nil && p.Rows != int64(n) {
						err = fmt.Errorf("built from %d of %d rows", p.Rows, n)
					}
					return err
				})
				if err != nil {
					return nil, fmt.Errorf("bench: index build: %w", err)
				}
				builds = append(builds, RowsPerSecond(int64(n), readTo.Sub(readFrom)))
				wholeBuilds = append(wholeBuilds, RowsPerSecond(int64(n), el))
			}
			r.dropSince(ctx, c, made)
		}
	}
	pprof.SetGoroutineLabels(ctx)
	res := &ExclusiveResult{Rows: n, PlainRowsPerS: Median(plains), ImportRowsPerS: Median(imports), BuildRowsPerS: Median(builds),
		WholeBuildRowsPerS: Median(wholeBuilds), PlainCPU: medianUse(plainCPU), ImportCPU: medianUse(importCPU)}
	res.ImportOverPlain = Ratio(res.ImportRowsPerS, res.PlainRowsPerS)
	res.BuildOverPlain = Ratio(res.BuildRowsPerS, res.PlainRowsPerS)
	res.WholeBuildOverPlain = Ratio(res.WholeBuildRowsPerS, res.PlainRowsPerS)
	return res, nil
}

// underFence times fn under an exclusive fence of it, with the Release (its repair, when one is
// needed) and without the fence's fixed wait; ready runs, untimed, once the fence is taken.
func underFence(ctx context.Context, it *client.Table, ready func(), fn func(*client.ExclusiveTable) error) (time.Duration, error) {
	x, err := it.Exclusive(ctx, client.ExclusiveOptions{})
	if err != nil {
		return 0, err
	}
	ready()
	began := time.Now()
	err = fn(x)
	if rerr := x.Release(ctx); err == nil {
		err = rerr
	}
	return time.Since(began), err
}

func (e *ExclusiveResult) markdown(p func(format string, args ...any)) {
	p("Exclusive bulk mode (the writers fenced; entries and rows as plain batches), %d new orders per repeat:\n\n", e.Rows)
	p("| writer | rows/s | over a plain Import | machine CPU µs/row | of it, this process | machine busy |\n|---|---:|---:|---:|---:|---:|\n")
	p("| `Import` into a fresh table without index | %.0f | 1.00x | %s |\n", e.PlainRowsPerS, e.PlainCPU.cell())
	p("| `ExclusiveTable.Import` into a fresh table with 2 indexes | %.0f | %.2fx | %s |\n", e.ImportRowsPerS, e.ImportOverPlain, e.ImportCPU.cell())
	p("| `ExclusiveTable.AddIndex` of by_seller to a loaded table: reading and writing, its table created | %.0f | %.2fx | – | – | – |\n", e.BuildRowsPerS, e.BuildOverPlain)
	p("| the same, with its table's creation | %.0f | %.2fx | – | – | – |\n\n", e.WholeBuildRowsPerS, e.WholeBuildOverPlain)
	if e.ImportCPU.MachinePerRow > 0 {
		p("An exclusive Import writes each row, its version column and an entry in each index: three rows where the plain Import writes one. Where the machine is busy near 100%% in both, its ratio can reach at most the plain Import's CPU per row over its own: %.2fx.\n\n",
			Ratio(e.PlainCPU.MachinePerRow, e.ImportCPU.MachinePerRow))
	}
	if e.ExclusiveOverProto > 0 {
		p("The exclusive Import is %.1fx the indexed `Import` through the per-row protocol above.\n\n", e.ExclusiveOverProto)
	}
}

func (e *ExclusiveResult) goals() []GoalResult {
	return []GoalResult{{
		Name: "exclusive indexed Import, 2 indexes",
		Want: ">= 0.3x a plain Import",
		Got:  fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s)", e.ImportOverPlain, e.ImportRowsPerS, e.PlainRowsPerS),
		Met:  e.ImportOverPlain >= 0.3,
	}, {
		Name: "index build under the fence",
		Want: ">= 0.5x the rows/s of a plain Import",
		Got: fmt.Sprintf("%.2fx (%.0f vs %.0f rows/s; %.2fx with its table's creation)", e.BuildOverPlain, e.BuildRowsPerS,
			e.PlainRowsPerS, e.WholeBuildOverPlain),
		Met: e.BuildOverPlain >= 0.5,
	}}
}
