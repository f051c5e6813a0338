package hbase

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
)

// The manifest: what a bulk import wrote and what of it is loaded, so that an import killed at
// any point resumes and ends exact, loading no file twice.
//
//   - Killed before the manifest exists (checking, spilling, writing files): nothing was loaded.
//     The work directory holds runs and files only; the next BulkImport removes it and starts over.
//   - The manifest is written once every store file is written and synced, and rewritten (to a
//     temporary file, synced, renamed over the old, the directory synced) on every change of a
//     unit's state: written, loading (just before its BulkLoadHFile call), loaded (just after),
//     cut (refused after a split; its parts follow as units of their own).
//   - Resumed, units loaded or cut are skipped and written ones loaded. A unit left loading is the
//     window between the server's load and the manifest's rename: unitLoaded decides it.
//
// unitLoaded: a load is all or nothing across the unit's files (one call, every family). The
// server moves a file it loads when the file is on its own file system; one of the unit's files
// gone from the work directory (nothing else removes them before the import ends) means the
// load happened. Otherwise the server copied them, and the table says: the unit counts as loaded
// when every cell of every file shows in the table (same row, column, timestamp and value). That
// is exact in the direction that could lose data: a unit skipped this way had nothing to add. The
// other direction, a loaded unit whose cells no longer all show (a later delete, a put of another
// value at the same timestamp, cells past the family's VERSIONS), is loaded again: same cells,
// same timestamps, so nothing visible changes (with assign_seq_num the file is again newest), and
// the cost is one more store file in the region until its next compaction. The check reads the
// unit's rows once, for the few units (at most backends.BulkOptions.Workers) in flight when it was killed.

const (
	manifestVersion = 1
	manifestName    = "manifest.json"

	stateWritten = "written"
	stateLoading = "loading"
	stateLoaded  = "loaded"
	stateCut     = "cut"
)

// manifest is the work directory's record of an import.
type manifest struct {
	Version   int         `json:"version"`
	Table     string      `json:"table"`
	Input     string      `json:"input"`     // the input's fingerprint
	Timestamp int64       `json:"timestamp"` // ms given to cells without one
	Rows      int64       `json:"rows"`
	Cells     int64       `json:"cells"`
	Failed    int64       `json:"failed"`
	Units     []*loadUnit `json:"units"`
}

// loadUnit is the files of one BulkLoadHFile call: one region's, one per family.
type loadUnit struct {
	Name  string     `json:"name"`  // its files' prefix
	First []byte     `json:"first"` // the files' first and last rows
	Last  []byte     `json:"last"`
	Files []unitFile `json:"files"`
	State string     `json:"state"`
}

type unitFile struct {
	Family string `json:"family"`
	Name   string `json:"name"` // in the work directory
	Cells  int64  `json:"cells"`
	Bytes  int64  `json:"bytes"`
}

func (u *loadUnit) cells() (n int64) {
	for _, f := range u.Files {
		n += f.Cells
	}
	return n
}

// readManifest reads dir's manifest; nil when there is none.
func readManifest(dir string) (*manifest, error) {
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hbase: bulk import: manifest: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("hbase: bulk import: manifest %s: %w", filepath.Join(dir, manifestName), err)
	}
	if m.Version != manifestVersion {
		return nil, fmt.Errorf("hbase: bulk import: manifest %s: version %d, want %d", filepath.Join(dir, manifestName), m.Version, manifestVersion)
	}
	return &m, nil
}

