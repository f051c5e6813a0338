package local

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.etcd.io/bbolt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// Apply applies muts in one write transaction (shared with concurrent calls, see the package doc),
// which stamps their cells of timestamp 0 (see stampClock). Invalid mutations are reported in
// rowErrs and the others written. Once the mutations are handed to the transaction, Apply waits for
// its commit even if ctx ends, so that err always means "nothing written".
func (s *Backend) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: apply %q: %w", table, err)
	}
	if err := s.usable(true); err != nil {
		return nil, err
	}
	ti, err := s.table(table)
	if err != nil {
		return nil, err
	}
	if len(muts) == 0 {
		return nil, nil
	}
	versions := driverkit.Versions(ti.MaxVersions)
	req := &writeReq{table: table, bucket: ti.bucket, families: ti.families, versions: versions, muts: muts,
		changes: make([]change, len(muts)), order: make([]int, 0, len(muts))}
	now := time.Now().UnixMilli() // a guess: the transaction gives the stamp
	for i := range muts {
		c, err := prepare(ti.families, versions, &muts[i], now, &req.arena)
		if err != nil {
			req.fail(i, fmt.Errorf("local: apply %q: %w", table, err))
			continue
		}
		req.changes[i] = c
		req.order = append(req.order, i)
	}
	if len(req.order) == 0 {
		return req.rowErrs, nil
	}
	// Rows in key order: cursor seeks touch neighbouring pages. The sort is stable so that mutations
	// of one row apply in the order given.
	slices.SortStableFunc(req.order, func(a, b int) int {
		return bytes.Compare(req.changes[a].key, req.changes[b].key)
	})
	if err := s.gc.submit(s.db, req); err != nil {
		return nil, fmt.Errorf("local: apply %q: %w", table, dbErr(err))
	}
	if req.err != nil {
		return nil, req.err
	}
	return req.rowErrs, nil
}

// writeReq is one Apply call's share of a write transaction.
type writeReq struct {
	table    string
	bucket   []byte
	families map[string]bool
	versions int // kept per column
	muts     []backends.Mutation
	changes  []change // changes[i] prepared from muts[i]
	arena    arena    // the changes' memory; the transaction's leader uses it to restamp
	order    []int    // indexes of the valid changes, by key
	rowErrs  []error
	err      error // the whole call failed (table gone), nothing of it written

	done     chan struct{} // closed when finished, or when this request is to lead the next group
	finished bool
}

func (r *writeReq) fail(i int, err error) {
	if r.rowErrs == nil {
		r.rowErrs = make([]error, len(r.changes))
	}
	r.rowErrs[i] = err
}

// write applies the request inside tx. Its cells of timestamp 0 keep the stamp prepare guessed
// unless a stamp given before this transaction (floor) is above it; those get stamp, the
// transaction's. It returns the highest guess it kept. Errors stay in the request: one request's
// failure must not roll back the others sharing the transaction.
func (r *writeReq) write(tx *bbolt.Tx, fill float64, floor, stamp int64) (kept int64) {
	b := tx.Bucket(r.bucket)
	if b == nil {
		r.err = fmt.Errorf("local: apply %q: %w", r.table, backends.ErrTableNotFound)
		return 0
	}
	b.FillPercent = fill
	var scratch []cellRef
	// One cursor for the lookups: a fresh one (as Bucket.Get makes) allocates its stack every time.
	cur := b.Cursor()
	for _, i := range r.order {
		c := &r.changes[i]
		if c.stamped && c.now >= floor {
			kept = max(kept, c.now)
		} else if err := restamp(c, &r.muts[i], r.families, r.versions, stamp, &r.arena); err != nil {
			r.fail(i, fmt.Errorf("local: apply %q: %w", r.table, err))
			continue
		}
		k, old := cur.Seek(c.key)
		if !bytes.Equal(k, c.key) {
			old = nil
		}
		var err error
		scratch, err = writeChange(b, c, old, r.versions, scratch)
		if err != nil {
			r.fail(i, fmt.Errorf("local: apply %q: %w", r.table, err))
		}
	}
	return kept
}

