package backendtest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

var linearTests = []test{
	{"PutCheckAndMutateGet", testLinearizable},
}

// The linearizability test's size: modest, so that it takes a few seconds at most on a real server.
const (
	linClients = 8
	linKeys    = 4
	linOps     = 2400             // in all, shared by the clients
	linBudget  = 8 * time.Second  // no op starts after this
	linCheck   = 10 * time.Second // the checker's limit
)

// linInput is an operation on one key's register, column d:v.
type linInput struct {
	kind   byte // 'g' get, 'p' put, 'c' check and mutate (put value if the column holds expect)
	key    int
	expect string // 'c': "" is an absent column
	value  string // 'p', 'c'
}

// linOutput is what an operation returned.
type linOutput struct {
	value   string // 'g': the newest value, "" when the column is absent
	applied bool   // 'c'
	// unknown: the write failed with a retryable error and may or may not have happened. Its
	// return time is then infinite, so the checker may place it anywhere after its call, or last,
	// where nothing observes it (it did not happen).
	unknown bool
}

// linModel is one register per key, holding the value of column d:v ("" absent).
var linModel = porcupine.Model{
	Partition: linPartition,
	Init:      func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(string), input.(linInput), output.(linOutput)
		switch in.kind {
		case 'g':
			return out.value == st, st
		case 'p':
			return true, in.value
		}
		holds := st == in.expect
		if !out.unknown && out.applied != holds {
			return false, st
		}
		if holds {
			return true, in.value
		}
		return true, st
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		var s string
		switch in.kind {
		case 'g':
			s = fmt.Sprintf("get(k%d) -> %q", in.key, out.value)
		case 'p':
			s = fmt.Sprintf("put(k%d, %q)", in.key, in.value)
		default:
			s = fmt.Sprintf("checkAndPut(k%d, if %q, %q) -> %v", in.key, in.expect, in.value, out.applied)
		}
		if out.unknown {
			s += " (failed retryably: may have happened)"
		}
		return s
	},
}

// linPartition splits a history by key, in key order (checked one key at a time).
func linPartition(history []porcupine.Operation) [][]porcupine.Operation {
	parts := make([][]porcupine.Operation, linKeys)
	for _, op := range history {
		k := op.Input.(linInput).key
		parts[k] = append(parts[k], op)
	}
	return parts
}

// testLinearizable: concurrent clients put, check-and-put and get one column of a few rows, every
// write stamped by the store (timestamp 0), and the recorded history (each operation with its call
// and return time) must be linearizable against one register per row: every acknowledged write
// takes effect at one instant between its call and its return, and every read sees the latest. A
// store that stamps a write before it takes its turn to apply it breaks this: a put stamped T and
// applied after a check-and-put stamped T+1 succeeds, yet reads keep the older write's value.
func testLinearizable(e *env) {
	ra := e.b
	name := e.createTable(backends.TableOptions{})
	CheckLinearizable(e.T, e.ctx, Registers{
		Get: func(ctx context.Context, key []byte) (string, error) {
			rows, err := e.b.Read(ctx, name, [][]byte{key}, backends.ReadOptions{Columns: []backends.Column{col("d", "v")}})
			if err == nil && len(rows) == 1 && len(rows[0].Cells) > 0 {
				return string(rows[0].Cells[0].Value), nil
			}
			return "", err
		},
		Put: func(ctx context.Context, key []byte, value string) error {
			rowErrs, err := e.b.Apply(ctx, name, []backends.Mutation{put(string(key), cell("d", "v", value, 0))})
			if err == nil && rowErrs != nil {
				err = rowErrs[0]
			}
			return err
		},
		CheckAndPut: func(ctx context.Context, key []byte, expect, value string) (bool, error) {
			return ra.CheckAndMutate(ctx, name, equals("d", "v", expect), put(string(key), cell("d", "v", value, 0)))
		},
	})
}

// Registers are the operations CheckLinearizable runs, each on one column of one row (the row's
// register), whatever layer serves them: a store, or a client over one.
type Registers struct {
	// Get returns the column's newest value, "" when it is absent.
	Get func(ctx context.Context, key []byte) (string, error)
	// Put writes value to the column, stamped by the store.
	Put func(ctx context.Context, key []byte, value string) error
	// CheckAndPut writes value if the column holds expect ("": is absent), atomically, and reports
	// whether it did.
	CheckAndPut func(ctx context.Context, key []byte, expect, value string) (bool, error)
	// Done, when set, ends the run once closed (or after its time budget) instead of after a fixed
	// number of operations.
	Done <-chan struct{}
	// Pause is how long each client waits between its operations (outside their call and return).
	Pause time.Duration
}

