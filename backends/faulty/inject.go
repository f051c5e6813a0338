package faulty

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/wait"
)

// roll decides whether rule i fires for this call and returns a second random number for the
// call's own use (a scan's cut point). It reserves a firing against Max when it says yes.
func (f *Backend) roll(i int, op Op, table string, key []byte) (bool, uint64) {
	r := &f.rules[i]
	id := strconv.Itoa(i) + "\x00" + strconv.Itoa(int(op)) + "\x00" + table + "\x00" + string(key)
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.seen[id]
	f.seen[id] = n + 1
	h := hash(f.seed, id, n)
	if float64(h>>11)/(1<<53) >= r.Prob {
		return false, 0
	}
	if r.Max > 0 && f.fired[i] >= int64(r.Max) {
		return false, 0
	}
	f.fired[i]++
	return true, mix(h ^ 0x9e3779b97f4a7c15)
}

// hash is FNV-1a over the call's identity, finished with a mixer so that nearby seeds and counters
// give unrelated numbers.
func hash(seed uint64, id string, n uint64) uint64 {
	h := uint64(14695981039346656037) ^ mix(seed)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint64(id[i])) * 1099511628211
	}
	return mix(h ^ mix(n+1))
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// applies reports whether rule r may strike call op on table.
func (r *Rule) applies(op Op, table string) bool {
	return r.Ops&op != 0 && (r.Table == "" || r.Table == table)
}

func (r *Rule) hasRange() bool { return len(r.Range.Start) > 0 || len(r.Range.End) > 0 }

func (r *Rule) anyKey(keys [][]byte) bool {
	if !r.hasRange() {
		return true
	}
	for _, k := range keys {
		if r.Range.Contains(k) {
			return true
		}
	}
	return false
}

func (r *Rule) overlaps(s backends.Range) bool {
	if !r.hasRange() {
		return true
	}
	return (len(r.Range.End) == 0 || bytes.Compare(s.Start, r.Range.End) < 0) &&
		(len(s.End) == 0 || bytes.Compare(r.Range.Start, s.End) < 0)
}

// injected builds the error of rule i and counts it.
func (f *Backend) injected(i int, op Op, table string) error {
	r := &f.rules[i]
	var err error
	if r.Fault == Timeout {
		err = fmt.Errorf("faulty: %s %q: injected timeout after %v: %w", op, table, r.Delay, context.DeadlineExceeded)
	} else {
		base := r.Err
		if base == nil {
			base = ErrInjected
		}
		err = fmt.Errorf("faulty: %s %q: injected %s: %w", op, table, r.Fault, base)
	}
	if r.Retryable {
		f.retryable.Add(1)
		err = driverkit.Retryable(err)
	}
	return err
}

func (f *Backend) notify(e Event) {
	if f.onInject != nil {
		f.onInject(e)
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return wait.Sleep(ctx, d)
}

// callFaults runs the whole-call faults (Error, Timeout, Delay) of a call before it is forwarded.
func (f *Backend) callFaults(ctx context.Context, op Op, table string, keys [][]byte) error {
	f.count(op)
	if !f.active.Load() {
		return nil
	}
	var first []byte
	if len(keys) > 0 {
		first = keys[0]
	}
	for i := range f.rules {
		r := &f.rules[i]
		if r.Fault != Error && r.Fault != Timeout && r.Fault != Delay || !r.applies(op, table) || !r.anyKey(keys) {
			continue
		}
		if ok, _ := f.roll(i, op, table, first); !ok {
			continue
		}
		if err := f.fire(ctx, i, op, table, keys, 0); err != nil {
			return err
		}
	}
	return nil
}

// fire injects rule i's Error, Timeout or Delay now and returns the call's error, if any.
func (f *Backend) fire(ctx context.Context, i int, op Op, table string, keys [][]byte, rows int) error {
	r := &f.rules[i]
	ev := Event{Rule: i, Fault: r.Fault, Op: op, Table: table, Keys: keys, Rows: rows}
	switch r.Fault {
	case Delay:
		f.delays.Add(1)
		f.notify(ev)
		if err := sleep(ctx, r.Delay); err != nil {
			return fmt.Errorf("faulty: %s %q: during injected delay: %w", op, table, err)
		}
		return nil
	case Timeout:
		f.timeouts.Add(1)
		if err := sleep(ctx, r.Delay); err != nil {
			// The caller's own deadline came first: report it as the real timeout it is.
			ev.Err = fmt.Errorf("faulty: %s %q: during injected timeout: %w", op, table, err)
			f.notify(ev)
			return ev.Err
		}
	default:
		f.errs.Add(1)
		if op == OpScan {
			f.scanErrs.Add(1)
		}
	}
	ev.Err = f.injected(i, op, table)
	f.notify(ev)
	return ev.Err
}
