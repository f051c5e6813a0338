package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/wait"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// DefaultRouteRefresh is how long a table handle trusts its view of the directory before reading it
// again (WithRouteRefresh). A rebucket waits DefaultRebucketFence, three of these, between steps.
const DefaultRouteRefresh = time.Second

// ErrRebucketing: the call cannot run while the table is being rebucketed (Import, CountByBucket,
// a TimeRange read while rows are being copied); retry once the rebucket has finished.
var ErrRebucketing = errors.New("brine: table is being rebucketed")

// The marker: during a rebucket, every row a writer changes in the new table first gets this column
// (in a family of its own, so that a whole-row delete keeps it). A marked row is the truth for its key;
// the copy writes only rows without it.
const (
	markFamily    = "brine_m"
	markQualifier = "m"
)

var markCond = backends.Condition{Family: markFamily, Qualifier: markQualifier}

func markCell() Cell { return Cell{Family: markFamily, Qualifier: markQualifier, Value: []byte{'1'}} }

// router follows a logical table through rebuckets: it holds the handle's view of the directory row
// and reads it again once it is older than the refresh interval, before the call that needs it.
type router struct {
	c         *Client
	logical   string
	keySchema *keys.Schema // the logical table's, given to every view's tables (setKeySchema)

	mu   sync.Mutex
	view *routeView
	at   time.Time // when view's directory read was sent
}

// routeView is one directory version turned into tables.
type routeView struct {
	row      dirRow
	old, new *physTable // old serves while state is "" or pause; new is target during a rebucket
}

func newRouter(c *Client, logical string, row dirRow, s salting.Salter) (*router, error) {
	r := &router{c: c, logical: logical}
	v, err := r.build(row, s)
	if err != nil {
		return nil, err
	}
	r.view, r.at = v, time.Now()
	return r, nil
}

func (r *router) build(row dirRow, s salting.Salter) (*routeView, error) {
	if s == nil || s.Spec() != row.spec {
		var err error
		if s, err = salting.ParseSpec(row.spec); err != nil {
			return nil, fmt.Errorf("table %s: directory spec: %w", r.logical, err)
		}
	}
	v := &routeView{row: row, old: &physTable{c: r.c, name: row.phys, salter: s, keySchema: r.keySchema}}
	if row.state != stateServing {
		ns, err := salting.ParseSpec(row.targetSpec)
		if err != nil {
			return nil, fmt.Errorf("table %s: directory target spec: %w", r.logical, err)
		}
		v.new = &physTable{c: r.c, name: row.target, salter: ns, keySchema: r.keySchema}
	}
	return v, nil
}

// get returns a view read less than the refresh interval ago.
func (r *router) get(ctx context.Context) (*routeView, error) {
	return r.readSince(ctx, time.Now().Add(-r.c.routeRefresh))
}

// reread is get with the directory read again whatever the view's age.
func (r *router) reread(ctx context.Context) (*routeView, error) {
	return r.readSince(ctx, time.Now())
}

// readView is get for a read. A view in pause is trusted only if the directory read behind it was
// sent after the call began: the next step, migrate, lets writers change rows in the new table at
// once, and a handle that read the directory just before it would read the old table for up to a
// refresh interval after rows moved (a reader's index repair then took an entry a write had just
// verified for a stale one, and deleted it). Concurrent reads share one directory read.
func (r *router) readView(ctx context.Context) (*routeView, error) {
	begun := time.Now()
	v, err := r.get(ctx)
	if err != nil || v.row.state != statePause {
		return v, err
	}
	return r.readSince(ctx, begun)
}

// readSince returns the view of a directory read sent at or after since, reading it again if the
// handle's is older.
func (r *router) readSince(ctx context.Context, since time.Time) (*routeView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.Before(since) {
		return r.view, nil
	}
	sent := time.Now()
	row, found, err := readDir(ctx, r.c.backend, r.logical)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", r.logical, err)
	}
	if found && row.version != r.view.row.version {
		v, err := r.build(row, r.view.old.salter)
		if err != nil {
			return nil, err
		}
		r.view = v
	}
	r.at = sent
	return r.view, nil
}

