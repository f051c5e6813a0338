package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/internal/wait"
)

// The exclusive bulk mode. The per-row protocol keeps the indexes exact while other clients write,
// at the cost of several round trips per batch. Where the writers can be stopped (a first load, a
// backfill, a repair), Exclusive records a table-wide write fence in the table's meta, which every
// Table handle reads within its refresh interval and obeys; under it, the holder writes main
// rows and index entries as plain batched writes, as Phoenix's bulk load writes index rows directly.

// Meta keys of the fence (indexproto.Fence).
const (
	metaFence        = indexproto.FenceKey
	metaFenceIndexes = indexproto.FenceIndexesKey
)

// DefaultLease is how long an exclusive fence holds unless its holder renews it (ExclusiveOptions).
const DefaultLease = time.Minute

var (
	// ErrFenced: a write to a table an exclusive bulk job holds (Table.Exclusive). It is
	// retryable: the fence ends with the job, or when its lease runs out.
	ErrFenced = errors.New("brine: table is fenced by an exclusive bulk job")
	// ErrFenceLost: the holder of an exclusive fence no longer holds it (its lease ran out and
	// another took it over); nothing more is written under it.
	ErrFenceLost = errors.New("brine: exclusive fence lost")
)

// fencedError is what a fenced write, or a second Exclusive, fails with.
func fencedError(f indexproto.Fence, table string) error {
	return driverkit.Retryable(fmt.Errorf("table %s: %w (held by %s until %s)", table, ErrFenced, f.Holder, f.Expires.UTC().Format(time.RFC3339)))
}

// writable is current, refused while an exclusive fence holds the table.
func (it *indexedTable) writable(ctx context.Context) (*indexedTable, error) {
	cur, err := it.current(ctx)
	if err != nil {
		return nil, err
	}
	if cur.fence.Live() {
		return nil, fencedError(cur.fence, it.Name())
	}
	return cur, nil
}

// ExclusiveOptions configure Table.Exclusive.
type ExclusiveOptions struct {
	// Lease is how long the fence holds unless renewed (default DefaultLease); the holder renews it
	// every third of it. A holder killed mid-job leaves the table fenced until the lease runs out.
	Lease time.Duration
	// Fence is how long Exclusive waits, once the fence is recorded, for every other handle to read
	// it and its writes in flight to end (default 3 × WithRouteRefresh).
	Fence time.Duration
	// TakeOver takes the fence from another holder, which must be dead: how a killed exclusive job
	// is resumed before its lease runs out. Release then repairs what that holder left.
	TakeOver bool
	// Holder names the holder in the errors of fenced writers (default host:pid).
	Holder string
	// EntryBuffer is how many bytes of index entries an Import holds to write them sorted by key
	// (default DefaultEntryBuffer). It holds them encoded, in one byte slice per index, and writes
	// them 32,768 at a time. An Import of more writes several sorted runs: on the embedded store, a
	// B-tree, each run rewrites the index pages it touches, so larger runs cost less per entry.
	EntryBuffer int
}

// ExclusiveTable is a table with indexes while its other writers are fenced (Table.Exclusive): its
// writes are plain batched writes of main rows and index entries, with no compare-and-set. Its
// indexes are building, so queries by them fail with ErrIndexBuilding, until Release makes them
// exact and active. Reads of the main table work throughout, from any handle.
type ExclusiveTable struct {
	it    *indexedTable // as of the fence: the indexes kept are its
	fence indexproto.Fence
	moved []string // the indexes the fence moved to building
	skip  []string // indexes whose build failed (AddIndex): left building, for DropIndex
	// empty: no row when the fence was taken, and no Import begun since: the next Import reads no
	// old row for its entries (the one after it must read the rows this one writes).
	empty atomic.Bool
	// importing counts the Imports under way: two at once may cross on one key, unseen.
	importing atomic.Int32
	claims    indexproto.Claims // unique entries this holder wrote, against duplicates within its own writes
	entries   entryBuffer       // entries whose rows are written, to be written sorted
	// dirty: entries may stand that their rows do not back (a failed batch, a duplicate key, a
	// holder taken over): Release repairs the indexes before it makes them active.
	dirty atomic.Bool

	stopRenew context.CancelFunc
	renewed   chan struct{} // closed when the renewal loop has ended
	mu        sync.Mutex
	lost      error // ErrFenceLost, once the renewal found the fence gone
}

