package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/proccpu"
	"github.com/brine-kv/brine/salting"
)

// The rebucket section's specs: the copy goes from rebucketFrom to rebucketTo.
const (
	rebucketFrom = "hash:8"
	rebucketTo   = "hash:16"
	// rebucketRefresh is the section's client's WithRouteRefresh, and rebucketFence its rebucket's
	// Fence: only that client's handles use the tables, so the fence need only exceed its refresh
	// plus a write; short, so the steps around the copy do not make the section slow.
	rebucketRefresh = 20 * time.Millisecond
	rebucketFence   = 100 * time.Millisecond
)

// RebucketResult is a rebucket's copy of Rows rows against Import of the same rows into a fresh table
// of the target spec (medians over the repeats).
type RebucketResult struct {
	Rows           int     `json:"rows_per_repeat"`
	From           string  `json:"from"`
	To             string  `json:"to"`
	CopyRowsPerS   float64 `json:"copy_rows_per_s"`
	ImportRowsPerS float64 `json:"import_rows_per_s"`
	CopyOverImport float64 `json:"copy_over_import"`
	// CallsPerRow is the copy's store calls per row (reads, scans, conditional writes: a batch is one).
	CallsPerRow float64 `json:"copy_store_calls_per_row"`
	// CopyServerCPU and ImportServerCPU are the CPU the store's server processes spent per row, in
	// µs (medians; only with Config.ServerPIDs).
	CopyServerCPU   float64 `json:"copy_server_cpu_us_per_row,omitempty"`
	ImportServerCPU float64 `json:"import_server_cpu_us_per_row,omitempty"`
}

// rebucket times, per repeat, a rebucket from rebucketFrom to rebucketTo of a fresh table holding
// BulkRows rows (the copy only: from the step that starts it to the step that records it done, read
// from the rebucket's progress reports) and Import of the same rows into a fresh rebucketTo table,
// alternating which goes first.
func (r *runner) rebucket(ctx context.Context) error {
	from, err := salting.ParseSpec(rebucketFrom)
	if err != nil {
		return err
	}
	to, err := salting.ParseSpec(rebucketTo)
	if err != nil {
		return err
	}
	c := client.New(r.count, append([]client.Option{client.WithLogger(r.log), client.WithRouteRefresh(rebucketRefresh)}, r.cfg.ClientOptions...)...)
	n := r.cfg.bulkRows()
	r.log.Info("bench: rebucket copy vs import", "rows", n, "from", rebucketFrom, "to", rebucketTo)
	var copies, imports, copyCPU, importCPU []float64
	var used counts
	for rep := range r.cfg.Repeat {
		for j := range 2 {
			if (j+rep)%2 == 0 {
				el, u, err := r.rebucketCopy(ctx, c, from, to, rep, n)
				if err != nil {
					return err
				}
				copies = append(copies, RowsPerSecond(int64(n), el))
				copyCPU = append(copyCPU, proccpu.PerRow(u.serverCPU, n))
				used = used.add(u.counts)
				continue
			}
			t, err := r.createIn(ctx, c, "copyimport"+strconv.Itoa(rep), to)
			if err != nil {
				return err
			}
			cpu0, err := proccpu.Used(r.cfg.ServerPIDs...)
			if err != nil {
				return err
			}
			began := time.Now()
			if _, err := r.importRows(ctx, t, n); err != nil {
				return err
			}
			imports = append(imports, RowsPerSecond(int64(n), time.Since(began)))
			cpu1, err := proccpu.Used(r.cfg.ServerPIDs...)
			if err != nil {
				return err
			}
			importCPU = append(importCPU, proccpu.PerRow(cpu1-cpu0, n))
		}
	}
	res := &RebucketResult{Rows: n, From: rebucketFrom, To: rebucketTo, CopyRowsPerS: Median(copies), ImportRowsPerS: Median(imports)}
	res.CopyOverImport = Ratio(res.CopyRowsPerS, res.ImportRowsPerS)
	res.CallsPerRow = Ratio(float64(used.calls()), float64(n*r.cfg.Repeat))
	if len(r.cfg.ServerPIDs) > 0 {
		res.CopyServerCPU, res.ImportServerCPU = Median(copyCPU), Median(importCPU)
	}
	r.rep.Rebucket = res
	return nil
}