// writeView is get, waiting while the rebucket holds writes (state pause).
func (r *router) writeView(ctx context.Context) (*routeView, error) {
	for {
		v, err := r.get(ctx)
		if err != nil || v.row.state != statePause {
			return v, err
		}
		if err := wait.Sleep(ctx, r.c.routeRefresh/4); err != nil {
			return nil, err
		}
	}
}

// plain returns the table a call with no rebucket logic of its own may use now, or ErrRebucketing.
func (r *router) plain(ctx context.Context, op string, allowPause bool) (*physTable, error) {
	v, err := r.readView(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case v.row.state == stateServing, allowPause && v.row.state == statePause:
		return v.old, nil
	case v.row.state == stateSwitched && !allowPause:
		return v.new, nil
	}
	return nil, fmt.Errorf("%s %s: %w (state %s)", op, r.logical, ErrRebucketing, v.row.state)
}

// apply writes muts through the view's rules: in migrate, each row is first copied to the new table
// and marked (unless marked already), then changed there; in copied, it is marked, then changed; in
// switched and after, it is written plainly. A whole-row delete becomes a delete of each user family,
// so that it keeps the marker.
func (r *router) apply(ctx context.Context, muts []Mutation) ([]error, error) {
	v, err := r.writeView(ctx)
	if err != nil {
		return nil, err
	}
	switch v.row.state {
	case stateServing:
		return v.old.apply(ctx, muts)
	case stateSwitched:
		return v.new.apply(ctx, muts)
	}
	errs := make([]error, len(muts))
	keys := make([][]byte, 0, len(muts))
	idx := make([]int, 0, len(muts))
	for i, m := range muts {
		if _, _, err := v.new.physical(m.Key); err != nil {
			errs[i] = fmt.Errorf("row %d: %w", i, err)
			continue
		}
		keys, idx = append(keys, m.Key), append(idx, i)
	}
	var markErrs []error
	if v.row.state == stateMigrate {
		markErrs = r.copyRows(ctx, v, keys)
	} else {
		markErrs = r.markRows(ctx, v, keys)
	}
	send := make([]Mutation, 0, len(idx))
	sent := make([]int, 0, len(idx))
	for j, i := range idx {
		if markErrs[j] != nil {
			errs[i] = fmt.Errorf("row %d (key %s): %w", i, r.printKey(muts[i].Key), markErrs[j])
			continue
		}
		send, sent = append(send, keepMark(muts[i], v.row.families)), append(sent, i)
	}
	if len(send) > 0 {
		applyPart(ctx, v.new.apply, send, sent, errs)
	}
	return rowErrors(errs), nil
}

// keepMark turns a whole-row delete into a delete of each user family, leaving the marker.
func keepMark(m Mutation, families []string) Mutation {
	if m.Delete && len(m.Cells) == 0 {
		for _, f := range families {
			m.Cells = append(m.Cells, Cell{Family: f})
		}
	}
	return m
}

// copyRows makes sure each key's row is in the new table and marked: it reads the old rows and writes
// each, with the marker, where the new table has no marker yet (CheckAndMutate), so a row a writer
// has changed there already is never overwritten with its old copy.
func (r *router) copyRows(ctx context.Context, v *routeView, keys [][]byte) []error {
	errs := make([]error, len(keys))
	rows, err := v.old.getMany(ctx, keys, []ReadOption{MaxVersions(max(1, v.row.maxVersions))})
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	var g errgroup.Group
	g.SetLimit(r.c.concurrency)
	for i, row := range rows {
		g.Go(func() error {
			cells := append(row.Cells[:len(row.Cells):len(row.Cells)], markCell())
			_, errs[i] = v.new.checkAndMutate(ctx, markCond, Mutation{Key: keys[i], Cells: cells})
			return nil
		})
	}
	_ = g.Wait()
	return errs
}

