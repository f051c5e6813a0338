package client

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/internal/wait"
	"github.com/brine-kv/brine/salting"
)

// AddIndexOptions control AddIndex.
type AddIndexOptions struct {
	// Fence is how long AddIndex waits between declaring the index and building it, so that every
	// Table handle keeps the index before the build reads a row: longer than the handles' refresh
	// interval (WithRouteRefresh; ten of them for a table without indexes yet) plus the longest
	// write. Default three refresh intervals, thirty for a table's first index.
	Fence time.Duration
	// NoPlainWriters states that nothing writes the table around brine's Table: no drop-in client
	// (which learns of a table's indexes once, when it first uses the table), raw driver or brine
	// older than one Table type. Adding the first index of a table that has none requires it: such a
	// writer never keeps an index; stop it first. Every Table handle keeps the new index within the
	// refresh interval, in this process and in others. A table that has an index already refuses the
	// drop-ins' writes, so it needs no such promise.
	NoPlainWriters bool
	// Progress, when not nil, is told of the build's progress (see Index.Rebuild).
	Progress func(RebuildProgress)
}

// maxBuildRounds bounds the passes AddIndex runs to fill entries still missing after the build
// (writes that outlasted the fence) before it gives up.
const maxBuildRounds = 3

// AddIndex adds an index to a table in use, as Phoenix's ASYNC index and IndexTool do. It creates the
// index's table and declares the index (state IndexBuilding) with one compare-and-set of the table's
// meta; from then on every Table handle keeps the index within the refresh interval. After the
// fence it builds the index (Index.Rebuild: every row's entry written through the index protocol, so
// a writer's newer entry is never overwritten), verifies that no row lacks its entry (fillMissing,
// exact while writers run), and marks it active: queries by it are answered from then on. It
// returns the build's counts. A unique index over values rows share fails with ErrUniqueViolation
// and stays building, its writers refused the same: drop it.
//
// It is resumable: called again after an interruption, with the same definition, it builds the
// declared index again from the start; called on an active index with the same definition it does
// nothing. Another definition under the name fails with ErrIndexMismatch.
func (c *Client) AddIndex(ctx context.Context, table string, cfg IndexConfig, opts AddIndexOptions) (RebuildProgress, error) {
	rep := RebuildProgress{Index: cfg.Name}
	fail := func(err error) (RebuildProgress, error) {
		return rep, fmt.Errorf("add index %q to %q: %w", cfg.Name, table, err)
	}
	if err := cfg.check(nil, nil); err != nil {
		return fail(err)
	}
	if _, found, err := route.ReadDir(ctx, c.core.Backend, table); err != nil || found {
		return fail(cmp.Or(err, fmt.Errorf("%w: the table was rebucketed", ErrUnsupported)))
	}
	st, first, err := c.declareIndex(ctx, table, cfg, opts.NoPlainWriters, "")
	if err != nil || st == IndexActive {
		return rep, err
	}
	if opts.Fence <= 0 {
		opts.Fence = 3 * c.core.RouteRefresh
		if first { // the table's handles read its definitions seldom until it has an index
			opts.Fence *= plainRefreshFactor
		}
	}
	if err := wait.Sleep(ctx, opts.Fence); err != nil {
		return fail(err)
	}
	t, err := c.OpenTable(ctx, table, nil)
	if err != nil {
		return fail(err)
	}
	ix := t.view.cur.Load().lookup(cfg.Name)
	if ix == nil || ix.state != IndexBuilding {
		return fail(fmt.Errorf("%w: the index is no longer being built (dropped?)", ErrIndexNotFound))
	}
	if rep, err = ix.Rebuild(ctx, opts.Progress); err != nil {
		return fail(err)
	}
	for round := 1; ; round++ {
		filled, err := ix.fillMissing(ctx)
		if err != nil {
			return fail(err)
		}
		if filled == 0 {
			break
		}
		if round == maxBuildRounds {
			return fail(fmt.Errorf("%w: rows still without an entry after %d passes; run AddIndex again", ErrIndexContention, round))
		}
	}
	err = route.RewriteMeta(ctx, c.core.Backend, table, func(meta map[string]string) (bool, error) {
		if storedMetaSpec(cfg.Name, meta[metaIndexPrefix+cfg.Name]) != ix.cfg.metaSpec() || ix.cfg.spec() != cfg.spec() || indexState(meta, cfg.Name) != IndexBuilding {
			return false, fmt.Errorf("%w: the index changed while it was built", ErrIndexMismatch)
		}
		delete(meta, metaIndexStatePrefix+cfg.Name)
		return true, nil
	})
	if err != nil {
		return fail(err)
	}
	c.core.Logger.InfoContext(ctx, "brine: index added", "table", table, "index", cfg.Name, "rows", rep.Rows)
	return rep, nil
}

