package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
)

// IndexReport is what Verify found. Its problems are entries the main table needs that the index
// lacks (Missing), entries a row needs that name another row, carry old covered values or were left
// pending past the index's grace (Stale), and entries no row needs (Extra). Pending entries are not
// problems: written by a writer less than the grace ago and not yet verified, they are what a writer
// between its steps leaves (so are the last writes of concurrent writers that just finished, and a
// row's claim that lost a unique clash), and readers settle them, verified or deleted, once the
// writer is done or the grace has passed. Examples holds the first few problems, for people.
type IndexReport struct {
	Index   string
	Rows    int64 // main rows with an entry
	Entries int64 // entries in the index table
	Missing int64
	Stale   int64
	Extra   int64
	Pending int64 // entries younger than the grace and not yet verified: not problems
	// Examples are up to maxExamples problems, one line each.
	Examples []string
}

const maxExamples = 10

// Problems is Missing + Stale + Extra.
func (r IndexReport) Problems() int64 { return r.Missing + r.Stale + r.Extra }

func (r IndexReport) String() string {
	return fmt.Sprintf("index %s: %d rows, %d entries, %d missing, %d stale, %d extra, %d pending",
		r.Index, r.Rows, r.Entries, r.Missing, r.Stale, r.Extra, r.Pending)
}

type wantEntry struct {
	mainKey []byte
	covered []byte
	seen    bool
}

// Verify compares the index with the answer computed from the main table alone. It reads both
// tables whole and holds one entry per row in memory. Entries of writes in flight, or of writes
// finished less than the index's grace ago and not yet settled by a reader, count as Pending, not
// as problems; WithGrace(0) counts them as the problems they would be if their writers had died.
func (ix *Index) Verify(ctx context.Context) (IndexReport, error) {
	rep := IndexReport{Index: ix.cfg.Name}
	want := map[string]*wantEntry{}
	for row, err := range ix.t.t.Scan(ctx, Range{}) {
		if err != nil {
			return rep, fmt.Errorf("verify %s: %w", ix.cfg.Name, err)
		}
		k, ok, err := ix.EntryKey(row.Key, row.Cells)
		if err != nil {
			return rep, fmt.Errorf("verify %s: %w", ix.cfg.Name, err)
		}
		if !ok {
			continue
		}
		rep.Rows++
		if prev, dup := want[string(k)]; dup {
			rep.note(&rep.Extra, "rows %s and %s share unique key %s", ix.t.t.printKey(prev.mainKey), ix.t.t.printKey(row.Key), ix.table.printKey(k))
			continue
		}
		want[string(k)] = &wantEntry{mainKey: row.Key, covered: ix.def.EncodeCovered(row.Cells)}
	}
	for e, err := range ix.table.Scan(ctx, Range{}) {
		if err != nil {
			return rep, fmt.Errorf("verify %s: %w", ix.cfg.Name, err)
		}
		rep.Entries++
		w := want[string(e.Key)]
		if w != nil {
			w.seen = true
		}
		st, _ := indexproto.Newest(e.Cells, Column{Family: indexFamily, Qualifier: statusQual})
		if len(st) > 0 && st[0] != statusVerified && indexproto.TokenAge(st[1:]) < ix.grace {
			rep.Pending++ // its writer may be between its steps: a reader settles it, not Verify
			continue
		}
		if w == nil {
			rep.note(&rep.Extra, "extra entry %s", ix.table.printKey(e.Key))
			continue
		}
		mk := ix.def.MainKey(e.Key, e.Cells)
		cov, _ := indexproto.Newest(e.Cells, Column{Family: indexFamily, Qualifier: indexproto.CoveredQual})
		switch {
		case !bytes.Equal(mk, w.mainKey):
			rep.note(&rep.Stale, "entry %s names row %s, want %s", ix.table.printKey(e.Key), ix.t.t.printKey(mk), ix.t.t.printKey(w.mainKey))
		case len(st) == 0 || st[0] != statusVerified:
			rep.note(&rep.Stale, "entry %s pending past the grace", ix.table.printKey(e.Key))
		case !bytes.Equal(cov, w.covered):
			rep.note(&rep.Stale, "entry %s has old covered values", ix.table.printKey(e.Key))
		}
	}
	for k, w := range want {
		if !w.seen {
			rep.note(&rep.Missing, "row %s has no entry %s", ix.t.t.printKey(w.mainKey), ix.table.printKey([]byte(k)))
		}
	}
	return rep, nil
}

