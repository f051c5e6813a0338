// Package faulty wraps a backends.Backend and injects faults into its calls, for tests that must show
// that nothing above the driver loses, duplicates or invents rows when the store misbehaves.
//
// A Config holds Rules; each says which calls (Op), which table and which key range it applies to,
// what to inject (Fault), how often (Prob) and how many times at most (Max). Faults:
//
//   - Error: the call fails as a whole before it reaches the backend (Read, Apply, table calls); a
//     scan fails in the middle of its stream, after a number of rows chosen per scan (AfterRows).
//   - RowError: Apply only, decided per mutation: that row is not written and its rowErrs entry is
//     set, while the rows around it go through (a partial Apply).
//   - AfterWrite: Apply only: the mutations are applied, then the call reports a whole-call error,
//     as when the reply to a successful write is lost. The rows written are in the Event.
//   - Timeout: the call waits Delay (or until ctx ends) and fails with an error wrapping
//     context.DeadlineExceeded, as a client-side deadline would.
//   - Delay: the call waits Delay (or until ctx ends, which then fails it) and goes on.
//
// Every decision is a pure function of the seed, the rule, the call's table and key (the first key of
// the call, the row's key for RowError, the range for a scan) and how many times that rule has seen
// that key before. The faults a test meets therefore do not depend on how goroutines interleave, a
// failing seed reproduces, and a retried row rolls again instead of failing forever.
package faulty

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brine-kv/brine/backends"
)

// ErrInjected is the error injected by Error, RowError and AfterWrite rules without an Err of their own.
var ErrInjected = errors.New("faulty: injected fault")

// Op is a set of backend calls a Rule applies to.
type Op uint8

// Calls, to be or-ed together.
const (
	OpRead   Op = 1 << iota // Read
	OpApply                 // Apply
	OpScan                  // Scan
	OpTable                 // CreateTable, DeleteTable, TableMeta, Tables, Regions
	OpAtomic                // CheckAndMutate, Increment

	OpData = OpRead | OpApply | OpScan // the default when Rule.Ops is 0

	numOps = 5 // single calls above
)

// index is the position of a single call's bit, for per-call counts.
func (o Op) index() int { return bits.TrailingZeros8(uint8(o)) }