// Exclusive fences every other writer of the table: it records the fence in the table's meta by
// compare-and-set, moves the active indexes to building, and waits opts.Fence for every handle to see
// it (their writes then fail with ErrFenced, retryable). A live fence of another holder fails it
// with ErrFenced, unless opts.TakeOver. An index being built by AddIndex, or dropped, refuses it.
// The holder must Release the fence; until then it renews its lease.
func (it *indexedTable) Exclusive(ctx context.Context, opts ExclusiveOptions) (*ExclusiveTable, error) {
	c := it.t.c
	if opts.Lease <= 0 {
		opts.Lease = DefaultLease
	}
	if opts.Fence <= 0 {
		opts.Fence = 3 * c.core.RouteRefresh
	}
	if opts.Holder == "" {
		host, _ := os.Hostname()
		opts.Holder = host + ":" + strconv.Itoa(os.Getpid())
	}
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	f := indexproto.Fence{Token: hex.EncodeToString(tok[:]), Expires: time.Now().Add(opts.Lease), Holder: strings.ReplaceAll(opts.Holder, " ", "_")}
	x := &ExclusiveTable{fence: f, entries: entryBuffer{limit: cmp.Or(max(opts.EntryBuffer, 0), DefaultEntryBuffer)}}
	fail := func(err error) (*ExclusiveTable, error) {
		return nil, fmt.Errorf("exclusive %s: %w", it.Name(), err)
	}
	err := route.RewriteMeta(ctx, c.core.Backend, it.t.name, func(meta map[string]string) (bool, error) {
		old, held := indexproto.ParseFence(meta)
		if held && old.Token == f.Token {
			// Our own write, applied though its reply was lost: the store's retry met it.
			x.moved = strings.Split(meta[metaFenceIndexes], ",")
			return false, nil
		}
		if held && old.Live() && !opts.TakeOver {
			return false, fencedError(old, it.Name())
		}
		x.dirty.Store(held) // a holder before us, dead or taken over, may have left entries behind
		x.moved = nil
		var prev []string // a dead holder's: still building, and ours to make active
		if held {
			prev = strings.Split(meta[metaFenceIndexes], ",")
		}
		for k := range meta {
			name, ok := strings.CutPrefix(k, metaIndexPrefix)
			if !ok {
				continue
			}
			switch st := indexState(meta, name); {
			case st == IndexActive:
				meta[metaIndexStatePrefix+name] = string(IndexBuilding)
			case st == IndexBuilding && slices.Contains(prev, name):
			default:
				return false, fmt.Errorf("%w: index %q is %s: let that finish first", backends.ErrInvalidArgument, name, st)
			}
			x.moved = append(x.moved, name)
		}
		if len(x.moved) == 0 {
			return false, fmt.Errorf("%w: the table has no index: a plain Import writes at bulk speed already", backends.ErrInvalidArgument)
		}
		slices.Sort(x.moved)
		meta[metaFence], meta[metaFenceIndexes] = f.String(), strings.Join(x.moved, ",")
		return true, nil
	})
	if err != nil {
		return fail(err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	x.stopRenew, x.renewed = cancel, make(chan struct{})
	go x.renew(rctx, c, it.t.name, opts.Lease)
	undo := func(err error) (*ExclusiveTable, error) {
		// The fence stays recorded (its lease runs out): the indexes it moved may lack entries now.
		x.stopRenew()
		<-x.renewed
		return fail(err)
	}
	if err := wait.Sleep(ctx, opts.Fence); err != nil {
		return undo(err)
	}
	if x.it, err = it.refresh(ctx, true); err != nil {
		return undo(err)
	}
	empty, err := it.t.isEmpty(ctx)
	if err != nil {
		return undo(err)
	}
	x.empty.Store(empty)
	c.core.Logger.InfoContext(ctx, "brine: exclusive fence taken", "table", it.Name(), "holder", f.Holder, "indexes", x.moved, "empty", empty)
	return x, nil
}

// renew extends the fence's lease every third of it, until stopped or the fence is lost.
func (x *ExclusiveTable) renew(ctx context.Context, c *Client, table string, lease time.Duration) {
	defer close(x.renewed)
	tick := time.NewTicker(lease / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := route.RewriteMeta(ctx, c.core.Backend, table, func(meta map[string]string) (bool, error) {
			f, ok := indexproto.ParseFence(meta)
			if !ok || f.Token != x.fence.Token {
				return false, fmt.Errorf("table %s: %w", table, ErrFenceLost)
			}
			f.Expires = time.Now().Add(lease)
			meta[metaFence] = f.String()
			return true, nil
		})
		switch {
		case errors.Is(err, ErrFenceLost):
			x.setLost(err)
			return
		case err != nil:
			c.core.Logger.WarnContext(ctx, "brine: exclusive fence not renewed; trying again", "table", table, "err", err)
		}
	}
}

func (x *ExclusiveTable) setLost(err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.lost = err
}

// lostErr is ErrFenceLost once the fence is no longer x's.
func (x *ExclusiveTable) lostErr() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lost
}

// Name is the table's name.
func (x *ExclusiveTable) Name() string { return x.it.Name() }

// Release ends the fence: when entries may stand that the rows do not back (a failed batch, a key
// given twice, a holder taken over), it first repairs the indexes, under the fence, so that each
// matches the main table exactly; then it makes the indexes active again and drops the fence. It
// stops renewing the lease whatever the outcome: on an error the fence stays until its lease runs
// out, and Release again before that, or an Exclusive with TakeOver after, finishes the job (until
// then the indexes stay building).
func (x *ExclusiveTable) Release(ctx context.Context) error {
	defer func() {
		x.stopRenew()
		<-x.renewed
	}()
	if err := x.lostErr(); err != nil {
		return err
	}
	x.flush(ctx) // nothing, unless an Import is still running
	if x.dirty.Load() {
		if err := x.repair(ctx); err != nil {
			return fmt.Errorf("release %s: %w", x.Name(), err)
		}
	}
	c := x.it.t.c
	err := route.RewriteMeta(ctx, c.core.Backend, x.it.t.name, func(meta map[string]string) (bool, error) {
		if f, ok := indexproto.ParseFence(meta); !ok || f.Token != x.fence.Token {
			return false, fmt.Errorf("table %s: %w", x.Name(), ErrFenceLost)
		}
		for _, name := range strings.Split(meta[metaFenceIndexes], ",") {
			if indexState(meta, name) == IndexBuilding {
				delete(meta, metaIndexStatePrefix+name)
			}
		}
		delete(meta, metaFence)
		delete(meta, metaFenceIndexes)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("release %s: %w", x.Name(), err)
	}
	c.core.Logger.InfoContext(ctx, "brine: exclusive fence released", "table", x.Name(), "repaired", x.dirty.Load())
	return nil
}

// isEmpty reports whether the table holds no row.
func (t *Table) isEmpty(ctx context.Context) (bool, error) {
	for _, err := range t.Scan(ctx, Range{}, Limit(1)) {
		return false, err
	}
	return true, nil
}
