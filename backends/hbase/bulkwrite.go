package hbase

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"iter"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
)

// partition is the cells of an import grouped by the region that will serve them: a region's
// cells buffered in memory and the runs it spilled, with the bytes buffered across regions.
type partition struct {
	spans    []regionSpan
	buf      [][]hfile.Cell
	runs     [][]string
	buffered int
	peak     int
}

func newPartition(spans []regionSpan) *partition {
	return &partition{spans: spans, buf: make([][]hfile.Cell, len(spans)), runs: make([][]string, len(spans))}
}

// regionOf is the index of the span holding key: the last whose start is at or before it. Spans
// cover the key space from "" without gaps, as hbase:meta lists a table's regions.
func regionOf(spans []regionSpan, key []byte) int {
	i, _ := slices.BinarySearchFunc(spans, key, func(s regionSpan, k []byte) int {
		if bytes.Compare(s.Start, k) <= 0 {
			return -1
		}
		return 1
	})
	return max(i-1, 0)
}

// add buffers one row's cells (all of one row, so of one region).
func (p *partition) add(cells []hfile.Cell) {
	r := regionOf(p.spans, cells[0].Row)
	p.buf[r] = append(p.buf[r], cells...)
	for _, c := range cells {
		p.buffered += cellSize(c)
	}
	p.peak = max(p.peak, p.buffered)
}

// spill writes every region's buffered cells as a sorted run in dir and frees them.
func (p *partition) spill(dir string) (runs int, err error) {
	for r, cells := range p.buf {
		if len(cells) == 0 {
			continue
		}
		sortRunCells(cells)
		path := filepath.Join(dir, fmt.Sprintf("run-r%05d-%04d", r, len(p.runs[r])))
		if err := writeRun(path, cells); err != nil {
			return runs, err
		}
		p.runs[r] = append(p.runs[r], path)
		p.buf[r] = nil
		runs++
	}
	p.buffered = 0
	return runs, nil
}

// prepare is steps 1 and 2 of BulkImport on a fresh work directory: check and partition the
// input, spill and merge runs, write the store files and the manifest. It returns a nil manifest
// when no row is valid (nothing to load) or on an error, removing the work directory then.
func (j *bulkJob) prepare(ctx context.Context, rows iter.Seq2[backends.Mutation, error]) (m *manifest, err error) {
	if err := os.RemoveAll(j.dir); err != nil { // runs of an import killed before its manifest
		return nil, fmt.Errorf("hbase: bulk import %q: %w", j.table, err)
	}
	// The region server reads the files under its own user, and on the same file system moves
	// them out of the directory: like hbasetest.Staging, open to every user.
	if err := os.Mkdir(j.dir, 0o777); err != nil {
		return nil, fmt.Errorf("hbase: bulk import %q: work directory: %w", j.table, err)
	}
	if err := os.Chmod(j.dir, 0o777); err != nil {
		return nil, fmt.Errorf("hbase: bulk import %q: work directory: %w", j.table, err)
	}
	defer func() {
		if m == nil {
			_ = os.RemoveAll(j.dir)
		}
	}()
	at := j.opts.Timestamp
	if at.IsZero() {
		at = time.Now()
	}
	j.ts = at.UnixMilli()
	spans, err := j.b.spans(ctx, j.table, true)
	if err != nil {
		return nil, err
	}
	p := newPartition(spans)
	fp := newFingerprint()
	var cells []hfile.Cell
	err = j.eachValid(ctx, rows, func(i int64, mut backends.Mutation) error {
		fp.add(i, mut)
		j.stats.Rows++
		cells = j.cells(mut, cells[:0])
		p.add(cells)
		if p.buffered > j.opts.MemoryBytes {
			n, err := p.spill(j.dir)
			j.stats.Runs += int64(n)
			return err
		}
		return nil
	})
	j.stats.PeakBuffered = int64(p.peak)
	if err != nil || j.stats.Rows == 0 {
		return nil, err
	}
	m = &manifest{Version: manifestVersion, Table: j.table, Input: fp.sum(), Timestamp: j.ts, Rows: j.stats.Rows, Failed: j.stats.Failed}
	for r := range spans {
		if len(p.buf[r]) == 0 && len(p.runs[r]) == 0 {
			continue
		}
		sortRunCells(p.buf[r])
		u, err := j.writeFiles(fmt.Sprintf("r%05d", r), mergeRuns(ctx, p.runs[r], p.buf[r]))
		if err != nil {
			return nil, err
		}
		p.buf[r] = nil
		for _, run := range p.runs[r] {
			_ = os.Remove(run)
		}
		m.Units = append(m.Units, u)
		m.Cells += u.cells()
	}
	j.stats.Cells = m.Cells
	if err := m.save(j.dir); err != nil {
		return nil, err
	}
	return m, nil
}