// markRows writes the marker on each key's row in the new table (state copied: the rows are there).
func (r *router) markRows(ctx context.Context, v *routeView, keys [][]byte) []error {
	muts := make([]Mutation, len(keys))
	for i, k := range keys {
		muts[i] = Mutation{Key: k, Cells: []Cell{markCell()}}
	}
	rowErrs, err := v.new.apply(ctx, muts)
	errs := make([]error, len(keys))
	for i := range errs {
		if err != nil {
			errs[i] = err
		} else if rowErrs != nil {
			errs[i] = rowErrs[i]
		}
	}
	return errs
}

// prepareAtomic readies one row for a CheckAndMutate or Increment and returns the table to send it
// to and the families of a whole-row delete: the row is copied and marked first while a rebucket is
// under way, as for Apply.
func (r *router) prepareAtomic(ctx context.Context, key []byte) (_ *physTable, families []string, _ error) {
	pt, families, errs, err := r.prepareAtomicMany(ctx, [][]byte{key})
	if err == nil {
		err = errs[0]
	}
	return pt, families, err
}

// prepareAtomicMany is prepareAtomic for many rows at once: errs[i] is keys[i]'s preparation; err
// fails them all (nil errs).
func (r *router) prepareAtomicMany(ctx context.Context, keys [][]byte) (_ *physTable, families []string, errs []error, _ error) {
	v, err := r.writeView(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	switch v.row.state {
	case stateServing:
		return v.old, nil, make([]error, len(keys)), nil
	case stateSwitched:
		return v.new, nil, make([]error, len(keys)), nil
	case stateMigrate:
		errs = r.copyRows(ctx, v, keys)
	default:
		errs = r.markRows(ctx, v, keys)
	}
	return v.new, v.row.families, errs, nil
}

// WithRouteRefresh sets how long a table handle trusts its view of the directory (default
// DefaultRouteRefresh): a rebucket's Fence must be longer.
func WithRouteRefresh(d time.Duration) Option {
	return func(c *Client) { c.routeRefresh = max(time.Millisecond, d) }
}

// routedTable returns the handle of a table served under its own name: one just created, or one the
// directory has no row for.
func (c *Client) routedTable(ctx context.Context, name string, s salting.Salter) (*Table, error) {
	rt, err := newRouter(c, name, dirRow{phys: name, spec: s.Spec()}, s)
	if err != nil {
		return nil, fmt.Errorf("open table %q: %w", name, err)
	}
	return &Table{c: c, name: name, rt: rt}, nil
}

// openRebucketed opens a table that has a directory row; ok is false when it has none.
func (c *Client) openRebucketed(ctx context.Context, name string, s salting.Salter) (_ *Table, ok bool, _ error) {
	row, found, err := readDir(ctx, c.backend, name)
	if err != nil || !found {
		return nil, false, err
	}
	if s != nil && s.Spec() != row.spec && (row.state == stateServing || s.Spec() != row.targetSpec) {
		return nil, true, fmt.Errorf("open table %q: %w: stored %q, given %q", name, ErrSpecMismatch, row.spec, s.Spec())
	}
	rt, err := newRouter(c, name, row, nil)
	if err != nil {
		return nil, true, fmt.Errorf("open table %q: %w", name, err)
	}
	return &Table{c: c, name: name, rt: rt}, true, nil
}

// openRouted opens a table that follows rebuckets, with OpenTable's rules for s, and returns the
// meta of the physical table serving it (a rebucket copies the meta to the new table).
func (c *Client) openRouted(ctx context.Context, name string, s salting.Salter) (*Table, map[string]string, error) {
	t, ok, err := c.openRebucketed(ctx, name, s)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		meta, err := c.backend.TableMeta(ctx, t.rt.view.old.name)
		if err == nil {
			var ks *keys.Schema
			if ks, err = metaKeySchema(meta); err == nil {
				t.setKeySchema(ks)
			}
		}
		if err != nil {
			return nil, nil, fmt.Errorf("open table %q: %w", name, err)
		}
		return t, meta, nil
	}
	meta, s, err := c.openMeta(ctx, name, s)
	if err != nil {
		return nil, nil, err
	}
	if t, err = c.keyedTable(ctx, name, s, meta); err != nil {
		return nil, nil, fmt.Errorf("open table %q: %w", name, err)
	}
	return t, meta, nil
}

