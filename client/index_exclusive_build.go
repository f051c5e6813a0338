package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
)

// AddIndex declares an index on the fenced table and builds it as plain batches: its table created,
// the main table read once and each row's entry written, with no compare-and-set and no read of the
// new index's table. Like the table's other indexes it is building until Release makes it active.
// A unique index over values two rows share fails with ErrUniqueViolation and stays building:
// drop it once the fence is released. An index of that name and definition is built again.
// progress, when set, is told when the index's table is ready and the reading begins (no bucket
// done), then after each bucket of the main table.
func (x *ExclusiveTable) AddIndex(ctx context.Context, cfg IndexConfig, progress func(RebuildProgress)) (RebuildProgress, error) {
	rep := RebuildProgress{Index: cfg.Name}
	fail := func(err error) (RebuildProgress, error) {
		return rep, fmt.Errorf("add index %q to %q: %w", cfg.Name, x.Name(), err)
	}
	if err := cfg.check(nil, nil); err != nil {
		return fail(err)
	}
	if err := x.lostErr(); err != nil {
		return fail(err)
	}
	c := x.it.t.c
	fresh := x.it.lookup(cfg.Name) == nil
	if _, _, err := c.declareIndex(ctx, x.it.t.name, cfg, true, x.fence.Token); err != nil {
		return fail(err)
	}
	if !slices.Contains(x.moved, cfg.Name) {
		x.moved = append(x.moved, cfg.Name)
	}
	it, err := x.it.refresh(ctx, true)
	if err != nil {
		return fail(err)
	}
	x.it = it
	ix := it.lookup(cfg.Name)
	if ix == nil {
		return fail(fmt.Errorf("%w: declared, not read back", ErrIndexNotFound))
	}
	if !fresh {
		return x.rebuild(ctx, ix, progress)
	}
	rep.Rows, err = x.fillEntries(ctx, []*Index{ix}, true, buildProgress(cfg.Name, progress))
	if err != nil {
		x.dirty.Store(true) // a failed build leaves some entries: Release checks them all
		if errors.Is(err, ErrUniqueViolation) {
			err = errors.Join(err, x.giveUp(ctx, cfg.Name))
		}
		return fail(err)
	}
	rep.Entries = rep.Rows
	return rep, nil
}

// giveUp leaves the index name out of the fence's: Release neither repairs nor activates it, and it
// stays building, for DropIndex.
func (x *ExclusiveTable) giveUp(ctx context.Context, name string) error {
	x.moved = slices.DeleteFunc(x.moved, func(n string) bool { return n == name })
	x.skip = append(x.skip, name)
	return route.RewriteMeta(ctx, x.it.t.c.core.Backend, x.it.t.name, func(meta map[string]string) (bool, error) {
		if f, ok := indexproto.ParseFence(meta); !ok || f.Token != x.fence.Token {
			return false, fmt.Errorf("table %s: %w", x.Name(), ErrFenceLost)
		}
		names := slices.DeleteFunc(strings.Split(meta[metaFenceIndexes], ","), func(n string) bool { return n == name })
		meta[metaFenceIndexes] = strings.Join(names, ",")
		return true, nil
	})
}

// Rebuild writes the entries of the index name again from the main table under the fence, as plain
// batches: the entries no row backs go, the ones that differ from their rows are written again, and
// the ones missing are written. It is how a damaged index is repaired at bulk speed; it is active
// again at Release.
func (x *ExclusiveTable) Rebuild(ctx context.Context, name string, progress func(RebuildProgress)) (RebuildProgress, error) {
	ix := x.it.lookup(name)
	if ix == nil {
		_, err := x.it.Index(name)
		return RebuildProgress{Index: name}, fmt.Errorf("rebuild: %w", err)
	}
	return x.rebuild(ctx, ix, progress)
}

func (x *ExclusiveTable) rebuild(ctx context.Context, ix *Index, progress func(RebuildProgress)) (RebuildProgress, error) {
	rep := RebuildProgress{Index: ix.cfg.Name}
	if err := x.lostErr(); err != nil {
		return rep, err
	}
	if err := ix.ensureTable(ctx); err != nil {
		return rep, fmt.Errorf("rebuild %s: %w", ix.cfg.Name, err)
	}
	var checked atomic.Int64
	if err := x.dropStale(ctx, ix, &checked); err != nil {
		return rep, err
	}
	rows, err := x.fillEntries(ctx, []*Index{ix}, false, buildProgress(ix.cfg.Name, progress))
	if err != nil {
		return rep, fmt.Errorf("rebuild %s: %w", ix.cfg.Name, err)
	}
	return RebuildProgress{Index: ix.cfg.Name, Rows: rows, Entries: checked.Load()}, nil
}

// buildProgress adapts a build's per-bucket reports to RebuildProgress.
func buildProgress(index string, progress func(RebuildProgress)) func(rows int64, buckets, total int) {
	if progress == nil {
		return nil
	}
	return func(rows int64, buckets, total int) {
		progress(RebuildProgress{Index: index, Rows: rows, Entries: rows, Buckets: buckets, Total: total})
	}
}