// fillMissing writes, through the protocol, the entries of the rows that lack one, and returns how
// many it found. Unlike Verify it is exact while writers run: a row counts only when its entry is
// absent between two reads of the row that find the same version, since no writer removes the
// entry of a row's current values (a writer creates the new entry before its data write and deletes
// the old one after it).
func (ix *Index) fillMissing(ctx context.Context) (int64, error) {
	var found atomic.Int64
	vcol := ix.t.versionColumn()
	only := ix.t.only(ix)
	err := ix.t.t.rt.EachBucketBatch(ctx, func(ctx context.Context, batch []Row) error {
		var rows []Row
		var entries [][]byte
		for _, row := range batch {
			k, ok, err := ix.EntryKey(row.Key, row.Cells)
			if err != nil {
				return err
			}
			if ok {
				rows, entries = append(rows, row), append(entries, k)
			}
		}
		if len(rows) == 0 {
			return nil
		}
		got, err := ix.table.GetMany(ctx, entries)
		if err != nil {
			return err
		}
		var lacking [][]byte
		var was []Row
		for i, e := range got {
			if len(e.Cells) == 0 {
				lacking, was = append(lacking, rows[i].Key), append(was, rows[i])
			}
		}
		if len(lacking) == 0 {
			return nil
		}
		again, err := ix.t.t.GetMany(ctx, lacking)
		if err != nil {
			return err
		}
		var muts []Mutation
		for i, row := range again {
			v0, _ := indexproto.Newest(was[i].Cells, vcol)
			v1, _ := indexproto.Newest(row.Cells, vcol)
			if bytes.Equal(v0, v1) && len(row.Cells) > 0 {
				muts = append(muts, Mutation{Key: row.Key})
			}
		}
		found.Add(int64(len(muts)))
		for i, err := range only.writeIndexedBatch(ctx, muts, true) {
			if err != nil {
				return fmt.Errorf("row %s: %w", ix.t.t.printKey(muts[i].Key), err)
			}
		}
		return nil
	}, func(int) {})
	return found.Load(), err
}

// declareIndex creates the index's table and declares the index building, unless it is declared
// already; it returns the state it is in. holder is the token of the exclusive fence the caller holds
// ("": none), which then lists the index among the ones its Release makes active.
func (c *Client) declareIndex(ctx context.Context, table string, cfg IndexConfig, noPlainWriters bool, holder string) (st IndexState, first bool, err error) {
	st = IndexBuilding
	err = route.RewriteMeta(ctx, c.core.Backend, table, func(meta map[string]string) (bool, error) {
		if f, ok := indexproto.ParseFence(meta); ok && f.Live() && f.Token != holder {
			return false, fencedError(f, table)
		}
		if holder != "" {
			if f, ok := indexproto.ParseFence(meta); !ok || f.Token != holder {
				return false, fmt.Errorf("table %s: %w", table, ErrFenceLost)
			}
		}
		if spec, ok := meta[metaIndexPrefix+cfg.Name]; ok {
			// The declarations must match; the entries' format is the stored index's.
			if stored, err := storedIndexConfig(cfg.Name, spec); err != nil || stored.spec() != cfg.spec() {
				return false, fmt.Errorf("%w: index %q is %q, not %q", ErrIndexMismatch, cfg.Name, spec, cfg.spec())
			}
			if st = indexState(meta, cfg.Name); st == IndexDropping {
				return false, fmt.Errorf("%w: index %q is being dropped: run DropIndex to its end first", backends.ErrInvalidArgument, cfg.Name)
			}
			return false, nil
		}
		ks, err := metaKeySchema(meta)
		if err == nil {
			err = cfg.check(nil, ks)
		}
		if err != nil {
			return false, err
		}
		if first = !hasIndexes(meta); first && !noPlainWriters {
			return false, fmt.Errorf("%w: %w: the table has no index yet, so a writer around brine's Table (a drop-in client, a raw driver), which would not keep one, may write it: stop such writers and say so with AddIndexOptions.NoPlainWriters", backends.ErrInvalidArgument, ErrPlainWriters)
		}
		if meta[metaIndexFamily] == "" {
			meta[metaIndexFamily] = versionFamily(cfg)
		}
		if err := c.checkFamilies(ctx, table, cfg, meta[metaIndexFamily]); err != nil {
			return false, err
		}
		if err := c.createIndexTable(ctx, table, cfg); err != nil {
			return false, err
		}
		meta[metaIndexPrefix+cfg.Name] = cfg.metaSpec()
		meta[metaIndexStatePrefix+cfg.Name] = string(IndexBuilding)
		if holder != "" {
			meta[metaFenceIndexes] += "," + cfg.Name
		}
		return true, nil
	})
	if err != nil {
		return "", false, fmt.Errorf("add index %q to %q: %w", cfg.Name, table, err)
	}
	return st, first, nil
}

