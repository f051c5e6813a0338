package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/brine-kv/brine/internal/indexproto"
)

// IndexState is where an index is in its life. An index declared on a table in use (AddIndex) is
// building: every writer keeps it, a build fills in the rows written before, and queries by it are
// refused (ErrIndexBuilding) until it is active. DropIndex moves it to dropping: writers stop keeping
// it, then its table and definition go.
type IndexState string

// The states of an index, in the order it moves through them.
const (
	IndexBuilding IndexState = "building"
	IndexActive   IndexState = "active"
	IndexDropping IndexState = "dropping"
)

// metaIndexStatePrefix + index name holds the state of an index that is not active.
const metaIndexStatePrefix = indexproto.StatePrefix

// ErrIndexBuilding: a query by an index that AddIndex has not finished building; its answers would
// miss rows written before it was declared.
var ErrIndexBuilding = errors.New("brine: index is being built; query it once it is active")

func indexState(meta map[string]string, name string) IndexState {
	if s := meta[metaIndexStatePrefix+name]; s != "" {
		return IndexState(s)
	}
	return IndexActive
}

// State is the index's state at the handle's last reading of the table's definitions.
func (ix *Index) State() IndexState { return ix.state }

// indexView is what every copy of one IndexedTable handle shares: the handle as of the table's
// definitions last read, read again once older than the client's refresh interval (WithRouteRefresh,
// the same bound a rebucket relies on), so that a writer keeps an index declared on the table within
// that bound, and stops keeping one being dropped.
type indexView struct {
	c    *Client
	name string

	mu   sync.Mutex
	cur  *IndexedTable
	seen map[string]string // indexMeta of the meta cur was built from
	at   time.Time         // when that meta's read was sent
}

// current is the handle as of the table's definitions read less than the refresh interval ago. Every
// write takes it once at its start and keeps it to the end, so one write keeps one set of indexes.
func (it *IndexedTable) current(ctx context.Context) (*IndexedTable, error) {
	return it.refresh(ctx, false)
}

// refresh is current; force reads the definitions whatever their age.
func (it *IndexedTable) refresh(ctx context.Context, force bool) (*IndexedTable, error) {
	v := it.view
	v.mu.Lock()
	defer v.mu.Unlock()
	if !force && time.Since(v.at) < v.c.core.RouteRefresh {
		return v.cur, nil
	}
	sent := time.Now()
	meta, err := v.cur.t.rt.ServingMeta(ctx)
	if err != nil {
		return nil, fmt.Errorf("table %s: read index definitions: %w", v.name, err)
	}
	if im := indexproto.Meta(meta); !maps.Equal(im, v.seen) {
		next := &IndexedTable{t: v.cur.t, view: v}
		if err := v.c.attachIndexes(next, meta); err != nil {
			return nil, fmt.Errorf("table %s: %w", v.name, err)
		}
		v.cur, v.seen = next, im
	}
	v.at = sent
	return v.cur, nil
}

// write runs fn, a write, on the handle as of the table's definitions (current), and once more when
// it failed on the table of an index dropped since: a write that outlasted DropIndex's fence. Such a
// failure comes before the write's data write (every index step that can fail precedes it), so the
// write is run again whole, keeping the indexes left.
func (it *IndexedTable) write(ctx context.Context, fn func(*IndexedTable) error) error {
	cur, err := it.writable(ctx)
	if err != nil {
		return err
	}
	err = fn(cur)
	if next, ok := it.afterDrop(ctx, cur, err); ok {
		err = fn(next)
	}
	return err
}

// afterDrop returns the handle as of the definitions read now when err may come from the table of
// an index that used had and that is gone (or being dropped) now.
func (it *IndexedTable) afterDrop(ctx context.Context, used *IndexedTable, err error) (*IndexedTable, bool) {
	if !errors.Is(err, ErrTableNotFound) {
		return nil, false
	}
	next, rerr := it.refresh(ctx, true)
	if rerr != nil {
		return nil, false
	}
	for _, ix := range used.indexes {
		if !slices.ContainsFunc(next.indexes, func(n *Index) bool { return n.cfg.Name == ix.cfg.Name && n.cfg.metaSpec() == ix.cfg.metaSpec() }) {
			return next, true
		}
	}
	return nil, false
}

// latest is the handle as of the table's definitions last read, without reading them again.
func (it *IndexedTable) latest() *IndexedTable {
	it.view.mu.Lock()
	defer it.view.mu.Unlock()
	return it.view.cur
}

// queryable refuses a query by an index that is not active now (or no longer there).
func (ix *Index) queryable(ctx context.Context) error {
	cur, err := ix.t.current(ctx)
	if err != nil {
		return err
	}
	now := cur.lookup(ix.cfg.Name)
	switch {
	case now == nil || now.cfg.metaSpec() != ix.cfg.metaSpec():
		return fmt.Errorf("%w (dropped)", ErrIndexNotFound)
	case now.state == IndexBuilding:
		return ErrIndexBuilding
	}
	return nil
}