// CheckLinearizable runs concurrent clients that get, put and check-and-put a few rows through r,
// records the history (each operation with its call and return time), and fails t unless it is
// linearizable against one register per row: every acknowledged write takes effect at one instant
// between its call and its return, and every read sees the latest.
//
// An operation failing with a retryable error is recorded as one that may have happened (a write)
// or dropped (a read, which changes nothing); any other error fails the test.
func CheckLinearizable(t testing.TB, ctx context.Context, r Registers) {
	t.Helper()
	var (
		mu      sync.Mutex
		history []porcupine.Operation
		wg      sync.WaitGroup
	)
	start := time.Now()
	since := func() int64 { return time.Since(start).Nanoseconds() }
	keyOf := func(k int) []byte { return fmt.Appendf(nil, "lin%d", k) }
	more := func(i int) bool {
		if time.Since(start) > linBudget || ctx.Err() != nil {
			return false
		}
		if r.Done == nil {
			return i < linOps/linClients
		}
		select {
		case <-r.Done:
			return false
		default:
			return true
		}
	}
	for c := range linClients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(start.UnixNano()), uint64(c)))
			seen := make([]string, linKeys) // the last value this client saw or wrote, per key
			var ops []porcupine.Operation
			defer func() {
				mu.Lock()
				history = append(history, ops...)
				mu.Unlock()
			}()
			for i := 0; more(i); i++ {
				if i > 0 && r.Pause > 0 {
					time.Sleep(r.Pause)
				}
				in := linInput{key: rng.IntN(linKeys), value: fmt.Sprintf("%d.%d", c, i)}
				switch r := rng.IntN(10); {
				case r < 4:
					in.kind = 'g'
				case r < 7:
					in.kind = 'p'
				default:
					in.kind = 'c'
					if rng.IntN(5) > 0 {
						in.expect = seen[in.key]
					}
				}
				key := keyOf(in.key)
				call := since()
				var (
					out linOutput
					err error
				)
				switch in.kind {
				case 'g':
					out.value, err = r.Get(ctx, key)
				case 'p':
					err = r.Put(ctx, key, in.value)
				default:
					out.applied, err = r.CheckAndPut(ctx, key, in.expect, in.value)
				}
				ret := since()
				switch {
				case err == nil:
				case !driverkit.IsRetryable(err):
					t.Errorf("client %d: %s: %v", c, linModel.DescribeOperation(in, out), err)
					return
				case in.kind == 'g':
					continue
				default:
					out, ret = linOutput{unknown: true}, math.MaxInt64
				}
				switch {
				case in.kind == 'g':
					seen[in.key] = out.value
				case in.kind == 'p' && !out.unknown, out.applied:
					seen[in.key] = in.value
				}
				ops = append(ops, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ran := time.Since(start)
	checkStart := time.Now()
	res, info := porcupine.CheckOperationsVerbose(linModel, history, linCheck)
	t.Logf("%d operations in %v, checked in %v: %s", len(history), ran.Round(time.Millisecond), time.Since(checkStart).Round(time.Millisecond), res)
	switch res {
	case porcupine.Ok:
	case porcupine.Unknown:
		t.Logf("the checker gave up after %v: history not verified", linCheck)
	default:
		t.Errorf("the history of %d operations is not linearizable (one register per key, writes stamped by the store):\n%s",
			len(history), linExplain(history, info))
		if f, err := os.CreateTemp("", "brine-linearizability-*.html"); err == nil {
			f.Close()
			if err := porcupine.VisualizePath(linModel, info, f.Name()); err == nil {
				t.Logf("porcupine's visualization: %s", f.Name())
			}
		}
	}
}

// linExplain describes where the checker got stuck on each key whose history it could not
// linearize: the end of the longest order it found, then the operations that could come next and
// that no register explains.
func linExplain(history []porcupine.Operation, info porcupine.LinearizationInfo) string {
	var sb strings.Builder
	parts := linPartition(history)
	partials := info.PartialLinearizationsOperations()
	at := func(op porcupine.Operation) string {
		ret := "never"
		if op.Return != math.MaxInt64 {
			ret = fmt.Sprintf("%.3fms", float64(op.Return)/1e6)
		}
		return fmt.Sprintf("client %d, %.3fms..%s: %s", op.ClientId, float64(op.Call)/1e6, ret, linModel.DescribeOperation(op.Input, op.Output))
	}
	for k, part := range parts {
		if k >= len(partials) {
			break
		}
		var longest []porcupine.Operation
		for _, p := range partials[k] {
			if len(p) > len(longest) {
				longest = p
			}
		}
		if len(longest) == len(part) {
			continue
		}
		fmt.Fprintf(&sb, "key k%d: %d of %d operations linearized; the last ones:\n", k, len(longest), len(part))
		for _, op := range longest[max(0, len(longest)-4):] {
			fmt.Fprintf(&sb, "  %s\n", at(op))
		}
		// The operations left: those called before the first of them returned could come next.
		done := func(op porcupine.Operation) bool {
			return slices.ContainsFunc(longest, func(l porcupine.Operation) bool {
				return l.ClientId == op.ClientId && l.Call == op.Call
			})
		}
		var left []porcupine.Operation
		first := int64(math.MaxInt64)
		for _, op := range part {
			if !done(op) {
				left = append(left, op)
				first = min(first, op.Return)
			}
		}
		sb.WriteString("  then none of these fits:\n")
		for _, op := range left {
			if op.Call <= first {
				fmt.Fprintf(&sb, "  %s\n", at(op))
			}
		}
	}
	return sb.String()
}
