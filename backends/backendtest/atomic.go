package backendtest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

var atomicTests = []test{
	{"CheckAndMutate", testCheckAndMutate},
	{"CheckAndMutateBadInput", testCheckAndMutateBadInput},
	{"CheckAndMutateIsAtomic", testCheckAndMutateIsAtomic},
	{"Increment", testIncrement},
	{"IncrementIsAtomic", testIncrementIsAtomic},
}

func absent(fam, qual string) backends.Condition {
	return backends.Condition{Family: fam, Qualifier: qual}
}

func equals(fam, qual, val string) backends.Condition {
	return backends.Condition{Family: fam, Qualifier: qual, Value: []byte(val)}
}

func testCheckAndMutate(e *env) {
	ra := e.b
	name := e.createTable(backends.TableOptions{})
	steps := []struct {
		name    string
		cond    backends.Condition
		m       backends.Mutation
		applied bool
		want    []backends.Cell // row "r" afterwards
	}{
		{"put if absent, on a missing row", absent("d", "a"), put("r", cell("d", "a", "1", e.ts)), true, []backends.Cell{cell("d", "a", "1", e.ts)}},
		{"put if absent, column there", absent("d", "a"), put("r", cell("d", "a", "2", e.ts+1)), false, []backends.Cell{cell("d", "a", "1", e.ts)}},
		{"put if equal", equals("d", "a", "1"), put("r", cell("d", "a", "2", e.ts+1), cell("x", "b", "b", e.ts)), true,
			[]backends.Cell{cell("d", "a", "2", e.ts+1), cell("x", "b", "b", e.ts)}},
		{"put if equal, value differs", equals("d", "a", "1"), put("r", cell("d", "a", "3", e.ts+2)), false,
			[]backends.Cell{cell("d", "a", "2", e.ts+1), cell("x", "b", "b", e.ts)}},
		{"value of an absent column", equals("d", "zz", "v"), put("r", cell("d", "a", "3", e.ts+2)), false,
			[]backends.Cell{cell("d", "a", "2", e.ts+1), cell("x", "b", "b", e.ts)}},
		{"condition on another column", equals("x", "b", "b"), del("r", col("d", "a")), true, []backends.Cell{cell("x", "b", "b", e.ts)}},
		{"delete row if absent, column there", absent("x", "b"), del("r"), false, []backends.Cell{cell("x", "b", "b", e.ts)}},
		{"delete row if equal", equals("x", "b", "b"), del("r"), true, nil},
	}
	for _, st := range steps {
		applied, err := ra.CheckAndMutate(e.ctx, name, st.cond, st.m)
		if err != nil || applied != st.applied {
			e.Fatalf("%s: CheckAndMutate = %v, %v; want %v", st.name, applied, err, st.applied)
		}
		e.wantCells(st.name, e.readOne(name, []byte("r")).Cells, st.want)
	}
	// An empty value matches an empty cell as well as an absent one (HBase's rule).
	e.apply(name, put("e", cell("d", "a", "", e.ts)))
	if applied, err := ra.CheckAndMutate(e.ctx, name, equals("d", "a", ""), put("e", cell("d", "b", "set", e.ts))); err != nil || !applied {
		e.Fatalf("empty expected value, empty cell: %v, %v; want applied", applied, err)
	}
	if applied, err := ra.CheckAndMutate(e.ctx, name, equals("d", "b", ""), put("e", cell("d", "c", "set", e.ts))); err != nil || applied {
		e.Fatalf("empty expected value, cell holding a value: %v, %v; want not applied", applied, err)
	}
}

func testCheckAndMutateBadInput(e *env) {
	ra := e.b
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r", cell("d", "a", "v", e.ts)))
	tests := []struct {
		name string
		cond backends.Condition
		m    backends.Mutation
		want error
	}{
		{"empty key", absent("d", "a"), backends.Mutation{Cells: []backends.Cell{cell("d", "a", "v", e.ts)}}, backends.ErrInvalidKey},
		{"put without cells", absent("d", "a"), backends.Mutation{Key: []byte("r")}, backends.ErrInvalidArgument},
		{"unknown family in the mutation", absent("d", "b"), put("r", cell("zz", "a", "v", e.ts)), backends.ErrInvalidArgument},
		{"unknown family in the condition", absent("zz", "a"), put("r", cell("d", "a", "v", e.ts)), backends.ErrInvalidArgument},
	}
	for _, tt := range tests {
		if applied, err := ra.CheckAndMutate(e.ctx, name, tt.cond, tt.m); applied || !errors.Is(err, tt.want) {
			e.Errorf("%s: CheckAndMutate = %v, %v; want false, %v", tt.name, applied, err, tt.want)
		}
	}
	e.wantCells("row after refused calls", e.readOne(name, []byte("r")).Cells, []backends.Cell{cell("d", "a", "v", e.ts)})
	if _, err := ra.CheckAndMutate(e.ctx, e.tableName(), absent("d", "a"), put("r", cell("d", "a", "v", e.ts))); !errors.Is(err, backends.ErrTableNotFound) {
		e.Errorf("CheckAndMutate on a missing table: %v, want ErrTableNotFound", err)
	}
}

