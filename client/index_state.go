package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
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

// indexView is what every copy of one Table handle shares: the table's index engine as of its
// definitions last read, read again once older than the client's refresh interval (WithRouteRefresh,
// the same bound a rebucket relies on), so that a writer keeps an index declared on the table within
// that bound (the first one too), and stops keeping one being dropped. A handle of a table without
// indexes holds an engine without indexes, which its calls go around (Table.indexed).
//
// cur and at are atomic: every call of every handle reads them, and only a refresh takes mu.
type indexView struct {
	c    *Client
	name string

	cur  atomic.Pointer[indexedTable]
	at   atomic.Int64      // when the read of the meta cur was built from was sent, in Unix nanoseconds
	mu   sync.Mutex        // held by a refresh
	seen map[string]string // indexMeta of the meta cur was built from; under mu
}

// newIndexView is the view of a handle whose engine cur was built from meta, read just now.
func newIndexView(c *Client, cur *indexedTable, meta map[string]string) *indexView {
	v := &indexView{c: c, name: cur.t.name, seen: indexproto.Meta(meta)}
	cur.view = v
	v.cur.Store(cur)
	v.at.Store(time.Now().UnixNano())
	return v
}

// plainRefreshFactor is how many refresh intervals a handle of a table without indexes trusts the
// definitions it read: every handle reads them, and on HBase each read is a call to the master, so
// the many tables without indexes read them seldom; AddIndex of a first index waits as much longer.
const plainRefreshFactor = 10

// refreshOf is how long a handle trusts definitions as cur holds them.
func (c *Client) refreshOf(cur *indexedTable) time.Duration {
	if cur.declared {
		return c.core.RouteRefresh
	}
	return plainRefreshFactor * c.core.RouteRefresh
}

// fresh is the engine when its definitions were read less than its refresh interval ago, else nil.
func (v *indexView) fresh() *indexedTable {
	cur := v.cur.Load()
	if time.Since(time.Unix(0, v.at.Load())) < v.c.refreshOf(cur) {
		return cur
	}
	return nil
}

// current is the handle as of the table's definitions read less than the refresh interval ago. Every
// write takes it once at its start and keeps it to the end, so one write keeps one set of indexes.
func (it *indexedTable) current(ctx context.Context) (*indexedTable, error) {
	return it.view.refresh(ctx, false)
}

// refresh is current; force reads the definitions whatever their age.
func (it *indexedTable) refresh(ctx context.Context, force bool) (*indexedTable, error) {
	return it.view.refresh(ctx, force)
}

// refresh is indexedTable.refresh, on the view.
func (v *indexView) refresh(ctx context.Context, force bool) (*indexedTable, error) {
	if cur := v.fresh(); cur != nil && !force {
		return cur, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if cur := v.fresh(); cur != nil && !force {
		return cur, nil // another call read them while this one waited
	}
	sent := time.Now()
	cur := v.cur.Load()
	meta, err := cur.t.rt.ServingMeta(ctx)
	if err != nil {
		return nil, fmt.Errorf("table %s: read index definitions: %w", v.name, err)
	}
	if im := indexproto.Meta(meta); !maps.Equal(im, v.seen) {
		next := &indexedTable{t: cur.t, view: v}
		if err := v.c.attachIndexes(next, meta); err != nil {
			return nil, fmt.Errorf("table %s: %w", v.name, err)
		}
		v.cur.Store(next)
		v.seen = im
	}
	v.at.Store(sent.UnixNano())
	return v.cur.Load(), nil
}

// write runs fn, a write, on the handle as of the table's definitions (current), and once more when
// it failed on the table of an index dropped since: a write that outlasted DropIndex's fence. Such a
// failure comes before the write's data write (every index step that can fail precedes it), so the
// write is run again whole, keeping the indexes left.
func (it *indexedTable) write(ctx context.Context, fn func(*indexedTable) error) error {
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
func (it *indexedTable) afterDrop(ctx context.Context, used *indexedTable, err error) (*indexedTable, bool) {
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
func (it *indexedTable) latest() *indexedTable { return it.view.cur.Load() }

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