// familyFile is one store file being written.
type familyFile struct {
	f    *os.File
	bw   *bufio.Writer
	w    *hfile.Writer
	rec  unitFile
	path string
}

// writeFiles writes cells (each family's in order, one key once) as one store file per family,
// named prefix-<family in hex>.hfile in the work directory, synced, and returns them as a load
// unit named prefix.
func (j *bulkJob) writeFiles(prefix string, cells iter.Seq2[hfile.Cell, error]) (u *loadUnit, err error) {
	files := map[string]*familyFile{}
	defer func() {
		for _, ff := range files {
			if ff.f != nil {
				_ = ff.f.Close()
			}
		}
	}()
	u = &loadUnit{Name: prefix, State: stateWritten}
	for c, err := range cells {
		if err != nil {
			return nil, fmt.Errorf("hbase: bulk import %q: %w", j.table, err)
		}
		ff := files[string(c.Family)]
		if ff == nil {
			if ff, err = j.createFile(prefix, c.Family); err != nil {
				return nil, err
			}
			files[string(c.Family)] = ff
		}
		if err := ff.w.Append(c); err != nil {
			return nil, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, ff.path, err)
		}
		ff.rec.Cells++
		if u.First == nil || bytes.Compare(c.Row, u.First) < 0 {
			u.First = c.Row
		}
		if bytes.Compare(c.Row, u.Last) > 0 {
			u.Last = c.Row
		}
	}
	for _, fam := range slices.Sorted(maps.Keys(files)) {
		ff := files[fam]
		if err := ff.w.Close(); err != nil {
			return nil, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, ff.path, err)
		}
		if err := ff.bw.Flush(); err != nil {
			return nil, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, ff.path, err)
		}
		if err := ff.f.Sync(); err != nil {
			return nil, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, ff.path, err)
		}
		st, err := ff.f.Stat()
		if err != nil {
			return nil, fmt.Errorf("hbase: bulk import %q: %w", j.table, err)
		}
		ff.rec.Bytes = st.Size()
		err = ff.f.Close()
		ff.f = nil
		if err != nil {
			return nil, fmt.Errorf("hbase: bulk import %q: %s: %w", j.table, ff.path, err)
		}
		u.Files = append(u.Files, ff.rec)
	}
	u.First, u.Last = bytes.Clone(u.First), bytes.Clone(u.Last)
	return u, nil
}

func (j *bulkJob) createFile(prefix string, family []byte) (*familyFile, error) {
	name := fmt.Sprintf("%s-%x.hfile", prefix, family)
	path := filepath.Join(j.dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("hbase: bulk import %q: %w", j.table, err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	w, err := hfile.NewWriter(bw, hfile.Options{Family: family})
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("hbase: bulk import %q: %w", j.table, err)
	}
	return &familyFile{f: f, bw: bw, w: w, path: path, rec: unitFile{Family: string(family), Name: name}}, nil
}

// fingerprint identifies an import's input: a resume must be given the rows the manifest was
// made from. It hashes each valid row's position and cells as given (before stamping), so a
// resume finds the same sum whatever the clock says.
type fingerprint struct {
	h   hash.Hash
	buf []byte
}

func newFingerprint() *fingerprint { return &fingerprint{h: sha256.New()} }

func (f *fingerprint) add(i int64, m backends.Mutation) {
	f.buf = fmt.Appendf(f.buf[:0], "%d %d\n", i, len(m.Cells))
	for _, c := range m.Cells {
		f.buf = appendRunCell(f.buf, hfile.Cell{Row: m.Key, Family: []byte(c.Family), Qualifier: []byte(c.Qualifier), Timestamp: c.Timestamp, Value: c.Value})
	}
	_, _ = f.h.Write(f.buf)
}

func (f *fingerprint) sum() string { return hex.EncodeToString(f.h.Sum(nil)) }