// copyUse is what a rebucket's copy used: store calls, and the server processes' CPU.
type copyUse struct {
	counts
	serverCPU time.Duration
}

// rebucketCopy loads n rows into a fresh table of spec from (untimed), rebuckets it to spec to and
// returns how long the copy took and what it used meanwhile.
func (r *runner) rebucketCopy(ctx context.Context, c *client.Client, from, to salting.Salter, rep, n int) (time.Duration, copyUse, error) {
	t, err := r.createIn(ctx, c, "rebucket"+strconv.Itoa(rep), from)
	if err != nil {
		return 0, copyUse{}, err
	}
	if _, err := r.importRows(ctx, t, n); err != nil {
		return 0, copyUse{}, err
	}
	// Progress runs on the rebucket's goroutine, after each step is recorded: the copy starts right
	// after "migrate" and ends before "copied".
	var began, ended time.Time
	var before, after counts
	var cpu0, cpu1 time.Duration
	var cpuErr error
	var copied int64
	progress := func(p client.RebucketProgress) {
		switch p.State {
		case "migrate":
			if began.IsZero() {
				began, before = time.Now(), r.count.snapshot()
				cpu0, cpuErr = proccpu.Used(r.cfg.ServerPIDs...)
			}
		case "copied":
			ended, after, copied = time.Now(), r.count.snapshot(), p.RowsCopied
			if cpuErr == nil {
				cpu1, cpuErr = proccpu.Used(r.cfg.ServerPIDs...)
			}
		}
	}
	err = t.Rebucket(ctx, to, client.RebucketOptions{Fence: rebucketFence, Progress: progress})
	switch {
	case err != nil:
		return 0, copyUse{}, fmt.Errorf("bench: rebucket %s: %w", t.Name(), err)
	case cpuErr != nil:
		return 0, copyUse{}, cpuErr
	case began.IsZero() || ended.IsZero():
		return 0, copyUse{}, fmt.Errorf("bench: rebucket %s reported no copy (migrate %v, copied %v)", t.Name(), began, ended)
	case copied != int64(n):
		return 0, copyUse{}, fmt.Errorf("bench: rebucket %s copied %d of %d rows", t.Name(), copied, n)
	}
	return ended.Sub(began), copyUse{after.sub(before), cpu1 - cpu0}, nil
}

// createIn creates a table through c and remembers it for cleanup through the run's client, which
// also deletes what a rebucket made of it.
func (r *runner) createIn(ctx context.Context, c *client.Client, kind string, s salting.Salter) (*client.Table, error) {
	name := TablePrefix + kind + "_" + r.suffix
	t, err := c.CreateTable(ctx, name, client.TableConfig{Salter: s})
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	r.viaClient = append(r.viaClient, name)
	return t, nil
}

func (b *RebucketResult) markdown(p func(format string, args ...any)) {
	p("## Rebucket copy: %d rows from %s to %s vs Import of the same rows\n\n", b.Rows, b.From, b.To)
	p("| writer | rows/s | over Import |\n|---|---:|---:|\n")
	p("| `Table.Import` into a fresh %s table | %.0f | 1.00x |\n", b.To, b.ImportRowsPerS)
	p("| `Table.Rebucket`'s copy (from its migrate step to its copied step) | %.0f | %.2fx |\n\n", b.CopyRowsPerS, b.CopyOverImport)
	p("The copy made %.2f store calls per row (a batch of conditional writes counts as one).\n\n", b.CallsPerRow)
	if b.ImportServerCPU > 0 {
		p("The server processes spent %.1f µs of CPU per row on the `Import` and %.1f µs on the copy (%.1fx).\n\n",
			b.ImportServerCPU, b.CopyServerCPU, Ratio(b.CopyServerCPU, b.ImportServerCPU))
	}
}
