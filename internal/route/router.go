package route

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/wait"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The marker: during a rebucket, every row a writer changes in the new table first gets this column
// (in a family of its own, so that a whole-row delete keeps it). A marked row is the truth for its key;
// the copy writes only rows without it.
const (
	markFamily    = "brine_m"
	markQualifier = "m"
)

var markCond = backends.Condition{Family: markFamily, Qualifier: markQualifier}

func markCell() backends.Cell {
	return backends.Cell{Family: markFamily, Qualifier: markQualifier, Value: []byte{'1'}}
}

// Router follows a logical table through rebuckets: it holds the handle's view of the directory row
// and reads it again once it is older than the refresh interval, before the call that needs it.
type Router struct {
	core      *Core
	logical   string
	keySchema *keys.Schema // the logical table's, given to every view's tables (setKeySchema)

	mu   sync.Mutex
	view *routeView
	at   time.Time // when view's directory read was sent
}

// routeView is one directory version turned into tables.
type routeView struct {
	row      Dir
	old, new *Phys // old serves while state is "" or pause; new is target during a rebucket
}

// NewRouter is the router of table logical, row its directory row (s: its salter, when the caller
// has it already).
func NewRouter(core *Core, logical string, row Dir, s salting.Salter) (*Router, error) {
	r := &Router{core: core, logical: logical}
	v, err := r.build(row, s)
	if err != nil {
		return nil, err
	}
	r.view, r.at = v, time.Now()
	return r, nil
}

func (r *Router) build(row Dir, s salting.Salter) (*routeView, error) {
	if s == nil || s.Spec() != salting.CanonicalSpec(row.spec) {
		var err error
		if s, err = salting.ParseStoredSpec(row.spec); err != nil {
			return nil, fmt.Errorf("table %s: directory spec: %w", r.logical, err)
		}
	}
	v := &routeView{row: row, old: &Phys{core: r.core, Name: row.phys, Salter: s, keySchema: r.keySchema}}
	if row.state != stateServing {
		ns, err := salting.ParseStoredSpec(row.targetSpec)
		if err != nil {
			return nil, fmt.Errorf("table %s: directory target spec: %w", r.logical, err)
		}
		v.new = &Phys{core: r.core, Name: row.target, Salter: ns, keySchema: r.keySchema}
	}
	return v, nil
}

// get returns a view read less than the refresh interval ago.
func (r *Router) get(ctx context.Context) (*routeView, error) {
	return r.readSince(ctx, time.Now().Add(-r.core.RouteRefresh))
}

// reread is get with the directory read again whatever the view's age.
func (r *Router) reread(ctx context.Context) (*routeView, error) {
	return r.readSince(ctx, time.Now())
}

// readView is get for a read. A view in pause is trusted only if the directory read behind it was
// sent after the call began: the next step, migrate, lets writers change rows in the new table at
// once, and a handle that read the directory just before it would read the old table for up to a
// refresh interval after rows moved (a reader's index repair then took an entry a write had just
// verified for a stale one, and deleted it). Concurrent reads share one directory read.
func (r *Router) readView(ctx context.Context) (*routeView, error) {
	begun := time.Now()
	v, err := r.get(ctx)
	if err != nil || v.row.state != statePause {
		return v, err
	}
	return r.readSince(ctx, begun)
}

// readSince returns the view of a directory read sent at or after since, reading it again if the
// handle's is older.
func (r *Router) readSince(ctx context.Context, since time.Time) (*routeView, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.Before(since) {
		return r.view, nil
	}
	sent := time.Now()
	row, found, err := ReadDir(ctx, r.core.Backend, r.logical)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", r.logical, err)
	}
	if found && row.version != r.view.row.version {
		v, err := r.build(row, r.view.old.Salter)
		if err != nil {
			return nil, err
		}
		r.view = v
	}
	r.at = sent
	return r.view, nil
}

// writeView is get, waiting while the rebucket holds writes (state pause).
func (r *Router) writeView(ctx context.Context) (*routeView, error) {
	for {
		v, err := r.get(ctx)
		if err != nil || v.row.state != statePause {
			return v, err
		}
		if err := wait.Sleep(ctx, r.core.RouteRefresh/4); err != nil {
			return nil, err
		}
	}
}