func (o Op) String() string {
	switch o {
	case OpRead:
		return "read"
	case OpApply:
		return "apply"
	case OpScan:
		return "scan"
	case OpTable:
		return "table"
	case OpAtomic:
		return "atomic"
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Fault is what a Rule injects.
type Fault uint8

// Faults; see the package documentation.
const (
	Error Fault = iota + 1
	RowError
	AfterWrite
	Timeout
	Delay
)

func (f Fault) String() string {
	switch f {
	case Error:
		return "error"
	case RowError:
		return "row-error"
	case AfterWrite:
		return "after-write"
	case Timeout:
		return "timeout"
	case Delay:
		return "delay"
	}
	return "fault(" + strconv.Itoa(int(f)) + ")"
}

// Rule is one kind of fault and where it strikes.
type Rule struct {
	Fault Fault
	// Ops are the calls the rule applies to; 0 means OpData. Rules whose Fault makes no sense for a
	// call (RowError or AfterWrite outside Apply) are skipped for it.
	Ops Op
	// Table restricts the rule to one table; empty means every table.
	Table string
	// Range restricts the rule to calls touching these (physical) keys: an Apply or Read with a key in
	// it, a scan whose range overlaps it, a mutation in it for RowError. The zero Range is every key.
	Range backends.Range
	// Prob is the chance that a matching call (mutation, for RowError) gets the fault, in (0, 1];
	// 0 means 1.
	Prob float64
	// Max bounds how many times the rule fires; 0 means no bound.
	Max int
	// Retryable wraps the injected error with backends.Retryable.
	Retryable bool
	// Err is the error injected by Error, RowError and AfterWrite (default ErrInjected).
	Err error
	// Delay is how long Timeout and Delay wait.
	Delay time.Duration
	// AfterRows and MinRows place a scan's fault after N rows, N drawn per scan from
	// [MinRows, max(MinRows, AfterRows)]. A scan with fewer rows gets the fault after its last row,
	// before its clean end.
	AfterRows int
	MinRows   int
}

// Config configures Wrap.
type Config struct {
	// Seed makes the faults reproducible: same seed, same calls, same faults.
	Seed  uint64
	Rules []Rule
	// OnInject, when set, is called for every fault as it is injected, from the goroutine making the
	// call; it must be safe for concurrent use and must not keep Event.Keys' memory past the call.
	OnInject func(Event)
}

// Event describes one injected fault.
type Event struct {
	Rule  int // index in Config.Rules
	Fault Fault
	Op    Op
	Table string
	// Keys are the rows concerned: the row of a RowError, the rows an AfterWrite wrote, the keys of a
	// failed Apply or Read; for a scan, the range start.
	Keys [][]byte
	// Rows is, for a scan, how many rows it had yielded before the fault.
	Rows int
	Err  error // nil for Delay
}

// Stats count what was injected.
type Stats struct {
	Calls int64 // calls seen (every op), faulted or not
	// OpCalls counts the calls seen per single Op (OpRead, OpApply, OpScan, OpTable, OpAtomic), so a
	// test can assert how many calls of one kind reached the store, e.g. scans after pruning.
	OpCalls     map[Op]int64
	Errors      int64 // Error faults, scans included
	ScanErrors  int64 // of which in a scan stream
	RowErrors   int64 // mutations failed by RowError
	AfterWrites int64 // Apply calls written, then failed
	Timeouts    int64
	Delays      int64
	Retryable   int64   // injected errors marked retryable
	PerRule     []int64 // times each rule was triggered (a scan fault counts when planned, even if the scan stops before its row)
}

// Injected is the number of errors injected (every fault but Delay).
func (s Stats) Injected() int64 { return s.Errors + s.RowErrors + s.AfterWrites + s.Timeouts }

func (s Stats) String() string {
	return fmt.Sprintf("%d calls: %d errors (%d mid-scan), %d row errors, %d after-write, %d timeouts, %d delays (%d retryable)",
		s.Calls, s.Errors, s.ScanErrors, s.RowErrors, s.AfterWrites, s.Timeouts, s.Delays, s.Retryable)
}

// Backend is a backends.Backend that injects the faults of its Config into the calls it forwards.
type Backend struct {
	inner    backends.Backend
	seed     uint64
	rules    []Rule
	onInject func(Event)
	active   atomic.Bool

	mu    sync.Mutex
	seen  map[string]uint64 // rule, op, table, key -> times rolled
	fired []int64           // per rule, guarded by mu (Max is checked against it)

	opCalls                                                                  [numOps]atomic.Int64
	calls, errs, scanErrs, rowErrs, afterWrites, timeouts, delays, retryable atomic.Int64
}

var (
	_ backends.Backend      = (*Backend)(nil)
	_ backends.RegionLister = (*Backend)(nil)
)

// Wrap returns b with cfg's faults. Closing the result closes b.
func Wrap(b backends.Backend, cfg Config) *Backend {
	f := &Backend{
		inner:    b,
		seed:     cfg.Seed,
		rules:    append([]Rule(nil), cfg.Rules...),
		onInject: cfg.OnInject,
		seen:     map[string]uint64{},
		fired:    make([]int64, len(cfg.Rules)),
	}
	for i := range f.rules {
		if f.rules[i].Ops == 0 {
			f.rules[i].Ops = OpData
		}
		if f.rules[i].Prob <= 0 {
			f.rules[i].Prob = 1
		}
	}
	f.active.Store(true)
	return f
}

// Unwrap returns the wrapped backend: the unfaulted view of the same data.
func (f *Backend) Unwrap() backends.Backend { return f.inner }

// SetActive turns injection on or off (it starts on), e.g. to read back through the same client.
func (f *Backend) SetActive(on bool) { f.active.Store(on) }

// Stats returns the counts so far.
func (f *Backend) Stats() Stats {
	f.mu.Lock()
	per := append([]int64(nil), f.fired...)
	f.mu.Unlock()
	byOp := make(map[Op]int64, numOps)
	for i := range f.opCalls {
		byOp[Op(1)<<i] = f.opCalls[i].Load()
	}
	return Stats{OpCalls: byOp,
		Calls: f.calls.Load(), Errors: f.errs.Load(), ScanErrors: f.scanErrs.Load(), RowErrors: f.rowErrs.Load(),
		AfterWrites: f.afterWrites.Load(), Timeouts: f.timeouts.Load(), Delays: f.delays.Load(),
		Retryable: f.retryable.Load(), PerRule: per,
	}
}

// count counts a call of op, one of the single Ops.
func (f *Backend) count(op Op) {
	f.calls.Add(1)
	f.opCalls[op.index()].Add(1)
}

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
		err = backends.Retryable(err)
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
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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

// Read forwards to the wrapped backend, after OpRead faults.
func (f *Backend) Read(ctx context.Context, table string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	if err := f.callFaults(ctx, OpRead, table, keys); err != nil {
		return nil, err
	}
	return f.inner.Read(ctx, table, keys, opts)
}

// Apply forwards the mutations that no RowError rule failed, after the whole-call faults; AfterWrite
// rules may then fail the call although its rows were written.
func (f *Backend) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	keys := make([][]byte, len(muts))
	for i, m := range muts {
		keys[i] = m.Key
	}
	if err := f.callFaults(ctx, OpApply, table, keys); err != nil {
		return nil, err
	}
	if !f.active.Load() {
		return f.inner.Apply(ctx, table, muts)
	}

	var rowErrs []error
	for i := range f.rules {
		r := &f.rules[i]
		if r.Fault != RowError || !r.applies(OpApply, table) {
			continue
		}
		for j, m := range muts {
			if rowErrs != nil && rowErrs[j] != nil || r.hasRange() && !r.Range.Contains(m.Key) {
				continue
			}
			if ok, _ := f.roll(i, OpApply, table, m.Key); !ok {
				continue
			}
			if rowErrs == nil {
				rowErrs = make([]error, len(muts))
			}
			f.rowErrs.Add(1)
			rowErrs[j] = f.injected(i, OpApply, table)
			f.notify(Event{Rule: i, Fault: RowError, Op: OpApply, Table: table, Keys: keys[j : j+1], Err: rowErrs[j]})
		}
	}

	pass, idx := muts, []int(nil)
	if rowErrs != nil {
		pass = make([]backends.Mutation, 0, len(muts))
		for j, m := range muts {
			if rowErrs[j] == nil {
				pass = append(pass, m)
				idx = append(idx, j)
			}
		}
	}
	var innerErrs []error
	if len(pass) > 0 {
		var err error
		if innerErrs, err = f.inner.Apply(ctx, table, pass); err != nil {
			return nil, err
		}
	}
	var written [][]byte
	for k, m := range pass {
		j := k
		if idx != nil {
			j = idx[k]
		}
		var e error
		if innerErrs != nil {
			e = innerErrs[k]
		}
		if e == nil {
			written = append(written, m.Key)
			continue
		}
		if rowErrs == nil {
			rowErrs = make([]error, len(muts))
		}
		rowErrs[j] = e
	}

	for i := range f.rules {
		r := &f.rules[i]
		if r.Fault != AfterWrite || !r.applies(OpApply, table) || !r.anyKey(keys) {
			continue
		}
		var first []byte
		if len(keys) > 0 {
			first = keys[0]
		}
		if ok, _ := f.roll(i, OpApply, table, first); !ok {
			continue
		}
		f.afterWrites.Add(1)
		err := f.injected(i, OpApply, table)
		f.notify(Event{Rule: i, Fault: AfterWrite, Op: OpApply, Table: table, Keys: written, Err: err})
		return nil, err
	}
	return rowErrs, nil
}

// scanFault is a fault planned for one scan, at a row count.
type scanFault struct {
	rule int
	at   int
}

// Scan forwards to the wrapped backend; OpScan faults strike in the stream, each after the number of
// rows drawn for it.
func (f *Backend) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		f.count(OpScan)
		var plan []scanFault
		if f.active.Load() {
			id := append(append(append([]byte(nil), r.Start...), 0xff, 0), r.End...)
			if opts.Reverse {
				id = append(id, 'r')
			}
			for i := range f.rules {
				rule := &f.rules[i]
				if rule.Fault != Error && rule.Fault != Timeout && rule.Fault != Delay || !rule.applies(OpScan, table) || !rule.overlaps(r) {
					continue
				}
				if ok, x := f.roll(i, OpScan, table, id); ok {
					lo := max(0, rule.MinRows)
					plan = append(plan, scanFault{rule: i, at: lo + int(x%uint64(max(lo, rule.AfterRows)-lo+1))})
				}
			}
		}
		n := 0
		// strike fires the faults due at n rows (all of them when end is set); false: the scan is over.
		strike := func(end bool) bool {
			for k := 0; k < len(plan); k++ {
				p := plan[k]
				if !end && p.at != n {
					continue
				}
				plan = append(plan[:k], plan[k+1:]...)
				k--
				if err := f.fire(ctx, p.rule, OpScan, table, [][]byte{r.Start}, n); err != nil {
					yield(backends.Row{}, err)
					return false
				}
			}
			return true
		}
		if !strike(false) {
			return
		}
		for row, err := range f.inner.Scan(ctx, table, r, opts) {
			if err != nil {
				yield(row, err)
				return
			}
			if !yield(row, nil) {
				return
			}
			n++
			if !strike(false) {
				return
			}
		}
		strike(true)
	}
}

// Close closes the wrapped backend.
func (f *Backend) Close() error { return f.inner.Close() }
