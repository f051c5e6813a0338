package hbase

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
)

// bulkHooks are the tests' hooks into BulkImport: written is called once every file is written
// and recorded, before the first load; sent after each unit's load, before it is recorded, with
// how many the call loaded.
type bulkHooks struct {
	written func(ctx context.Context) error
	sent    func(n int)
}

// BulkWorkDir is the directory BulkImport keeps its work in under staging.
func BulkWorkDir(staging string) string { return filepath.Join(staging, "brine-bulk") }

// bulkDefaults: how this driver reads backends.BulkOptions. MemoryBytes defaults to 64 MiB, a
// cell counting its row, qualifier and value bytes plus its 112-byte struct; Workers (regions
// loaded at once) to 4. The work is kept, one import at a time, in BulkWorkDir(Staging).
// PutsWinTies sends assign_seq_num false (TestBulkLoadSeqNum).
func bulkDefaults(o *backends.BulkOptions) {
	if o.MemoryBytes <= 0 {
		o.MemoryBytes = 64 << 20
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
}

// BulkImport is backends.BulkImporter's: it writes rows (physical puts: the client salts them before) into table as HBase store
// files and hands them to the regions with BulkLoadHFile, without the WAL and the memstore:
//
//  1. Every row is checked first (key, cells, families of the table, no delete): a refused row
//     goes to OnFailure and is left out; the others are partitioned by the table's regions as
//     hbase:meta lists them, and buffered, spilling sorted runs past MemoryBytes (bulkrun.go).
//     An error yielded by rows itself ends the import with nothing loaded.
//  2. Each region's runs are merged into one store file per family, recorded in a manifest
//     (bulkmanifest.go).
//  3. Each region's files are loaded in one call, all families or none. A region that split
//     since step 1 refuses them; they are cut at its new boundaries and the parts loaded
//     (bulksplit.go), as HBase's BulkLoadHFilesTool does.
//
// Options are read as bulkDefaults says. Cells of the same row, column and timestamp: the last
// in the input is kept. A killed import is resumed by calling BulkImport again with the same
// table, Staging and rows: it finds its manifest, checks that table and input are the same
// (backends.ErrBulkMismatch if not), and loads only what was not loaded. On success the work
// directory is removed; on an error it stays for the resume. It returns backends.ErrRowsFailed
// when rows were refused, and the rest was loaded.
func (b *Backend) BulkImport(ctx context.Context, table string, rows iter.Seq2[backends.Mutation, error], opts backends.BulkOptions) (stats backends.BulkStats, err error) {
	began := time.Now()
	defer func() { stats.Elapsed = time.Since(began) }()
	bulkDefaults(&opts)
	if opts.Staging == "" {
		return stats, fmt.Errorf("hbase: bulk import %q: %w: no staging directory", table, backends.ErrInvalidArgument)
	}
	staging, err := filepath.Abs(opts.Staging)
	if err != nil {
		return stats, fmt.Errorf("hbase: bulk import %q: staging directory: %w", table, err)
	}
	if st, err := os.Stat(staging); err != nil || !st.IsDir() {
		return stats, fmt.Errorf("hbase: bulk import %q: %w: staging directory %s: not a directory (%v)", table, backends.ErrInvalidArgument, staging, err)
	}
	families, err := b.tableFamilies(ctx, table)
	if err != nil {
		return stats, err
	}
	job := &bulkJob{b: b, table: table, dir: BulkWorkDir(staging), opts: opts, families: families, stats: &stats}
	m, err := readManifest(job.dir)
	if err != nil {
		return stats, err
	}
	if m != nil {
		if err := job.verify(ctx, m, rows); err != nil {
			return stats, err
		}
		stats.Resumed = true
	} else {
		if m, err = job.prepare(ctx, rows); err != nil {
			return stats, err
		}
		if m != nil && b.bulkHooks.written != nil {
			if err := b.bulkHooks.written(ctx); err != nil {
				return stats, err
			}
		}
	}
	if m != nil {
		if err := job.load(ctx, m); err != nil {
			return stats, err
		}
	}
	if err := os.RemoveAll(job.dir); err != nil {
		return stats, fmt.Errorf("hbase: bulk import %q: loaded, but the work directory stays: %w", table, err)
	}
	if stats.Failed > 0 {
		return stats, fmt.Errorf("hbase: bulk import %q: %d rows refused: %w", table, stats.Failed, backends.ErrRowsFailed)
	}
	return stats, nil
}

// bulkJob is one BulkImport's state.
type bulkJob struct {
	b        *Backend
	table    string
	dir      string
	opts     backends.BulkOptions
	families map[string][]byte // the table's families, each name's bytes shared by its cells
	stats    *backends.BulkStats
	ts       int64 // Timestamp in ms
}

// tableFamilies asks the master for table's families.
func (b *Backend) tableFamilies(ctx context.Context, table string) (map[string][]byte, error) {
	s, err := b.descriptor(ctx, table)
	if err != nil {
		return nil, err
	}
	fams := map[string][]byte{}
	for _, cf := range s.GetColumnFamilies() {
		fams[string(cf.GetName())] = cf.GetName()
	}
	return fams, nil
}

// check refuses a row BulkImport cannot load: Apply's checks, a delete, an unknown family.
func (j *bulkJob) check(m backends.Mutation) error {
	if m.Delete {
		return fmt.Errorf("hbase: %w: bulk import takes puts only, not a delete", backends.ErrInvalidArgument)
	}
	if err := checkMutation(m); err != nil {
		return err
	}
	for _, c := range m.Cells {
		if _, ok := j.families[c.Family]; !ok {
			return fmt.Errorf("hbase: %w: column family %q is not in table %q", backends.ErrInvalidArgument, c.Family, j.table)
		}
	}
	return nil
}

// eachValid runs the input through check, reporting refused rows, and calls fn with the valid
// ones and their index. An error of the input ends it with that error.
func (j *bulkJob) eachValid(ctx context.Context, rows iter.Seq2[backends.Mutation, error], fn func(i int64, m backends.Mutation) error) error {
	var i int64
	for m, err := range rows {
		if i%1024 == 0 && ctx.Err() != nil {
			return fmt.Errorf("hbase: bulk import %q: %w (nothing loaded)", j.table, ctx.Err())
		}
		if err != nil {
			return fmt.Errorf("hbase: bulk import %q: input row %d: %w (nothing loaded)", j.table, i, err)
		}
		if err := j.check(m); err != nil {
			j.stats.Failed++
			if j.opts.OnFailure != nil {
				j.opts.OnFailure(backends.BulkFailure{Index: i, Mutation: m, Err: err})
			}
		} else if err := fn(i, m); err != nil {
			return err
		}
		i++
	}
	return nil
}

// cells turns m's cells into store file cells, stamped with the import's timestamp where they
// have none. Row, qualifiers and values are copied into one allocation: the input may reuse them.
func (j *bulkJob) cells(m backends.Mutation, out []hfile.Cell) []hfile.Cell {
	n := len(m.Key)
	for _, c := range m.Cells {
		n += len(c.Qualifier) + len(c.Value)
	}
	buf := make([]byte, 0, n)
	buf = append(buf, m.Key...)
	row := buf[:len(m.Key):len(m.Key)]
	for _, c := range m.Cells {
		at := len(buf)
		buf = append(buf, c.Qualifier...)
		q := buf[at:len(buf):len(buf)]
		at = len(buf)
		buf = append(buf, c.Value...)
		ts := c.Timestamp
		if ts == 0 {
			ts = j.ts
		}
		out = append(out, hfile.Cell{Row: row, Family: j.families[c.Family], Qualifier: q, Timestamp: ts, Type: hfile.TypePut, Value: buf[at:len(buf):len(buf)]})
	}
	return out
}
