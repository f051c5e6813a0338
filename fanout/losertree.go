package fanout

import "errors"

// Internal outcomes of a merge run; never returned to callers.
var (
	errConsumerStopped = errors.New("fanout: consumer stopped")
	errCanceled        = errors.New("fanout: canceled")
)

// cursor is one stream as the merge sees it: the batch it is reading and its position.
type cursor[T any] struct {
	buf  []T // current batch, never empty while !done; buf[pos] is the stream's head
	pos  int
	done bool // the stream ended cleanly: it has no head and loses every comparison
}

// merger is a loser tree over k cursors: one comparison per tree level per element, about half of
// what a binary heap's sift-down needs, and it never moves elements, only stream indices.
type merger[T any] struct {
	cmp  func(a, b T) int
	cur  []cursor[T]
	tree []int // tree[0] is the winner; tree[p] for 1 <= p < k is the loser at internal node p
}

func newMerger[T any](k int, cmp func(a, b T) int) *merger[T] {
	return &merger[T]{cmp: cmp, cur: make([]cursor[T], k), tree: make([]int, k)}
}

// before reports whether stream a's head comes out before stream b's. Ties go to the lower stream
// index, which makes the order total and the merge stable.
func (m *merger[T]) before(a, b int) bool {
	ca, cb := &m.cur[a], &m.cur[b]
	if ca.done {
		return false
	}
	if cb.done {
		return true
	}
	c := m.cmp(ca.buf[ca.pos], cb.buf[cb.pos])
	return c < 0 || (c == 0 && a < b)
}

// build plays the initial tournament; every cursor must hold its first batch or be done. Leaves sit
// at positions k..2k-1 of an implicit heap-shaped tree, which works for any k, not only powers of 2.
func (m *merger[T]) build() {
	k := len(m.cur)
	win := make([]int, 2*k)
	for i := range k {
		win[k+i] = i
	}
	for p := k - 1; p > 0; p-- {
		a, b := win[2*p], win[2*p+1]
		if m.before(b, a) {
			a, b = b, a
		}
		win[p], m.tree[p] = a, b
	}
	m.tree[0] = win[1]
}

// replay re-runs the matches on the path from leaf w to the root after w's head changed. It is
// before() written out, with the challenger's cursor kept at hand: this loop is the merge's cost.
func (m *merger[T]) replay(w int) {
	t, cur, cmp := m.tree, m.cur, m.cmp
	cw := &cur[w]
	for p := (w + len(t)) >> 1; p > 0; p >>= 1 {
		o := t[p]
		co := &cur[o]
		if co.done {
			continue
		}
		if !cw.done {
			if c := cmp(co.buf[co.pos], cw.buf[cw.pos]); c > 0 || (c == 0 && w < o) {
				continue
			}
		}
		t[p], w, cw = w, o, co
	}
	t[0] = w
}

// run yields heads in order until every stream is done or limit elements were yielded (nil), the
// consumer stops (errConsumerStopped), done is closed (errCanceled), or refill fails (its error).
// refill(i) must load the next non-empty batch of stream i into m.cur[i] (pos 0) or mark it done.
func (m *merger[T]) run(yield func(T, error) bool, limit int, done <-chan struct{}, refill func(i int) error) error {
	n := 0
	for {
		w := m.tree[0]
		c := &m.cur[w]
		if c.done {
			return nil // the winner is done only when all are
		}
		// A cheap non-blocking check per element, so cancellation stops the merge at once even
		// while it still has buffered rows to give.
		select {
		case <-done:
			return errCanceled
		default:
		}
		if !yield(c.buf[c.pos], nil) {
			return errConsumerStopped
		}
		if n++; n == limit {
			return nil // checked before refilling, so reaching the limit never waits for I/O
		}
		if c.pos++; c.pos == len(c.buf) {
			if err := refill(w); err != nil {
				return err
			}
		}
		m.replay(w)
	}
}