// lazyRoutedTable is the handle of a table that follows rebuckets, opened without a read: its
// first call reads the directory (an index table, opened with its main table).
func (c *Client) lazyRoutedTable(name string, s salting.Salter) *Table {
	r := &router{c: c, logical: name, view: &routeView{row: dirRow{phys: name, spec: s.Spec()}, old: &physTable{c: c, name: name, salter: s}}}
	return &Table{c: c, name: name, rt: r}
}

func (r *router) applyOne(ctx context.Context, op string, m Mutation) error {
	v, err := r.writeView(ctx)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, r.printKey(m.Key), err)
	}
	switch v.row.state {
	case stateServing:
		return v.old.applyOne(ctx, op, m)
	case stateSwitched:
		return v.new.applyOne(ctx, op, m)
	}
	rowErrs, err := r.apply(ctx, []Mutation{m})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, r.printKey(m.Key), err)
	}
	return nil
}

// salter is the spec serving the table in the handle's current view.
func (r *router) salter() salting.Salter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.view.row.state == stateSwitched {
		return r.view.new.salter
	}
	return r.view.old.salter
}

// servingTable is the physical table serving t now: t's own, or, once t's table has been
// rebucketed, the one its directory row names (during a rebucket, the old one, which serves until
// the switch; from the switch on, the new one).
func (t *Table) servingTable(ctx context.Context) (string, error) {
	v, err := t.rt.get(ctx)
	if err != nil {
		return "", err
	}
	return v.serving(), nil
}

// serving is the physical table serving the view's directory version.
func (v *routeView) serving() string {
	if v.row.state == stateSwitched {
		return v.row.target
	}
	return v.row.phys
}

// servingMeta is the meta of the physical table serving t now. A rebucket drops the old table a fence
// and a grace after its switch; a read of the old table's meta by a handle whose view of the directory
// is from before the switch, and which comes later than that (a goroutine held up that long), finds the
// table gone: the directory is then read again, and the meta of the table serving now read instead.
func (t *Table) servingMeta(ctx context.Context) (map[string]string, error) {
	phys, err := t.servingTable(ctx)
	if err != nil {
		return nil, err
	}
	meta, err := t.c.backend.TableMeta(ctx, phys)
	if !errors.Is(err, ErrTableNotFound) {
		return meta, err
	}
	v, rerr := t.rt.reread(ctx)
	if rerr != nil || v.serving() == phys {
		return nil, err
	}
	return t.c.backend.TableMeta(ctx, v.serving())
}

// pausedNow reports whether a rebucket's pause step holds t's writes, as of the handle's view of the
// directory: a best-effort write (a reader's index repair) skips instead of waiting for the rebucket
// to go on.
func (t *Table) pausedNow(ctx context.Context) bool {
	v, err := t.rt.get(ctx)
	return err == nil && v.row.state == statePause
}

// setKeySchema sets the logical table's key schema on the router and on its current views' tables;
// views built later get it from build.
func (r *router) setKeySchema(ks *keys.Schema) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keySchema = ks
	for _, t := range []*physTable{r.view.old, r.view.new} {
		if t != nil {
			t.keySchema = ks
		}
	}
}

// printKey is printKey for a key of the logical table.
func (r *router) printKey(k []byte) string { return printKey(r.keySchema, k) }
