package backendtest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
)

var batchAtomicTests = []test{
	{"Mixed", testBatchMixed},
	{"BadInput", testBatchBadInput},
	{"ManyRows", testBatchManyRows},
	{"IsAtomic", testBatchIsAtomic},
	{"PartialFailure", testBatchPartialFailure},
	{"RetryAfterLostReply", testBatchRetry},
}

// batch sends ms in one CheckAndMutateBatch call, checking the shape of its answer.
func (e *env) batch(b backends.Backend, table string, ms ...backends.CondMutation) ([]bool, []error, error) {
	e.Helper()
	applied, rowErrs, err := b.CheckAndMutateBatch(e.ctx, table, ms)
	switch {
	case err != nil && (applied != nil || rowErrs != nil):
		e.Fatalf("CheckAndMutateBatch = %v, %v, %v: a failed call returns nil results", applied, rowErrs, err)
	case err == nil && len(applied) != len(ms):
		e.Fatalf("CheckAndMutateBatch: %d results for %d rows", len(applied), len(ms))
	case rowErrs != nil && len(rowErrs) != len(ms):
		e.Fatalf("CheckAndMutateBatch: %d row errors for %d rows", len(rowErrs), len(ms))
	}
	for i, rerr := range rowErrs {
		if rerr != nil && applied[i] {
			e.Fatalf("CheckAndMutateBatch: row %d applied and failed (%v)", i, rerr)
		}
	}
	return applied, rowErrs, err
}

func cm(cond backends.Condition, m backends.Mutation) backends.CondMutation {
	return backends.CondMutation{Cond: cond, Mut: m}
}

// testBatchMixed: each row of one batch gets its own answer, as CheckAndMutate would give it, and a
// row naming a family the table lacks fails alone.
func testBatchMixed(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("b", cell("d", "a", "1", e.ts)), put("c", cell("d", "a", "1", e.ts)),
		put("d", cell("d", "a", "1", e.ts)), put("e", cell("x", "b", "b", e.ts)), put("f", cell("d", "a", "1", e.ts)),
		put("u", cell("d", "a", "1", e.ts)))
	rows := []struct {
		cm      backends.CondMutation
		applied bool
		err     error
		want    []backends.Cell
	}{
		{cm(absent("d", "a"), put("a", cell("d", "a", "new", e.ts))), true, nil, []backends.Cell{cell("d", "a", "new", e.ts)}},
		{cm(absent("d", "a"), put("b", cell("d", "a", "2", e.ts+1))), false, nil, []backends.Cell{cell("d", "a", "1", e.ts)}},
		{cm(equals("d", "a", "1"), put("c", cell("d", "a", "2", e.ts+1), cell("x", "b", "b", e.ts))), true, nil,
			[]backends.Cell{cell("d", "a", "2", e.ts+1), cell("x", "b", "b", e.ts)}},
		{cm(equals("d", "a", "9"), del("d")), false, nil, []backends.Cell{cell("d", "a", "1", e.ts)}},
		{cm(equals("x", "b", "b"), del("e")), true, nil, nil},
		{cm(absent("zz", "a"), put("u", cell("d", "a", "v", e.ts))), false, backends.ErrInvalidArgument, []backends.Cell{cell("d", "a", "1", e.ts)}},
		{cm(absent("d", "a"), put("g", cell("zz", "a", "v", e.ts))), false, backends.ErrInvalidArgument, nil},
		{cm(equals("d", "a", "1"), del("f", col("d", "a"))), true, nil, nil},
	}
	ms := make([]backends.CondMutation, len(rows))
	for i, r := range rows {
		ms[i] = r.cm
		ms[i].Deferred = i%2 == 1 // a deferred write's outcome is the same
	}
	applied, rowErrs, err := e.batch(e.b, name, ms...)
	if err != nil {
		e.Fatalf("CheckAndMutateBatch: %v", err)
	}
	if rowErrs == nil {
		e.Fatalf("CheckAndMutateBatch: rowErrs nil, want errors for the rows naming family zz")
	}
	for i, r := range rows {
		if applied[i] != r.applied || !errors.Is(rowErrs[i], r.err) || (r.err == nil) != (rowErrs[i] == nil) {
			e.Errorf("row %d (%q): applied %v, error %v; want %v, %v", i, r.cm.Mut.Key, applied[i], rowErrs[i], r.applied, r.err)
		}
	}
	for _, r := range rows {
		e.wantCells(fmt.Sprintf("row %q afterwards", r.cm.Mut.Key), e.readOne(name, r.cm.Mut.Key).Cells, r.want)
	}

	// Every row answered: rowErrs is nil.
	applied, rowErrs, err = e.batch(e.b, name, cm(absent("d", "a"), put("h", cell("d", "a", "1", e.ts))), cm(absent("d", "a"), put("a", cell("d", "a", "x", e.ts+1))))
	if err != nil || rowErrs != nil || !applied[0] || applied[1] {
		e.Fatalf("batch of answered rows = %v, %v, %v; want [true false], nil, nil", applied, rowErrs, err)
	}
	// An empty batch is no call.
	if applied, rowErrs, err := e.batch(e.b, name); err != nil || len(applied) != 0 || rowErrs != nil {
		e.Fatalf("empty batch = %v, %v, %v", applied, rowErrs, err)
	}
}

