package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/proccpu"
	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/salting"
)

// The sync section's source and target specs: a migration's, the copy section's.
const (
	syncFrom = copyFrom
	syncTo   = copyTo
	// syncQualifier is the second column of the sync tables' rows, the one a planted difference
	// deletes from the target.
	syncQualifier = "w"
	// syncShare is the share of rows that differ: 1 in syncShare.
	syncShare = 100
)

// The kinds of planted difference, in the order the differing rows take them in turn.
const (
	plantChanged = iota // the target's value of column v is another, stamped older than the source's
	plantMissing        // the row is missing from the target
	plantExtra          // the target has a row between two of the source's that the source has not
	plantColumn         // the target's row lacks column w
	plantKinds
)

// SyncResult is migrate.Sync of two tables that differ in 1% of their rows against compare.Tables
// over the same two tables (verify), which counts those differences and writes nothing (medians over
// the repeats). Rows/s are the source's rows over the time of the whole call.
type SyncResult struct {
	Rows int    `json:"rows_per_table"`
	From string `json:"from"`
	To   string `json:"to"`
	// Differences are the rows planted before each repeat, by kind.
	Differences   int `json:"differences"`
	Changed       int `json:"changed_values"`
	Missing       int `json:"missing_from_target"`
	Extra         int `json:"extra_in_target"`
	DeletedColumn int `json:"deleted_columns"`
	// Reread is the rows the verify read again, of both tables, in the ranges that differed: 1%
	// spread at random falls in nearly every chunk hashed.
	Reread int64 `json:"verify_reread_rows"`

	VerifyMs       float64 `json:"verify_ms"`
	SyncMs         float64 `json:"sync_ms"`
	VerifyRowsPerS float64 `json:"verify_rows_per_s"`
	SyncRowsPerS   float64 `json:"sync_rows_per_s"`
	SyncOverVerify float64 `json:"sync_over_verify"` // of their times
	VerifyCPU      CPUUse  `json:"verify_cpu"`
	SyncCPU        CPUUse  `json:"sync_cpu"`
	// VerifyServerCPU and SyncServerCPU are the CPU the store's server processes spent per row, in
	// µs (medians; only with Config.ServerPIDs).
	VerifyServerCPU float64 `json:"verify_server_cpu_us_per_row,omitempty"`
	SyncServerCPU   float64 `json:"sync_server_cpu_us_per_row,omitempty"`
}

// plan is the differences the sync section plants: the same rows and kinds in every repeat.
type plan struct {
	rows  []int // indices of the source's rows, sorted
	kinds []int // kinds[i] is rows[i]'s
	n     int
}

// newPlan picks 1 row in syncShare of n (at least one of each kind where n allows), at random but
// fixed by the seed, so that they spread over every chunk a comparison hashes, as a stale target's
// do.
func newPlan(n int, seed uint64) plan {
	d := min(n, max(plantKinds, n/syncShare))
	rows := rand.New(rand.NewPCG(seed, 41)).Perm(n)[:d]
	slices.Sort(rows)
	p := plan{rows: rows, kinds: make([]int, d), n: n}
	for i := range rows {
		p.kinds[i] = i % plantKinds
	}
	return p
}

// count is how many rows of the plan are of kind k.
func (p plan) count(k int) int {
	c := 0
	for _, x := range p.kinds {
		if x == k {
			c++
		}
	}
	return c
}

// extraKey is a key between row i's and row i+1's: Key's timestamps are stepMillis apart.
func extraKey(i int) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(epoch+int64(i)*stepMillis+stepMillis/2))
}

// want is the differences a comparison of the planted tables finds, by key.
func (p plan) want() map[string]compare.Kind {
	m := make(map[string]compare.Kind, len(p.rows))
	for i, row := range p.rows {
		switch p.kinds[i] {
		case plantMissing:
			m[string(Key(row))] = compare.OnlyInA
		case plantExtra:
			m[string(extraKey(row))] = compare.OnlyInB
		default:
			m[string(Key(row))] = compare.Changed
		}
	}
	return m
}

// mutations are the writes that plant the differences at stamp, into the source and the target.
// Every cell they write is stamped after all the tables hold (the load's stamp, and earlier
// plantings'), and an older target cell only under a newer source one: on HBase a delete hides
// later writes stamped at or before the newest version it removed, so a row or column deleted
// (by this planting or by the last sync) is written again above it.
func (p plan) mutations(stamp int64, value []byte) (src, dst []client.Mutation) {
	other := slices.Clone(value)
	other[0] ^= 0xff
	cell := func(q string, v []byte, ts int64) client.Cell {
		return client.Cell{Family: family, Qualifier: q, Value: v, Timestamp: ts}
	}
	short := value[:min(len(value), 8)]
	for i, row := range p.rows {
		k := Key(row)
		switch p.kinds[i] {
		case plantChanged:
			src = append(src, client.Mutation{Key: k, Cells: []client.Cell{cell(qualifier, value, stamp)}})
			dst = append(dst, client.Mutation{Key: k, Cells: []client.Cell{cell(qualifier, other, stamp-1)}})
		case plantMissing:
			src = append(src, client.Mutation{Key: k, Cells: []client.Cell{cell(qualifier, value, stamp), cell(syncQualifier, short, stamp)}})
			dst = append(dst, client.Mutation{Key: k, Delete: true})
		case plantExtra:
			dst = append(dst, client.Mutation{Key: extraKey(row), Cells: []client.Cell{cell(qualifier, value, stamp), cell(syncQualifier, short, stamp)}})
		case plantColumn:
			src = append(src, client.Mutation{Key: k, Cells: []client.Cell{cell(syncQualifier, short, stamp)}})
			dst = append(dst, client.Mutation{Key: k, Delete: true, Cells: []client.Cell{{Family: family, Qualifier: syncQualifier}}})
		}
	}
	return src, dst
}