// save writes m durably: a temporary file, synced, renamed over the manifest, the directory synced.
func (m *manifest) save(dir string) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("hbase: bulk import: manifest: %w", err)
	}
	tmp := filepath.Join(dir, manifestName+".tmp")
	if err := writeSynced(tmp, raw); err != nil {
		return fmt.Errorf("hbase: bulk import: manifest: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, manifestName)); err != nil {
		return fmt.Errorf("hbase: bulk import: manifest: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("hbase: bulk import: manifest: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("hbase: bulk import: manifest: %w", err)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// verify checks that a resumed import is the one the manifest records: same table, same input
// (reading it again, and reporting its refused rows again, as the first attempt did), same
// timestamp if one is given.
func (j *bulkJob) verify(ctx context.Context, m *manifest, rows iter.Seq2[backends.Mutation, error]) error {
	if m.Table != j.table {
		return fmt.Errorf("hbase: bulk import %q: %s holds an import into %q: %w", j.table, j.dir, m.Table, backends.ErrBulkMismatch)
	}
	if !j.opts.Timestamp.IsZero() && j.opts.Timestamp.UnixMilli() != m.Timestamp {
		return fmt.Errorf("hbase: bulk import %q: %s holds an import stamped %s, not %s: %w", j.table, j.dir,
			time.UnixMilli(m.Timestamp).UTC().Format(time.RFC3339Nano), j.opts.Timestamp.UTC().Format(time.RFC3339Nano), backends.ErrBulkMismatch)
	}
	j.ts = m.Timestamp
	fp := newFingerprint()
	err := j.eachValid(ctx, rows, func(i int64, mut backends.Mutation) error {
		fp.add(i, mut)
		j.stats.Rows++
		return nil
	})
	if err != nil {
		return err
	}
	if fp.sum() != m.Input || j.stats.Rows != m.Rows {
		return fmt.Errorf("hbase: bulk import %q: %s holds an import of other rows (%d valid rows then, %d now): %w", j.table, j.dir, m.Rows, j.stats.Rows, backends.ErrBulkMismatch)
	}
	j.stats.Cells = m.Cells
	return nil
}

// unitLoaded decides whether a unit the manifest left loading was loaded (see the top of this file).
func (j *bulkJob) unitLoaded(ctx context.Context, u *loadUnit) (bool, error) {
	for _, f := range u.Files {
		if _, err := os.Stat(filepath.Join(j.dir, f.Name)); errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
	}
	for _, f := range u.Files {
		ok, err := j.fileShows(ctx, u, f)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// fileShows reports whether every cell of file f shows in the table: the file and a scan of its
// rows, family and time range are walked side by side, both in HBase's order.
func (j *bulkJob) fileShows(ctx context.Context, u *loadUnit, f unitFile) (bool, error) {
	fh, err := os.Open(filepath.Join(j.dir, f.Name))
	if err != nil {
		return false, fmt.Errorf("hbase: bulk import %q: %w", j.table, err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return false, fmt.Errorf("hbase: bulk import %q: %w", j.table, err)
	}
	rd, err := hfile.Open(fh, st.Size())
	if err != nil {
		return false, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, f.Name, err)
	}
	from, to, err := rd.Info.TimeRange()
	if err != nil {
		return false, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, f.Name, err)
	}
	opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{
		Columns: []backends.Column{{Family: f.Family}}, MaxVersions: math.MaxInt32,
		TimeRange: backends.TimeRange{From: from, To: to + 1},
	}}
	r := backends.Range{Start: u.First, End: append(bytes.Clone(u.Last), 0)}
	next, stop := iter.Pull2(tableCells(j.b.Scan(ctx, j.table, r, opts)))
	defer stop()
	for want, err := range rd.Cells() {
		if err != nil {
			return false, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, f.Name, err)
		}
		for {
			got, err, ok := next()
			if err != nil {
				return false, err
			}
			if !ok {
				return false, nil
			}
			if c := hfile.Compare(got, want); c == 0 {
				if !bytes.Equal(got.Value, want.Value) {
					return false, nil
				}
				break
			} else if c > 0 {
				return false, nil
			}
		}
	}
	return true, nil
}

// tableCells flattens rows into their cells as store file cells.
func tableCells(rows iter.Seq2[backends.Row, error]) iter.Seq2[hfile.Cell, error] {
	return func(yield func(hfile.Cell, error) bool) {
		for row, err := range rows {
			if err != nil {
				yield(hfile.Cell{}, err)
				return
			}
			for _, c := range row.Cells {
				if !yield(hfile.Cell{Row: row.Key, Family: []byte(c.Family), Qualifier: []byte(c.Qualifier), Timestamp: c.Timestamp, Type: hfile.TypePut, Value: c.Value}, nil) {
					return
				}
			}
		}
	}
}