// testBatchBadInput: input no store could apply fails the whole call, and nothing is written, not
// even the good rows beside it.
func testBatchBadInput(e *env) {
	name := e.createTable(backends.TableOptions{})
	good := cm(absent("d", "a"), put("ok", cell("d", "a", "v", e.ts)))
	long := bytes.Repeat([]byte("k"), e.s.opts.MaxKeyLen+1)
	tests := []struct {
		name string
		bad  backends.CondMutation
		want error
	}{
		{"empty key", cm(absent("d", "a"), backends.Mutation{Cells: []backends.Cell{cell("d", "a", "v", e.ts)}}), backends.ErrInvalidKey},
		{"key past the limit", cm(absent("d", "a"), backends.Mutation{Key: long, Cells: []backends.Cell{cell("d", "a", "v", e.ts)}}), backends.ErrInvalidKey},
		{"put without cells", cm(absent("d", "a"), backends.Mutation{Key: []byte("r")}), backends.ErrInvalidArgument},
		{"negative timestamp", cm(absent("d", "a"), put("r", cell("d", "a", "v", -5))), backends.ErrInvalidArgument},
		{"same row twice", cm(absent("d", "b"), put("ok", cell("d", "b", "v", e.ts))), backends.ErrInvalidArgument},
	}
	for _, tt := range tests {
		if _, _, err := e.batch(e.b, name, good, tt.bad); !errors.Is(err, tt.want) {
			e.Errorf("%s: CheckAndMutateBatch: %v, want %v", tt.name, err, tt.want)
		}
	}
	e.wantCells("good row of refused batches", e.readOne(name, []byte("ok")).Cells, nil)
	if _, _, err := e.batch(e.b, e.tableName(), good); !errors.Is(err, backends.ErrTableNotFound) {
		e.Errorf("CheckAndMutateBatch on a missing table: %v, want ErrTableNotFound", err)
	}
}

// testBatchManyRows: a batch spread over several regions answers every row, in order.
func testBatchManyRows(e *env) {
	name := e.createTable(backends.TableOptions{SplitKeys: keys("r/100", "r/200", "r/300")})
	const n = 400
	key := func(i int) string { return fmt.Sprintf("r/%03d", i) }
	var seed []backends.Mutation
	for i := 0; i < n; i += 3 {
		seed = append(seed, put(key(i), cell("d", "a", "old", e.ts)))
	}
	e.apply(name, seed...)
	// Rows i%3 == 0 hold "old": put-if-absent fails there and applies elsewhere; odd rows instead ask
	// for "old", which holds only where i%3 == 0.
	ms := make([]backends.CondMutation, n)
	want := make([]bool, n)
	for i := range n {
		cond := absent("d", "a")
		want[i] = i%3 != 0
		if i%2 == 1 {
			cond = equals("d", "a", "old")
			want[i] = i%3 == 0
		}
		ms[n-1-i] = cm(cond, put(key(i), cell("d", "a", fmt.Sprint("new", i), e.ts+1))) // out of key order on purpose
	}
	applied, rowErrs, err := e.batch(e.b, name, ms...)
	if err != nil || rowErrs != nil {
		e.Fatalf("CheckAndMutateBatch of %d rows: %v, %v", n, rowErrs, err)
	}
	ks := make([][]byte, n)
	for i := range n {
		ks[i] = []byte(key(i))
	}
	got := e.read(name, ks)
	for i := range n {
		if applied[n-1-i] != want[i] {
			e.Fatalf("row %s: applied %v, want %v", key(i), applied[n-1-i], want[i])
		}
		v := "old"
		if want[i] {
			v = fmt.Sprint("new", i)
		} else if i%3 != 0 {
			v = ""
		}
		var wantCells []backends.Cell
		if v != "" {
			wantCells = []backends.Cell{cell("d", "a", v, anyTS)}
		}
		e.wantCells("row "+key(i), got[i].Cells, wantCells)
	}
}