// Plain returns the table a call with no rebucket logic of its own may use now, or ErrRebucketing.
func (r *Router) Plain(ctx context.Context, op string, allowPause bool) (*Phys, error) {
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

// Apply writes muts through the view's rules: in migrate, each row is first copied to the new table
// and marked (unless marked already), then changed there; in copied, it is marked, then changed; in
// switched and after, it is written plainly. A whole-row delete becomes a delete of each user family,
// so that it keeps the marker.
func (r *Router) Apply(ctx context.Context, muts []backends.Mutation) ([]error, error) {
	v, err := r.writeView(ctx)
	if err != nil {
		return nil, err
	}
	switch v.row.state {
	case stateServing:
		return v.old.Apply(ctx, muts)
	case stateSwitched:
		return v.new.Apply(ctx, muts)
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
	send := make([]backends.Mutation, 0, len(idx))
	sent := make([]int, 0, len(idx))
	for j, i := range idx {
		if markErrs[j] != nil {
			errs[i] = fmt.Errorf("row %d (key %s): %w", i, r.PrintKey(muts[i].Key), markErrs[j])
			continue
		}
		send, sent = append(send, keepMark(muts[i], v.row.families)), append(sent, i)
	}
	if len(send) > 0 {
		ApplyPart(ctx, v.new.Apply, send, sent, errs)
	}
	return RowErrors(errs), nil
}

// keepMark turns a whole-row delete into a delete of each user family, leaving the marker.
func keepMark(m backends.Mutation, families []string) backends.Mutation {
	if m.Delete && len(m.Cells) == 0 {
		for _, f := range families {
			m.Cells = append(m.Cells, backends.Cell{Family: f})
		}
	}
	return m
}

// copyRows makes sure each key's row is in the new table and marked: it reads the old rows and writes
// each, with the marker, where the new table has no marker yet (CheckAndMutate), so a row a writer
// has changed there already is never overwritten with its old copy.
func (r *Router) copyRows(ctx context.Context, v *routeView, keys [][]byte) []error {
	errs := make([]error, len(keys))
	rows, err := v.old.GetMany(ctx, keys, ReadConfig{Read: backends.ReadOptions{MaxVersions: max(1, v.row.maxVersions)}})
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	var g errgroup.Group
	g.SetLimit(r.core.Concurrency)
	for i, row := range rows {
		g.Go(func() error {
			cells := append(row.Cells[:len(row.Cells):len(row.Cells)], markCell())
			_, errs[i] = v.new.CheckAndMutate(ctx, markCond, backends.Mutation{Key: keys[i], Cells: cells})
			return nil
		})
	}
	_ = g.Wait()
	return errs
}

// markRows writes the marker on each key's row in the new table (state copied: the rows are there).
func (r *Router) markRows(ctx context.Context, v *routeView, keys [][]byte) []error {
	muts := make([]backends.Mutation, len(keys))
	for i, k := range keys {
		muts[i] = backends.Mutation{Key: k, Cells: []backends.Cell{markCell()}}
	}
	rowErrs, err := v.new.Apply(ctx, muts)
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
func (r *Router) prepareAtomic(ctx context.Context, key []byte) (_ *Phys, families []string, _ error) {
	pt, families, errs, err := r.prepareAtomicMany(ctx, [][]byte{key})
	if err == nil {
		err = errs[0]
	}
	return pt, families, err
}

// prepareAtomicMany is prepareAtomic for many rows at once: errs[i] is keys[i]'s preparation; err
// fails them all (nil errs).
func (r *Router) prepareAtomicMany(ctx context.Context, keys [][]byte) (_ *Phys, families []string, errs []error, _ error) {
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

// ApplyOne writes one mutation through the route, op naming it ("put", "delete").
func (r *Router) ApplyOne(ctx context.Context, op string, m backends.Mutation) error {
	v, err := r.writeView(ctx)
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, r.PrintKey(m.Key), err)
	}
	switch v.row.state {
	case stateServing:
		return v.old.ApplyOne(ctx, op, m)
	case stateSwitched:
		return v.new.ApplyOne(ctx, op, m)
	}
	rowErrs, err := r.Apply(ctx, []backends.Mutation{m})
	if err == nil && rowErrs != nil {
		err = rowErrs[0]
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, r.PrintKey(m.Key), err)
	}
	return nil
}

// Salter is the spec serving the table in the handle's current view.
func (r *Router) Salter() salting.Salter {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.view.row.state == stateSwitched {
		return r.view.new.Salter
	}
	return r.view.old.Salter
}

// serving is the physical table serving the view's directory version.
func (v *routeView) serving() string {
	if v.row.state == stateSwitched {
		return v.row.target
	}
	return v.row.phys
}

// SetKeySchema sets the logical table's key schema on the router and on its current views' tables;
// views built later get it from build.
func (r *Router) SetKeySchema(ks *keys.Schema) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.keySchema = ks
	for _, t := range []*Phys{r.view.old, r.view.new} {
		if t != nil {
			t.keySchema = ks
		}
	}
}

// PrintKey is the package PrintKey for a key of the logical table.
func (r *Router) PrintKey(k []byte) string { return PrintKey(r.keySchema, k) }