// testCheckAndMutateIsAtomic: concurrent compare-and-set increments lose no update.
func testCheckAndMutateIsAtomic(e *env) {
	ra := e.b
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("n", cell("d", "n", "0", e.ts)))
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for done := 0; done < each; {
				cur := e.readOne(name, []byte("n")).Cells
				if len(cur) != 1 {
					errs <- fmt.Errorf("counter row = %s", fmtCells(cur))
					return
				}
				var n int
				fmt.Sscan(string(cur[0].Value), &n)
				// Each write carries a newer version: the store's clock may not tick between two.
				applied, err := ra.CheckAndMutate(e.ctx, name, equals("d", "n", string(cur[0].Value)),
					put("n", cell("d", "n", fmt.Sprint(n+1), e.ts+int64(n+1))))
				if err != nil {
					errs <- err
					return
				}
				if applied {
					done++
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.Fatalf("concurrent CheckAndMutate: %v", err)
	}
	e.wantCells("counter", e.readOne(name, []byte("n")).Cells, []backends.Cell{cell("d", "n", fmt.Sprint(workers*each), e.ts+workers*each)})
}

func counterCell(fam, qual string, n int64) backends.Cell {
	return backends.Cell{Family: fam, Qualifier: qual, Value: driverkit.CounterBytes(n), Timestamp: anyTS}
}

func testIncrement(e *env) {
	ra := e.b
	name := e.createTable(backends.TableOptions{})
	got, err := ra.Increment(e.ctx, name, []byte("r"), []backends.Increment{{Family: "d", Qualifier: "n", Delta: 5}, {Family: "x", Qualifier: "m", Delta: -2}})
	if err != nil {
		e.Fatalf("Increment of absent counters: %v", err)
	}
	e.wantCells("Increment's result", got, []backends.Cell{counterCell("d", "n", 5), counterCell("x", "m", -2)})
	got, err = ra.Increment(e.ctx, name, []byte("r"), []backends.Increment{{Family: "x", Qualifier: "m", Delta: 10}, {Family: "d", Qualifier: "n", Delta: 1}})
	if err != nil {
		e.Fatalf("second Increment: %v", err)
	}
	e.wantCells("second Increment's result, in the order asked", got, []backends.Cell{counterCell("x", "m", 8), counterCell("d", "n", 6)})
	e.wantCells("row read back", e.readOne(name, []byte("r")).Cells, []backends.Cell{counterCell("d", "n", 6), counterCell("x", "m", 8)})

	// A counter written by a put of 8 bytes counts on; anything else is refused, changing nothing.
	e.apply(name, put("p", cell("d", "n", string(driverkit.CounterBytes(40)), e.ts), cell("d", "s", "text", e.ts)))
	if got, err := ra.Increment(e.ctx, name, []byte("p"), []backends.Increment{{Family: "d", Qualifier: "n", Delta: 2}}); err != nil ||
		!cellsEqual(got, []backends.Cell{counterCell("d", "n", 42)}) {
		e.Fatalf("Increment of a put counter = %s, %v; want 42", fmtCells(got), err)
	}
	bad := []struct {
		name string
		key  []byte
		incs []backends.Increment
		want error
	}{
		{"not a counter", []byte("p"), []backends.Increment{{Family: "d", Qualifier: "n", Delta: 1}, {Family: "d", Qualifier: "s", Delta: 1}}, backends.ErrInvalidArgument},
		{"no increments", []byte("p"), nil, backends.ErrInvalidArgument},
		{"one column twice", []byte("p"), []backends.Increment{{Family: "d", Qualifier: "n", Delta: 1}, {Family: "d", Qualifier: "n", Delta: 1}}, backends.ErrInvalidArgument},
		{"unknown family", []byte("p"), []backends.Increment{{Family: "zz", Qualifier: "n", Delta: 1}}, backends.ErrInvalidArgument},
		{"empty key", nil, []backends.Increment{{Family: "d", Qualifier: "n", Delta: 1}}, backends.ErrInvalidKey},
	}
	for _, tt := range bad {
		if _, err := ra.Increment(e.ctx, name, tt.key, tt.incs); !errors.Is(err, tt.want) {
			e.Errorf("%s: Increment: %v, want %v", tt.name, err, tt.want)
		}
	}
	e.wantCells("row after refused increments", e.readOne(name, []byte("p")).Cells,
		[]backends.Cell{counterCell("d", "n", 42), cell("d", "s", "text", e.ts)})
	if _, err := ra.Increment(e.ctx, e.tableName(), []byte("r"), []backends.Increment{{Family: "d", Qualifier: "n", Delta: 1}}); !errors.Is(err, backends.ErrTableNotFound) {
		e.Errorf("Increment on a missing table: %v, want ErrTableNotFound", err)
	}
}

func testIncrementIsAtomic(e *env) {
	ra := e.b
	name := e.createTable(backends.TableOptions{})
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				if _, err := ra.Increment(e.ctx, name, []byte("c"), []backends.Increment{{Family: "d", Qualifier: "n", Delta: 1}}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.Fatalf("concurrent Increment: %v", err)
	}
	e.wantCells("counter", e.readOne(name, []byte("c")).Cells, []backends.Cell{counterCell("d", "n", workers*each)})
}