// syncs loads a syncFrom and a syncTo table with the same BulkRows rows of two columns, then times,
// per repeat, a verify of them with 1% of the target's rows planted different (compare.Tables,
// counting the differences) and a sync repairing them (migrate.Sync), in turns: the differences
// are planted again, untimed, before whichever runs while they are not there.
func (r *runner) syncs(ctx context.Context) error {
	n := r.cfg.bulkRows()
	p := newPlan(n, r.cfg.Seed)
	r.log.Info("bench: sync vs verify", "rows", n, "differences", len(p.rows))
	stamp := time.Now().UnixMilli()
	short := r.value[:min(len(r.value), 8)]
	var tables [2]*client.Table
	for i, side := range [2]struct{ kind, spec string }{{"syncsrc", syncFrom}, {"syncdst", syncTo}} {
		s, err := salting.ParseSpec(side.spec)
		if err != nil {
			return err
		}
		if tables[i], err = r.createIn(ctx, r.client, side.kind, s); err != nil {
			return err
		}
		if _, err := r.importN(ctx, tables[i], n, func(i int) client.Mutation {
			return client.Mutation{Key: Key(i), Cells: []client.Cell{
				{Family: family, Qualifier: qualifier, Value: r.value, Timestamp: stamp},
				{Family: family, Qualifier: syncQualifier, Value: short, Timestamp: stamp},
			}}
		}); err != nil {
			return err
		}
	}
	src, dst := tables[0], tables[1]
	planted := false
	plantings := 0
	// Each planting stamps 2 ms above the last, so that its changed values, 1 below its stamp, are
	// still above what the last sync wrote.
	plant := func() error {
		plantings++
		s, d := p.mutations(stamp+int64(2*plantings), r.value)
		for _, w := range []struct {
			t    *client.Table
			muts []client.Mutation
		}{{src, s}, {dst, d}} {
			if err := applyAll(ctx, w.t, w.muts); err != nil {
				return fmt.Errorf("bench: plant the differences: %w", err)
			}
		}
		planted = true
		return nil
	}
	want := p.want()
	var verifies, syncsMs []float64
	var reread int64
	var cpus [2][]CPUUse
	var serverCPU [2][]float64
	for rep := range r.cfg.Repeat {
		for j := range 2 {
			m := (j + rep) % 2 // 0: verify, 1: sync
			if !planted {
				if err := plant(); err != nil {
					return err
				}
			}
			r.settle(ctx)
			w, err := r.window()
			if err != nil {
				return err
			}
			if m == 0 {
				got, st, err := differences(ctx, src, dst, n, len(p.rows))
				if err != nil {
					return err
				}
				reread = st.RereadA + st.RereadB
				verifies = append(verifies, msSince(w.began))
				if err := w.close(r, n, &cpus[m], &serverCPU[m]); err != nil {
					return err
				}
				r.log.Info("bench: verify", "repeat", rep+1, "ms", verifies[len(verifies)-1])
				if err := checkDifferences(got, want); err != nil {
					return err
				}
				continue
			}
			st, err := migrate.Sync(ctx, r.client, r.client, src.Name(), migrate.SyncOptions{As: dst.Name()})
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			syncsMs = append(syncsMs, msSince(w.began))
			if err := w.close(r, n, &cpus[m], &serverCPU[m]); err != nil {
				return err
			}
			r.log.Info("bench: sync", "repeat", rep+1, "ms", syncsMs[len(syncsMs)-1])
			if st.Changes != int64(len(p.rows)) {
				return fmt.Errorf("bench: sync changed %d rows, %d differ", st.Changes, len(p.rows))
			}
			if _, _, err := differences(ctx, src, dst, n, 0); err != nil {
				return fmt.Errorf("%w, after the sync", err)
			}
			planted = false
		}
	}
	res := &SyncResult{Rows: n, From: syncFrom, To: syncTo, Differences: len(p.rows),
		Changed: p.count(plantChanged), Missing: p.count(plantMissing), Extra: p.count(plantExtra), DeletedColumn: p.count(plantColumn), Reread: reread,
		VerifyMs: Median(verifies), SyncMs: Median(syncsMs), VerifyCPU: medianUse(cpus[0]), SyncCPU: medianUse(cpus[1])}
	res.VerifyRowsPerS = Ratio(float64(n), res.VerifyMs/1000)
	res.SyncRowsPerS = Ratio(float64(n), res.SyncMs/1000)
	res.SyncOverVerify = Ratio(res.SyncMs, res.VerifyMs)
	if len(r.cfg.ServerPIDs) > 0 {
		res.VerifyServerCPU, res.SyncServerCPU = Median(serverCPU[0]), Median(serverCPU[1])
	}
	r.rep.Sync = res
	return nil
}

