package client

import (
	"context"
	"fmt"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/salting"
)

// DefaultRebucketFence is how long a rebucket waits after each step before relying on it: longer than
// any handle trusts an old directory view (DefaultRouteRefresh) plus the time a write takes to land.
const DefaultRebucketFence = 3 * DefaultRouteRefresh

// ErrRebucketInProgress: a rebucket to another spec is under way; finish it first.
var ErrRebucketInProgress = route.ErrRebucketInProgress

// RebucketOptions configure Table.Rebucket.
type RebucketOptions struct {
	// Families of the new table; default [DefaultFamily]. They must be the table's: a whole-row
	// delete during the rebucket deletes these families.
	Families []string
	// MaxVersions the new table keeps (and the copy moves); 0 means 1.
	MaxVersions int
	// FamilyOptions of the new table, as in TableConfig.
	FamilyOptions map[string]FamilyOptions
	// Regions of the new table, as in TableConfig; 0 means one per bucket.
	Regions int
	// Fence is how long each step waits for every handle to have seen it; it must exceed every
	// client's WithRouteRefresh plus the longest write. Default DefaultRebucketFence.
	Fence time.Duration
	// Grace is how long the old table is kept after the switch; default Fence; negative keeps it.
	Grace time.Duration
	// Workers bound the old buckets copied at once; default the client's concurrency.
	Workers int
	// Progress, when set, is called after every step and every copied bucket.
	Progress func(RebucketProgress)
}

// RebucketProgress reports where a rebucket is.
type RebucketProgress struct {
	State       string // pause, migrate, copied, switched, or "" once the new table serves
	Table       string // the physical table serving (the old one until the switch)
	Spec        string // its spec, as Salter.Spec spells it (the stored string may be an earlier brine's)
	Target      string // the new physical table, during a rebucket
	TargetSpec  string // its spec, as Spec
	Buckets     int    // old buckets to copy
	BucketsDone int
	RowsCopied  int64 // rows copied by this call (a resumed call counts from 0)
}

// Rebucket moves the live table to a new salting spec without stopping its writers and readers, and
// returns once the new table serves it; the logical name stays, the physical table behind it changes
// (recorded in the store's DirTable). A Rebucket that failed or was killed resumes where it stopped
// when called again with the same spec; a call with another spec fails with ErrRebucketInProgress.
// Every handle of the table, in this process or another, follows it, provided its WithRouteRefresh is
// shorter than opts.Fence.
//
// The steps, each a CheckAndMutate of the table's directory row on its version, each followed by a
// wait of Fence so that no handle still acts on the step before:
//
//  1. pause: the new physical table is created; writers wait, readers read the old table, each after
//     reading the directory again (the next step lets writers move rows at once). Without the pause,
//     a writer that had not seen step 2 could write the old table after a row was moved.
//  2. migrate: a writer first copies the row it changes from the old table to the new one with a
//     marker column, by a CheckAndMutate that applies only where the new row has no marker, then
//     changes the new row (a whole-row delete deletes the user families, keeping the marker). The
//     old table is no longer written. The copy scans every old bucket in parallel and writes each row
//     by the same CheckAndMutate, without the marker, so it never overwrites a row a writer changed,
//     and a repeated copy (after a crash) writes the same cells again. A bucket copied is recorded;
//     a resumed copy skips it. Reads take a key's new row when there is one (copied or marked) and
//     the old row otherwise.
//  3. copied: every row is in the new table. Writers only mark the rows they change, so that a
//     writer still in step 2 cannot copy an old row over a change; reads read the new table.
//  4. switched: writers write the new table plainly (no writer of step 2 is left to copy over them);
//     then every marker is deleted, and with it every row that held only a marker (deleted rows).
//  5. serving: the directory names the new table and spec; after Grace the old table is dropped.
//
// Reads never show the marker nor a row holding only it. During step 2, reads with a TimeRange, Import
// and CountByBucket fail with ErrRebucketing; Import and CountByBucket also in steps 1 and 3.
//
// On a table with indexes its writers keep them while it moves (opts.Families must name every
// family of the table: see indexedTable.Rebucket); an index's own table moves with RebucketIndex.
func (t *Table) Rebucket(ctx context.Context, to salting.Salter, opts RebucketOptions) error {
	if err := t.c.refuseIndexTable(ctx, t.name); err != nil {
		return err
	}
	it, err := t.indexed(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("rebucket %s: %w", t.name, err)
	case it != nil:
		return it.Rebucket(ctx, to, opts)
	}
	return t.rebucket(ctx, to, opts)
}

// rebucket is Rebucket on any routed table: a plain one, the main table of one with indexes, or an
// index table.
func (t *Table) rebucket(ctx context.Context, to salting.Salter, opts RebucketOptions) error {
	if to == nil {
		return fmt.Errorf("rebucket %s: %w: no target spec", t.name, backends.ErrInvalidArgument)
	}
	// Checked before the rebucket starts: a spec that cannot place the keys would fail every row, and
	// one whose table cannot be scanned would leave a table no copy or verify can read.
	if err := salting.CheckSchema(to, t.keySchema); err != nil {
		return fmt.Errorf("rebucket %s: %w: %w", t.name, backends.ErrInvalidArgument, err)
	}
	if err := salting.CheckScannable(to); err != nil {
		return fmt.Errorf("rebucket %s: %w: %w", t.name, backends.ErrInvalidArgument, err)
	}
	o := route.RebucketOptions{Families: opts.Families, MaxVersions: opts.MaxVersions, FamilyOptions: opts.FamilyOptions,
		Regions: opts.Regions, Fence: opts.Fence, Grace: opts.Grace, Workers: opts.Workers}
	if len(o.Families) == 0 {
		o.Families = []string{DefaultFamily}
	}
	if o.Fence <= 0 {
		o.Fence = DefaultRebucketFence
	}
	if o.Grace == 0 {
		o.Grace = o.Fence
	}
	if o.Workers <= 0 {
		o.Workers = t.c.core.Concurrency
	}
	if opts.Progress != nil {
		o.Progress = func(p route.Progress) { opts.Progress(RebucketProgress(p)) }
	}
	return route.Rebucket(ctx, t.rt, to, o)
}

// RebucketStatus reports the rebucket state of a logical table: a zero State and no Target when
// none is under way (Table and Spec then name what serves it; both empty for a table never
// rebucketed).
func (c *Client) RebucketStatus(ctx context.Context, name string) (RebucketProgress, error) {
	p, err := route.Status(ctx, c.core.Backend, name)
	return RebucketProgress(p), err
}