// writeChange applies one prepared change to the row old (nil: no row) in bucket b. scratch is reused
// for decoding.
func writeChange(b *bbolt.Bucket, c *change, old []byte, versions int, scratch []cellRef) ([]cellRef, error) {
	var err error
	switch {
	case c.del && len(c.cells) == 0:
		if old != nil {
			err = b.Delete(c.key)
		}
	case c.del:
		if old == nil {
			return scratch, nil
		}
		var enc []byte
		var left, removed bool
		enc, left, removed, scratch, err = mergeDelete(old, c, scratch)
		switch {
		case err != nil || !removed:
		case left:
			err = b.Put(c.key, enc)
		default:
			err = b.Delete(c.key)
		}
	case old == nil:
		err = b.Put(c.key, c.enc)
	default:
		var enc []byte
		enc, scratch, err = mergePut(old, c, versions, scratch)
		if err == nil && enc != nil {
			err = b.Put(c.key, enc)
		}
	}
	return scratch, err
}

// groupCommit runs concurrent Apply calls in shared write transactions. The first caller leads: it
// runs a transaction for every request queued so far, its own included. Requests that arrive during
// that transaction queue up, and when it commits the leader hands the lead to the first of them. A
// lone writer thus commits at once, and concurrent writers share commits (and fsyncs) instead of
// queueing for bbolt's writer lock one by one.
type groupCommit struct {
	fill    float64 // bbolt FillPercent for the data buckets
	clock   *stampClock
	mu      sync.Mutex
	queue   []*writeReq
	leading bool
}

// maxGroupRows bounds the rows of one shared transaction, so its dirty pages stay modest.
const maxGroupRows = 16384

// submit runs req in a write transaction and returns when that has committed or failed.
func (g *groupCommit) submit(db *bbolt.DB, req *writeReq) error {
	req.done = make(chan struct{})
	g.mu.Lock()
	g.queue = append(g.queue, req)
	if g.leading {
		g.mu.Unlock()
		<-req.done
		if req.finished {
			return req.commitErr()
		}
		// Handed the lead: req is at the head of the queue.
	} else {
		// Nobody leads, so the queue was empty: req is its head.
		g.leading = true
		g.mu.Unlock()
	}
	g.lead(db, req)
	return req.commitErr()
}

// lead runs one group, headed by self, then passes the lead on or gives it up. Every request's done
// is closed once: when another leader finished it, or to hand it the lead.
func (g *groupCommit) lead(db *bbolt.DB, self *writeReq) {
	g.mu.Lock()
	n, rows := 0, 0
	for n < len(g.queue) && (n == 0 || rows+len(g.queue[n].order) <= maxGroupRows) {
		rows += len(g.queue[n].order)
		n++
	}
	group := slices.Clone(g.queue[:n])
	g.queue = slices.Delete(g.queue, 0, n)
	g.mu.Unlock()

	err := db.Update(func(tx *bbolt.Tx) error {
		// The group's requests are concurrent calls, none has returned, so any order of them is one
		// they may observe: each may keep the stamp it guessed unless an earlier transaction gave a
		// higher one (see stampClock); the rest share the group's.
		floor := g.clock.last
		stamp := g.clock.next()
		for _, r := range group {
			g.clock.last = max(g.clock.last, r.write(tx, g.fill, floor, stamp))
		}
		return nil
	})
	for _, r := range group {
		if err != nil {
			r.rowErrs, r.err = nil, errCommit{err}
		}
		r.finished = true
		if r != self {
			close(r.done)
		}
	}

	g.mu.Lock()
	if len(g.queue) == 0 {
		g.leading = false
		g.mu.Unlock()
		return
	}
	next := g.queue[0]
	g.mu.Unlock()
	close(next.done) // next.finished is false: next leads
}

// errCommit marks a transaction that failed as a whole.
type errCommit struct{ err error }

func (e errCommit) Error() string { return e.err.Error() }
func (e errCommit) Unwrap() error { return e.err }

func (r *writeReq) commitErr() error {
	if ce, ok := r.err.(errCommit); ok {
		return ce.err
	}
	return nil
}

// stampClock stamps the cells written with timestamp 0, as HBase does under its row lock: inside the
// write transaction that applies them, never below a stamp it gave before (the wall clock may step
// back). bbolt runs one write transaction at a time, and next is called only inside one, so a write
// that starts after another has committed gets a stamp at least as high, and replaces it. A stamp
// taken before the transaction (Apply's guess, the time it prepared the write) is kept only when no
// earlier transaction gave a higher one: a write that starts after another has committed guesses
// after that commit, so it still replaces it, and the store need not encode the row again inside
// the transaction. Keeping any guess would let a write stamped T wait behind one stamped T+1 and be
// applied after it, acknowledged yet hidden under the older write's value.
type stampClock struct {
	last int64 // the last stamp given; used only inside write transactions
}

// next returns the stamp for the current write transaction.
func (c *stampClock) next() int64 {
	c.last = max(c.last, time.Now().UnixMilli())
	return c.last
}
