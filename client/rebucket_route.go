package client

import (
	"context"
	"fmt"
	"time"

	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// DefaultRouteRefresh is how long a table handle trusts its view of the directory before reading it
// again (WithRouteRefresh). A rebucket waits DefaultRebucketFence, three of these, between steps.
const DefaultRouteRefresh = time.Second

// ErrRebucketing: the call cannot run while the table is being rebucketed (Import, CountByBucket,
// a TimeRange read while rows are being copied); retry once the rebucket has finished.
var ErrRebucketing = route.ErrRebucketing

// ErrRebucketConflict: the directory row changed under a rebucket step (another rebucket process moved
// it); read it again and resume.
var ErrRebucketConflict = route.ErrRebucketConflict

// DirTable is the store table that maps rebucketed logical tables to their physical tables.
const DirTable = route.DirTable

// WithRouteRefresh sets how long a table handle trusts its view of the directory and of the
// definitions of a table with indexes (default DefaultRouteRefresh): a rebucket's Fence, an
// Exclusive's and an AddIndex's must be longer. A handle of a table without indexes reads the
// definitions every plainRefreshFactor (10) such intervals: what a first index's AddIndex waits.
func WithRouteRefresh(d time.Duration) Option {
	return func(c *Client) { c.core.RouteRefresh = max(time.Millisecond, d) }
}

// routedTable returns the handle of a table served under its own name: one just created, or one the
// directory has no row for.
func (c *Client) routedTable(name string, s salting.Salter) (*Table, error) {
	rt, err := route.ServedAs(c.core, name, s)
	if err != nil {
		return nil, fmt.Errorf("open table %q: %w", name, err)
	}
	return &Table{c: c, name: name, rt: rt}, nil
}

// openRebucketed opens a table that has a directory row; ok is false when it has none.
func (c *Client) openRebucketed(ctx context.Context, name string, s salting.Salter) (_ *Table, ok bool, _ error) {
	row, found, err := route.ReadDir(ctx, c.core.Backend, name)
	if err != nil || !found {
		return nil, false, err
	}
	if s != nil && s.Spec() != salting.CanonicalSpec(row.Spec()) && (row.Serving() || s.Spec() != salting.CanonicalSpec(row.TargetSpec())) {
		return nil, true, fmt.Errorf("open table %q: %w: stored %q, given %q", name, ErrSpecMismatch, row.Spec(), s.Spec())
	}
	rt, err := route.NewRouter(c.core, name, row, nil)
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
		meta, err := c.core.Backend.TableMeta(ctx, t.rt.ViewTable())
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
	return &Table{c: c, name: name, rt: route.Lazy(c.core, name, s)}
}