// versionFamily is where a table gaining its first index keeps the version column: the family of
// the index's first column, else DefaultFamily.
func versionFamily(cfg IndexConfig) string {
	for _, p := range cfg.Parts {
		if p.Column.Family != "" {
			return p.Column.Family
		}
	}
	if len(cfg.Covered) > 0 {
		return cfg.Covered[0].Family
	}
	return DefaultFamily
}

// checkFamilies refuses an index naming a family the table lacks before it is declared (writers
// would fail on it from then on): a read naming them fails on every store that knows its families.
func (c *Client) checkFamilies(ctx context.Context, table string, cfg IndexConfig, versionFamily string) error {
	cols := []backends.Column{{Family: versionFamily, Qualifier: versionQual}}
	for _, p := range cfg.Parts {
		if p.Column.Family != "" {
			cols = append(cols, p.Column)
		}
	}
	cols = append(cols, cfg.Covered...)
	phys, err := route.MetaTable(ctx, c.core.Backend, table, false)
	if err != nil {
		return err
	}
	if _, err := c.core.Backend.Read(ctx, phys, [][]byte{{0}}, backends.ReadOptions{Columns: cols}); err != nil {
		return fmt.Errorf("index columns: %w", err)
	}
	return nil
}

// createIndexTable creates the index's table, or keeps one with its salting left by an attempt that
// stopped before declaring the index (no writer writes it before).
func (c *Client) createIndexTable(ctx context.Context, table string, cfg IndexConfig) error {
	err := c.createIndexTables(ctx, table, []IndexConfig{cfg})
	if !errors.Is(err, ErrTableExists) {
		return err
	}
	meta, err := c.core.Backend.TableMeta(ctx, IndexTableName(table, cfg.Name))
	if err != nil {
		return err
	}
	if want := cfg.salter().Spec(); salting.CanonicalSpec(meta[MetaSaltSpec]) != want {
		return fmt.Errorf("%w: table %q exists with spec %q, the index's is %q", ErrSpecMismatch, IndexTableName(table, cfg.Name), meta[MetaSaltSpec], want)
	}
	return nil
}

// DropIndexOptions control DropIndex.
type DropIndexOptions struct {
	// Fence is how long DropIndex waits between marking the index dropping and deleting its table,
	// so that no writer writes it any more; as AddIndexOptions.Fence.
	Fence time.Duration
}

// DropIndex removes an index from a table in use: it marks it dropping (queries by it fail with
// ErrIndexNotFound, writers stop keeping it within the refresh interval), waits the fence, deletes
// the index's table and then its definition. Called again after an interruption, it finishes the
// drop. ErrIndexNotFound when the table has no such index.
func (c *Client) DropIndex(ctx context.Context, table, name string, opts DropIndexOptions) error {
	fail := func(err error) error { return fmt.Errorf("drop index %q of %q: %w", name, table, err) }
	err := route.RewriteMeta(ctx, c.core.Backend, table, func(meta map[string]string) (bool, error) {
		if f, ok := indexproto.ParseFence(meta); ok && f.Live() {
			return false, fencedError(f, table)
		}
		if _, ok := meta[metaIndexPrefix+name]; !ok {
			return false, ErrIndexNotFound
		}
		if indexState(meta, name) == IndexDropping {
			return false, nil
		}
		meta[metaIndexStatePrefix+name] = string(IndexDropping)
		return true, nil
	})
	if err != nil {
		return fail(err)
	}
	if opts.Fence <= 0 {
		opts.Fence = 3 * c.core.RouteRefresh
	}
	if err := wait.Sleep(ctx, opts.Fence); err != nil {
		return fail(err)
	}
	if err := c.core.Backend.DeleteTable(ctx, IndexTableName(table, name)); err != nil && !errors.Is(err, ErrTableNotFound) {
		return fail(err)
	}
	err = route.RewriteMeta(ctx, c.core.Backend, table, func(meta map[string]string) (bool, error) {
		delete(meta, metaIndexPrefix+name)
		delete(meta, metaIndexStatePrefix+name)
		return true, nil
	})
	if err != nil {
		return fail(err)
	}
	c.core.Logger.InfoContext(ctx, "brine: index dropped", "table", table, "index", name)
	return nil
}
