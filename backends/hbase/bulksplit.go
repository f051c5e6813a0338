package hbase

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
)

// Loading, and regions that split meanwhile. A unit is loaded with one BulkLoadHFile call routed
// to the region of its first row. A region that split since the import read hbase:meta answers
// loaded=false (HRegion.bulkLoadHFiles: "a recoverable bulk load failure likely due to a split",
// its files no longer fit); one that moved or is closing answers so too, or with a retryable
// error. As BulkLoadHFilesTool does, the import then reads the table's regions again: if the
// unit's rows now span several, its files are cut at the new boundaries into units of their own
// (recorded in the manifest before any is loaded) and each part is loaded; if one still holds
// them all, the same unit is sent again after a pause. maxBulkAttempts bounds the sends of a
// unit and its parts.
const maxBulkAttempts = 10

// loader loads a manifest's units, Workers at a time, recording each state in the manifest.
type loader struct {
	j    *bulkJob
	m    *manifest
	mu   sync.Mutex // m, the stats and sent
	sent int        // units loaded by this call
}

// load is step 3 of BulkImport: every unit of m not loaded yet is loaded.
func (j *bulkJob) load(ctx context.Context, m *manifest) error {
	ld := &loader{j: j, m: m}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(j.opts.Workers)
	// A cut appends its parts to m.Units; the goroutine that cut loads them.
	for _, u := range slices.Clone(m.Units) {
		switch u.State {
		case stateLoaded:
			j.stats.Skipped++
			continue
		case stateCut:
			continue
		}
		g.Go(func() error { return ld.loadUnit(gctx, u, 0) })
	}
	return g.Wait()
}

// set records u's state durably.
func (ld *loader) set(u *loadUnit, state string) error {
	ld.mu.Lock()
	defer ld.mu.Unlock()
	u.State = state
	return ld.m.save(ld.j.dir)
}

// done records u loaded and counts it.
func (ld *loader) done(u *loadUnit, skipped bool) error {
	if err := ld.set(u, stateLoaded); err != nil {
		return err
	}
	ld.mu.Lock()
	st := ld.j.stats
	if skipped {
		st.Skipped++
	} else {
		st.Regions++
		for _, f := range u.Files {
			st.Files++
			st.Bytes += f.Bytes
		}
	}
	ld.mu.Unlock()
	return nil
}

// loadUnit loads u, cutting it if its region split; attempt counts the sends before it.
func (ld *loader) loadUnit(ctx context.Context, u *loadUnit, attempt int) error {
	j := ld.j
	if u.State == stateLoading { // resumed: was it loaded before the kill?
		ok, err := j.unitLoaded(ctx, u)
		if err != nil {
			return err
		}
		if ok {
			return ld.done(u, true)
		}
	}
	files := make([]storeFile, len(u.Files))
	for i, f := range u.Files {
		files[i] = storeFile{family: f.Family, path: "file://" + filepath.Join(j.dir, f.Name)}
	}
	for ; ; attempt++ {
		if err := ld.set(u, stateLoading); err != nil {
			return err
		}
		err := j.b.loadStoreFiles(ctx, j.table, u.First, files, !j.opts.PutsWinTies)
		if err == nil {
			if j.b.bulkHooks.sent != nil {
				ld.mu.Lock()
				ld.sent++
				n := ld.sent
				ld.mu.Unlock()
				j.b.bulkHooks.sent(n)
			}
			return ld.done(u, false)
		}
		if attempt+1 >= maxBulkAttempts || ctx.Err() != nil {
			return fmt.Errorf("hbase: bulk import %q: unit %s not loaded after %d attempts: %w", j.table, u.Name, attempt+1, err)
		}
		switch {
		case errors.Is(err, errNotLoaded) || strings.Contains(err.Error(), "WrongRegionException"):
			spans, serr := j.b.spans(ctx, j.table, true)
			if serr != nil {
				return serr
			}
			if regionOf(spans, u.First) != regionOf(spans, u.Last) {
				return ld.cutAndLoad(ctx, u, spans, attempt+1)
			}
		case driverkit.IsRetryable(err):
		default:
			return err
		}
		ld.mu.Lock()
		j.stats.Retries++
		ld.mu.Unlock()
		if perr := pause(ctx, attempt); perr != nil {
			return fmt.Errorf("hbase: bulk import %q: %w (last error: %w)", j.table, perr, err)
		}
	}
}

// pause waits before send attempt+1: 100 ms doubled each attempt, at most 3.2 s.
func pause(ctx context.Context, attempt int) error {
	t := time.NewTimer(100 * time.Millisecond << min(attempt, 5))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cutAndLoad cuts u's files at the boundaries of spans into one unit per region, records them
// (u cut, the parts written) and loads each.
func (ld *loader) cutAndLoad(ctx context.Context, u *loadUnit, spans []regionSpan, attempt int) error {
	j := ld.j
	first, last := regionOf(spans, u.First), regionOf(spans, u.Last)
	var parts []*loadUnit
	for r := first; r <= last; r++ {
		p, err := j.writeFiles(fmt.Sprintf("%s.%d", u.Name, r-first), j.unitCells(u, spans[r]))
		if err != nil {
			return err
		}
		if len(p.Files) > 0 {
			parts = append(parts, p)
		}
	}
	ld.mu.Lock()
	u.State = stateCut
	ld.m.Units = append(ld.m.Units, parts...)
	j.stats.Splits++
	err := ld.m.save(j.dir)
	ld.mu.Unlock()
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := ld.loadUnit(ctx, p, attempt); err != nil {
			return err
		}
	}
	return nil
}

// unitCells is the cells of u's files in span s, file after file (each file in order).
func (j *bulkJob) unitCells(u *loadUnit, s regionSpan) iter.Seq2[hfile.Cell, error] {
	return func(yield func(hfile.Cell, error) bool) {
		for _, f := range u.Files {
			for c, err := range readStoreFile(filepath.Join(j.dir, f.Name)) {
				if err != nil {
					yield(hfile.Cell{}, err)
					return
				}
				if !regionSpanContains(s, c.Row) {
					continue
				}
				if !yield(c, nil) {
					return
				}
			}
		}
	}
}

func regionSpanContains(s regionSpan, key []byte) bool {
	return string(key) >= string(s.Start) && (len(s.End) == 0 || string(key) < string(s.End))
}

// readStoreFile is the cells of the store file at path.
func readStoreFile(path string) iter.Seq2[hfile.Cell, error] {
	return func(yield func(hfile.Cell, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			yield(hfile.Cell{}, err)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			yield(hfile.Cell{}, err)
			return
		}
		rd, err := hfile.Open(f, st.Size())
		if err != nil {
			yield(hfile.Cell{}, fmt.Errorf("%s: %w", path, err))
			return
		}
		for c, err := range rd.Cells() {
			if !yield(c, err) || err != nil {
				return
			}
		}
	}
}
