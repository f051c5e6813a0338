package tablestoretest

import (
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/protobuf/protoadapt"
)

// AnyOp matches every operation in FailNext and FailNextRows.
const AnyOp = "*"

// Fault is an injected service error.
type Fault struct {
	Code    string // e.g. CodeServerBusy; empty means "no error" (a Delay alone)
	Message string // default: MessageForCode(Code)
	Status  int    // default: StatusForCode(Code)
	// Delay stalls the response, e.g. to trigger client timeouts.
	Delay time.Duration
	// AfterApply runs the operation and then answers with the error: the write is
	// durable but the client sees a failure, like a response lost in transit.
	// Ignored for per-row faults.
	AfterApply bool
}

func (f *Fault) err() *otsError {
	e := &otsError{code: f.Code, message: f.Message, status: f.Status}
	if e.message == "" {
		e.message = MessageForCode(f.Code)
	}
	if e.status == 0 {
		e.status = StatusForCode(f.Code)
	}
	return e
}

// FaultFunc decides, per request, whether to inject a fault. op is the operation
// name ("PutRow"), req the decoded otsprotocol request. Return nil for none.
type FaultFunc func(op string, req protoadapt.MessageV1) *Fault

// RowFaultFunc decides, per row of a BatchGetRow or BatchWriteRow, whether that row
// fails while the others proceed. index is the row's position within its table in
// the request. Return nil for none; Delay and AfterApply are ignored.
type RowFaultFunc func(op, table string, index int) *Fault

type queued struct {
	op, code string
	n        int
}

type randomFaults struct {
	rng   *rand.Rand
	p     float64
	codes []string
}

// faultState holds the injection configuration; it has its own lock so faults can
// be changed while requests run.
type faultState struct {
	mu        sync.Mutex
	next      []queued
	nextRows  []queued
	fn        FaultFunc
	rowFn     RowFaultFunc
	random    *randomFaults
	randomRow *randomFaults
}

func takeQueued(q []queued, op string) ([]queued, string) {
	for i := range q {
		if q[i].op == op || q[i].op == AnyOp {
			code := q[i].code
			q[i].n--
			if q[i].n <= 0 {
				q = append(q[:i], q[i+1:]...)
			}
			return q, code
		}
	}
	return q, ""
}

func (r *randomFaults) pick() string {
	if r == nil || len(r.codes) == 0 || r.rng.Float64() >= r.p {
		return ""
	}
	return r.codes[r.rng.IntN(len(r.codes))]
}

func (f *faultState) requestFault(op string, req protoadapt.MessageV1) *Fault {
	f.mu.Lock()
	var code string
	f.next, code = takeQueued(f.next, op)
	fn := f.fn
	if code == "" {
		code = f.random.pick()
	}
	f.mu.Unlock()
	if code != "" {
		return &Fault{Code: code}
	}
	if fn != nil {
		// Called without the lock so the hook may itself reconfigure faults.
		return fn(op, req)
	}
	return nil
}

func (f *faultState) rowFault(op, table string, index int) *Fault {
	f.mu.Lock()
	var code string
	f.nextRows, code = takeQueued(f.nextRows, op)
	fn := f.rowFn
	if code == "" {
		code = f.randomRow.pick()
	}
	f.mu.Unlock()
	if code != "" {
		return &Fault{Code: code}
	}
	if fn != nil {
		if ft := fn(op, table, index); ft != nil && ft.Code != "" {
			return ft
		}
	}
	return nil
}

// InjectErrors installs a per-request fault hook (nil removes it). It runs after
// authentication and decoding, before the operation.
func (s *Server) InjectErrors(fn FaultFunc) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.fn = fn
}

// InjectRowErrors installs a per-row fault hook for batch operations (nil removes it).
func (s *Server) InjectRowErrors(fn RowFaultFunc) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.rowFn = fn
}

// FailNext makes the next n requests of op (or AnyOp) fail with code, with the
// service's HTTP status and message for it. Note that the SDK retries retryable
// codes itself, so one SDK call may consume several of them.
func (s *Server) FailNext(op, code string, n int) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.next = append(s.faults.next, queued{op: op, code: code, n: n})
}

// FailNextRows makes the next n rows of batch operation op (or AnyOp) fail with
// code inside an otherwise successful batch response.
func (s *Server) FailNextRows(op, code string, n int) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.nextRows = append(s.faults.nextRows, queued{op: op, code: code, n: n})
}

// FailRandomly makes each request fail with probability p, with a code drawn from
// codes; seed makes the sequence reproducible. p <= 0 turns it off.
func (s *Server) FailRandomly(seed uint64, p float64, codes ...string) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.random = newRandomFaults(seed, p, codes)
}

// FailRowsRandomly is FailRandomly for the rows of batch operations.
func (s *Server) FailRowsRandomly(seed uint64, p float64, codes ...string) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.randomRow = newRandomFaults(seed, p, codes)
}

func newRandomFaults(seed uint64, p float64, codes []string) *randomFaults {
	if p <= 0 || len(codes) == 0 {
		return nil
	}
	return &randomFaults{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), p: p, codes: codes}
}

// ClearFaults removes every injected fault.
func (s *Server) ClearFaults() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.next, s.faults.nextRows = nil, nil
	s.faults.fn, s.faults.rowFn = nil, nil
	s.faults.random, s.faults.randomRow = nil, nil
}

// OpStats counts one operation's traffic.
type OpStats struct {
	Requests    int // HTTP requests received, including failed and retried ones
	Failures    int // requests answered with an error status
	RowsRead    int // rows returned to the client
	RowsWritten int // rows created, changed or deleted
	RowErrors   int // failed rows inside successful batch responses
}

// Stats maps operation names ("GetRange") to their counters.
type Stats map[string]OpStats

// Total sums the counters over all operations.
func (st Stats) Total() OpStats {
	var t OpStats
	for _, o := range st {
		t.Requests += o.Requests
		t.Failures += o.Failures
		t.RowsRead += o.RowsRead
		t.RowsWritten += o.RowsWritten
		t.RowErrors += o.RowErrors
	}
	return t
}

type statsState struct {
	mu sync.Mutex
	m  Stats
}

func (st *statsState) init() { st.m = make(Stats) }

func (st *statsState) update(op string, fn func(*OpStats)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	o := st.m[op]
	fn(&o)
	st.m[op] = o
}

func (st *statsState) request(op string) { st.update(op, func(o *OpStats) { o.Requests++ }) }
func (st *statsState) failure(op string) { st.update(op, func(o *OpStats) { o.Failures++ }) }

func (st *statsState) rows(op string, read, written, rowErrors int) {
	st.update(op, func(o *OpStats) {
		o.RowsRead += read
		o.RowsWritten += written
		o.RowErrors += rowErrors
	})
}

// Stats returns a snapshot of the per-operation counters.
func (s *Server) Stats() Stats {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	out := make(Stats, len(s.stats.m))
	for k, v := range s.stats.m {
		out[k] = v
	}
	return out
}

// ResetStats zeroes the counters.
func (s *Server) ResetStats() {
	s.stats.mu.Lock()
	defer s.stats.mu.Unlock()
	s.stats.m = make(Stats)
}