// testBatchIsAtomic: concurrent batches of compare-and-set increments over the same rows lose no
// update on any row.
func testBatchIsAtomic(e *env) {
	name := e.createTable(backends.TableOptions{})
	rows := keys("c0", "c1", "c2", "c3")
	var seed []backends.Mutation
	for _, k := range rows {
		seed = append(seed, backends.Mutation{Key: k, Cells: []backends.Cell{cell("d", "n", "0", e.ts)}})
	}
	e.apply(name, seed...)
	const workers, each = 3, 6
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			done := make([]int, len(rows))
			for left := len(rows) * each; left > 0; {
				cur := e.read(name, rows)
				var ms []backends.CondMutation
				var idx []int
				for j, r := range cur {
					if done[j] == each {
						continue
					}
					var n int
					fmt.Sscan(string(r.Cells[0].Value), &n)
					ms = append(ms, cm(equals("d", "n", string(r.Cells[0].Value)),
						backends.Mutation{Key: r.Key, Cells: []backends.Cell{cell("d", "n", fmt.Sprint(n+1), e.ts+int64(n+1))}}))
					idx = append(idx, j)
				}
				applied, rowErrs, err := e.b.CheckAndMutateBatch(e.ctx, name, ms)
				if err == nil && rowErrs != nil {
					err = errors.Join(rowErrs...)
				}
				if err != nil {
					errs <- err
					return
				}
				for k, ok := range applied {
					if ok {
						done[idx[k]]++
						left--
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.Fatalf("concurrent CheckAndMutateBatch: %v", err)
	}
	for _, r := range e.read(name, rows) {
		e.wantCells("counter "+string(r.Key), r.Cells, []backends.Cell{cell("d", "n", fmt.Sprint(workers*each), e.ts+workers*each)})
	}
}

// faulted wraps the backend under test in faults for atomic calls; closing the wrapper is left to
// the backend's own cleanup.
func (e *env) faulted(rules ...faulty.Rule) *faulty.Backend {
	return faulty.New(e.b, faulty.Config{Seed: 7, Rules: rules})
}

// testBatchPartialFailure: rows that fail are not applied and do not stop the others; sent again they
// get their own answer.
func testBatchPartialFailure(e *env) {
	name := e.createTable(backends.TableOptions{})
	f := e.faulted(faulty.Rule{Fault: faulty.RowError, Ops: faulty.OpAtomic, Range: backends.Range{Start: []byte("f"), End: []byte("g")}})
	ms := []backends.CondMutation{
		cm(absent("d", "a"), put("a", cell("d", "a", "1", e.ts))),
		cm(absent("d", "a"), put("f1", cell("d", "a", "1", e.ts))),
		cm(absent("d", "a"), put("z", cell("d", "a", "1", e.ts))),
		cm(absent("d", "a"), put("f2", cell("d", "a", "1", e.ts))),
	}
	applied, rowErrs, err := e.batch(f, name, ms...)
	if err != nil {
		e.Fatalf("CheckAndMutateBatch: %v", err)
	}
	for i, want := range []bool{true, false, true, false} {
		if failed := rowErrs != nil && errors.Is(rowErrs[i], faulty.ErrInjected); applied[i] != want || failed == want {
			e.Errorf("row %q: applied %v, error %v; want applied %v, else the injected error", ms[i].Mut.Key, applied[i], rowErrs, want)
		}
	}
	got := e.read(name, keys("a", "f1", "z", "f2"))
	for i, want := range [][]backends.Cell{{cell("d", "a", "1", e.ts)}, nil, {cell("d", "a", "1", e.ts)}, nil} {
		e.wantCells("row "+string(got[i].Key), got[i].Cells, want)
	}
	f.SetActive(false)
	applied, rowErrs, err = e.batch(f, name, ms...)
	if err != nil || rowErrs != nil || !slices.Equal(applied, []bool{false, true, false, true}) {
		e.Fatalf("batch sent again = %v, %v, %v; want [false true false true] (only the failed rows were still absent)", applied, rowErrs, err)
	}
}

// testBatchRetry: a batch whose reply was lost was applied; sent again, its conditions answer for the
// state it left, so a retried put-if-absent writes nothing twice.
func testBatchRetry(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("b", cell("d", "a", "1", e.ts)))
	f := e.faulted(faulty.Rule{Fault: faulty.AfterWrite, Ops: faulty.OpAtomic, Max: 1})
	ms := []backends.CondMutation{
		cm(absent("d", "a"), put("a", cell("d", "a", "first", e.ts))),
		cm(equals("d", "a", "1"), put("b", cell("d", "a", "2", e.ts+1))),
		cm(absent("d", "a"), put("b2", cell("d", "a", "first", e.ts))),
	}
	if _, _, err := e.batch(f, name, ms...); !errors.Is(err, faulty.ErrInjected) {
		e.Fatalf("CheckAndMutateBatch with its reply lost: %v, want the injected error", err)
	}
	again := []backends.CondMutation{
		cm(absent("d", "a"), put("a", cell("d", "a", "second", e.ts+1))),
		ms[1],
		cm(absent("d", "a"), put("b2", cell("d", "a", "second", e.ts+1))),
	}
	applied, rowErrs, err := e.batch(f, name, again...)
	if err != nil || rowErrs != nil || !slices.Equal(applied, []bool{false, false, false}) {
		e.Fatalf("retried batch = %v, %v, %v; want nothing applied a second time", applied, rowErrs, err)
	}
	got := e.read(name, keys("a", "b", "b2"))
	for i, want := range [][]backends.Cell{{cell("d", "a", "first", e.ts)}, {cell("d", "a", "2", e.ts+1)}, {cell("d", "a", "first", e.ts)}} {
		e.wantCells("row "+string(got[i].Key), got[i].Cells, want)
	}
}