func (r *IndexReport) note(n *int64, format string, args ...any) {
	*n++
	if len(r.Examples) < maxExamples {
		r.Examples = append(r.Examples, fmt.Sprintf(format, args...))
	}
}

// RebuildProgress is reported by Rebuild after each bucket, one call at a time, and returned by it
// at the end with the totals of its last phase (every bucket of the index table done).
type RebuildProgress struct {
	Index          string
	Rows, Entries  int64 // main rows rewritten, entries checked
	Buckets, Total int   // buckets done, of
}

// Rebuild fills and repairs the index from the main table, online: every main row's entries are
// rewritten through the write protocol (so a concurrent writer of the row is never undone), then
// every entry is checked as a reader checks it, which removes the ones no row needs and repairs
// pending ones older than the index's grace. Buckets run in parallel, main table then index table.
// It is also how an index added to an existing table is filled.
func (ix *Index) Rebuild(ctx context.Context, progress func(RebuildProgress)) (RebuildProgress, error) {
	var p RebuildProgress
	p.Index = ix.cfg.Name
	var rows, entries atomic.Int64
	var done, total atomic.Int64 // buckets done of total, in the phase under way
	var mu sync.Mutex            // progress is called by one bucket at a time
	report := func(n int) {
		total.Store(int64(n))
		mu.Lock()
		defer mu.Unlock()
		d := done.Add(1)
		if progress != nil {
			progress(RebuildProgress{Index: ix.cfg.Name, Rows: rows.Load(), Entries: entries.Load(), Buckets: int(d), Total: n})
		}
	}
	if _, err := ix.t.writable(ctx); err != nil {
		return p, fmt.Errorf("rebuild %s: %w", ix.cfg.Name, err)
	}
	if err := ix.ensureTable(ctx); err != nil {
		return p, fmt.Errorf("rebuild %s: %w", ix.cfg.Name, err)
	}
	only := ix.t.only(ix)
	err := ix.t.t.rt.EachBucketBatch(ctx, func(ctx context.Context, batch []Row) error {
		muts := make([]Mutation, len(batch))
		for i, row := range batch {
			muts[i] = Mutation{Key: row.Key}
		}
		for i, err := range only.writeIndexedBatch(ctx, muts, true) {
			if err != nil {
				return fmt.Errorf("row %s: %w", ix.t.t.printKey(muts[i].Key), err)
			}
		}
		rows.Add(int64(len(batch)))
		return nil
	}, report)
	if err != nil {
		return p, fmt.Errorf("rebuild %s: %w", ix.cfg.Name, err)
	}
	done.Store(0)
	err = ix.table.rt.EachBucket(ctx, func(ctx context.Context, e Row) error {
		entries.Add(1)
		_, err := ix.resolve(ctx, []Row{e}, route.ReadConfig{})
		return err
	}, report)
	if err != nil {
		return p, fmt.Errorf("rebuild %s: %w", ix.cfg.Name, err)
	}
	// The last phase's totals: what its last progress call said, every bucket done.
	return RebuildProgress{Index: ix.cfg.Name, Rows: rows.Load(), Entries: entries.Load(), Buckets: int(done.Load()), Total: int(total.Load())}, nil
}

// ensureTable creates the index's table again when it is gone (deleted around the API, by a tool
// that does not know it holds an index), so that Rebuild can fill it.
func (ix *Index) ensureTable(ctx context.Context) error {
	c := ix.t.t.c
	name := IndexTableName(ix.t.t.name, ix.cfg.Name)
	if _, found, err := route.ReadDir(ctx, c.core.Backend, name); err != nil || found {
		return err // a rebucketed index table is the directory's to find
	}
	_, err := c.core.Backend.TableMeta(ctx, name)
	if !errors.Is(err, ErrTableNotFound) {
		return err
	}
	c.core.Logger.WarnContext(ctx, "brine: index table missing: creating it again", "index", ix.cfg.Name, "table", name)
	if err := c.createIndexTables(ctx, ix.t.t.name, []IndexConfig{ix.cfg}); err != nil && !errors.Is(err, ErrTableExists) {
		return err
	}
	return nil
}

// only is it with only ix among its indexes, so a rebuild rewrites one index's entries.
func (it *indexedTable) only(ix *Index) *indexedTable {
	c := *it
	c.indexes = []*Index{ix}
	return &c
}