// applyAll applies muts to t and fails unless every row was written.
func applyAll(ctx context.Context, t *client.Table, muts []client.Mutation) error {
	rowErrs, err := t.Apply(ctx, muts)
	if err != nil {
		return fmt.Errorf("%s: %w", t.Name(), err)
	}
	for i, e := range rowErrs {
		if e != nil {
			return fmt.Errorf("%s: row %q: %w", t.Name(), muts[i].Key, e)
		}
	}
	return nil
}

// differences compares src (n rows) with dst and returns every difference found, which must be
// wantN of them, and the comparison's counts.
func differences(ctx context.Context, src, dst *client.Table, n, wantN int) ([]compare.Difference, compare.Stats, error) {
	var st compare.Stats
	var got []compare.Difference
	for d, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{Stats: &st}) {
		if err != nil {
			return nil, st, fmt.Errorf("bench: verify: %w", err)
		}
		got = append(got, d)
	}
	switch {
	case st.RowsA != int64(n):
		return nil, st, fmt.Errorf("bench: verify read %d rows of %s, want %d", st.RowsA, src.Name(), n)
	case len(got) != wantN:
		return nil, st, fmt.Errorf("bench: verify found %d differences, want %d", len(got), wantN)
	}
	return got, st, nil
}

// checkDifferences fails unless got are exactly the planted differences.
func checkDifferences(got []compare.Difference, want map[string]compare.Kind) error {
	for _, d := range got {
		if k, ok := want[string(d.Key)]; !ok || k != d.Kind {
			return fmt.Errorf("bench: verify found %v at %x, which was not planted so", d.Kind, d.Key)
		}
	}
	return nil
}

// window is one timed measure's start: the clock, this machine's CPU, and the server processes'.
type window struct {
	began   time.Time
	cpu     cpuSample
	server0 time.Duration
}

func (r *runner) window() (window, error) {
	server, err := proccpu.Used(r.cfg.ServerPIDs...)
	if err != nil {
		return window{}, fmt.Errorf("bench: %w", err)
	}
	return window{began: time.Now(), cpu: sampleCPU(), server0: server}, nil
}

// close ends the window over rows, appending what it cost to cpus (when measured) and to server
// (when there are server processes).
func (w window) close(r *runner, rows int, cpus *[]CPUUse, server *[]float64) error {
	if used, ok := w.cpu.use(sampleCPU(), rows); ok {
		*cpus = append(*cpus, used)
	}
	if len(r.cfg.ServerPIDs) == 0 {
		return nil
	}
	s, err := proccpu.Used(r.cfg.ServerPIDs...)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	*server = append(*server, proccpu.PerRow(s-w.server0, rows))
	return nil
}

func (s *SyncResult) markdown(p func(format string, args ...any)) {
	p("## Sync: two tables of %d rows (%s and %s) that differ in %d rows\n\n", s.Rows, s.From, s.To, s.Differences)
	p("| what | ms | rows/s | over verify | machine CPU µs/row | of it, this process | machine busy |\n|---|---:|---:|---:|---:|---:|---:|\n")
	p("| `compare.Tables` (`brine verify`), counting the differences | %.1f | %.0f | 1.00x | %s |\n", s.VerifyMs, s.VerifyRowsPerS, s.VerifyCPU.cell())
	p("| `migrate.Sync` (`brine sync`), repairing them | %.1f | %.0f | %.2fx | %s |\n\n", s.SyncMs, s.SyncRowsPerS, s.SyncOverVerify, s.SyncCPU.cell())
	p("The differences, planted again before each repeat (untimed) at the same rows: %d changed values, %d rows missing from the target, %d extra rows in it, %d deleted columns. Rows/s are the source's rows over the whole call; both hash both tables and read the differing ranges again (%d rows of the two), and the sync writes and reads its writes back (and, past one batch of 256 changes, keeps a checkpoint).\n\n",
		s.Changed, s.Missing, s.Extra, s.DeletedColumn, s.Reread)
	if s.VerifyServerCPU > 0 {
		p("The server processes spent %.1f µs of CPU per row on the verify and %.1f µs on the sync (%.2fx).\n\n",
			s.VerifyServerCPU, s.SyncServerCPU, Ratio(s.SyncServerCPU, s.VerifyServerCPU))
	}
}

func (s *SyncResult) goal() GoalResult {
	return GoalResult{
		Name: fmt.Sprintf("sync of a 1%% difference (%d of %d rows) vs verify", s.Differences, s.Rows),
		Want: "<= 1.5x verify's time",
		Got:  fmt.Sprintf("%.2fx (%.1f ms vs %.1f ms)", s.SyncOverVerify, s.SyncMs, s.VerifyMs),
		Met:  s.SyncOverVerify > 0 && s.SyncOverVerify <= 1.5,
	}
}
