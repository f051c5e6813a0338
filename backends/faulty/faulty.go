// Package faulty wraps a backends.Backend and injects faults into its calls, for tests that must show
// that nothing above the driver loses, duplicates or invents rows when the store misbehaves.
//
// A Config holds Rules; each says which calls (Op), which table and which key range it applies to,
// what to inject (Fault), how often (Prob) and how many times at most (Max). Faults:
//
//   - Error: the call fails as a whole before it reaches the backend (Read, Apply, table calls); a
//     scan fails in the middle of its stream, after a number of rows chosen per scan (AfterRows).
//   - RowError: Apply and CheckAndMutateBatch only, decided per mutation: that row is not written and
//     its rowErrs entry is set, while the rows around it go through (a partial batch).
//   - AfterWrite: Apply and CheckAndMutateBatch only: the mutations are applied, then the call
//     reports a whole-call error, as when the reply to a successful write is lost. The rows written
//     are in the Event.
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
	"errors"
	"fmt"
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
	// call (RowError or AfterWrite outside Apply and CheckAndMutateBatch) are skipped for it.
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
	// Retryable wraps the injected error with driverkit.Retryable.
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

// Config configures New.
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

// New returns b with cfg's faults. Closing the result closes b.
func New(b backends.Backend, cfg Config) *Backend {
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
