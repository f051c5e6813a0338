package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const tbl = "t"

// setup returns a memory backend holding rows k000..k(n-1) and a faulty wrapper of it.
func setup(t *testing.T, n int, cfg faulty.Config) (*memory.Backend, *faulty.Backend) {
	t.Helper()
	ctx := context.Background()
	mem := memory.New(memory.WithScanBatch(7))
	t.Cleanup(func() { mem.Close() })
	if err := mem.CreateTable(ctx, tbl, backends.TableOptions{Families: []string{"d"}}); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		if _, err := mem.Apply(ctx, tbl, muts(0, n)); err != nil {
			t.Fatal(err)
		}
	}
	return mem, faulty.New(mem, cfg)
}

func key(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }

func muts(from, to int) []backends.Mutation {
	var ms []backends.Mutation
	for i := from; i < to; i++ {
		ms = append(ms, backends.Mutation{Key: key(i), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: key(i), Timestamp: 1}}})
	}
	return ms
}

func scanKeys(t *testing.T, b backends.Backend, r backends.Range, opts backends.ScanOptions) ([]string, error) {
	t.Helper()
	rows, err := testkit.CollectErr(b.Scan(context.Background(), tbl, r, opts))
	return testkit.KeyStrings(rows), err
}

func TestRowErrorsMakeAPartialApply(t *testing.T) {
	var mu sync.Mutex
	var events []string
	mem, f := setup(t, 0, faulty.Config{Seed: 1, Rules: []faulty.Rule{{Fault: faulty.RowError, Prob: 0.5, Retryable: true}},
		OnInject: func(e faulty.Event) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, string(e.Keys[0]))
		}})
	rowErrs, err := f.Apply(context.Background(), tbl, muts(0, 100))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for i, e := range rowErrs {
		if e != nil {
			if !driverkit.IsRetryable(e) || !errors.Is(e, faulty.ErrInjected) {
				t.Fatalf("row %d: %v is not a retryable ErrInjected", i, e)
			}
			failed = append(failed, string(key(i)))
		}
	}
	if len(failed) < 20 || len(failed) > 80 {
		t.Fatalf("%d of 100 rows failed with Prob 0.5", len(failed))
	}
	if !slices.Equal(failed, events) {
		t.Fatalf("events %q, failed rows %q", events, failed)
	}
	got, err := scanKeys(t, mem, backends.Range{}, backends.ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if slices.Contains(got, string(key(i))) == slices.Contains(failed, string(key(i))) {
			t.Fatalf("row %s: stored %v, failed %v", key(i), slices.Contains(got, string(key(i))), slices.Contains(failed, string(key(i))))
		}
	}
	if s := f.Stats(); s.RowErrors != int64(len(failed)) || s.Retryable != s.RowErrors || s.Injected() != s.RowErrors {
		t.Fatalf("stats %v, %d rows failed", s, len(failed))
	}
}

func TestSameSeedSameFaults(t *testing.T) {
	run := func(seed uint64) []bool {
		_, f := setup(t, 0, faulty.Config{Seed: seed, Rules: []faulty.Rule{{Fault: faulty.RowError, Prob: 0.3}}})
		var out []bool
		for range 3 { // a key rolls again on each try: the three tries differ
			rowErrs, err := f.Apply(context.Background(), tbl, muts(0, 50))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				out = append(out, rowErrs != nil && rowErrs[i] != nil)
			}
		}
		return out
	}
	a, b, c := run(7), run(7), run(8)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different faults")
	}
	if slices.Equal(a, c) {
		t.Fatal("seeds 7 and 8 gave the same 150 decisions")
	}
	if slices.Equal(a[:50], a[50:100]) {
		t.Fatal("a retried batch met exactly the same row faults")
	}
}

func TestAfterWriteWritesThenFails(t *testing.T) {
	var written [][]byte
	mem, f := setup(t, 0, faulty.Config{Rules: []faulty.Rule{
		{Fault: faulty.RowError, Range: backends.Range{Start: key(3), End: key(4)}},
		{Fault: faulty.AfterWrite, Max: 1},
	}, OnInject: func(e faulty.Event) {
		if e.Fault == faulty.AfterWrite {
			written = slices.Clone(e.Keys)
		}
	}})
	ctx := context.Background()
	rowErrs, err := f.Apply(ctx, tbl, muts(0, 5))
	if err == nil || rowErrs != nil || !errors.Is(err, faulty.ErrInjected) {
		t.Fatalf("Apply = %v, %v; want an injected whole-call error", rowErrs, err)
	}
	got, _ := scanKeys(t, mem, backends.Range{}, backends.ScanOptions{})
	want := []string{"k000", "k001", "k002", "k004"} // k003 failed by the RowError rule
	if !slices.Equal(got, want) || fmt.Sprintf("%s", written) != fmt.Sprintf("%s", want) {
		t.Fatalf("stored %q, event says %s; want %q", got, written, want)
	}
	// Max 1: the second call only meets the row error.
	rowErrs, err = f.Apply(ctx, tbl, muts(0, 5))
	if err != nil || rowErrs == nil || rowErrs[3] == nil || rowErrs[2] != nil {
		t.Fatalf("second Apply = %v, %v", rowErrs, err)
	}
	if s := f.Stats(); s.AfterWrites != 1 || s.RowErrors != 2 || !slices.Equal(s.PerRule, []int64{2, 1}) {
		t.Fatalf("stats %+v", s)
	}
}

func TestScanFailsMidStream(t *testing.T) {
	for seed := range uint64(20) {
		mem, f := setup(t, 50, faulty.Config{Seed: seed, Rules: []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpScan, AfterRows: 60}}})
		var cut int
		f2 := faulty.New(mem, faulty.Config{Seed: seed, Rules: []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpScan, AfterRows: 60}},
			OnInject: func(e faulty.Event) { cut = e.Rows }})
		got, err := scanKeys(t, f, backends.Range{}, backends.ScanOptions{})
		if !errors.Is(err, faulty.ErrInjected) {
			t.Fatalf("seed %d: scan ended with %v after %d rows; want the injected error", seed, err, len(got))
		}
		want, _ := scanKeys(t, mem, backends.Range{}, backends.ScanOptions{})
		if !slices.Equal(got, want[:len(got)]) {
			t.Fatalf("seed %d: rows before the error are not a prefix: %q", seed, got)
		}
		got2, _ := scanKeys(t, f2, backends.Range{}, backends.ScanOptions{})
		if cut != len(got2) || len(got2) != len(got) {
			t.Fatalf("seed %d: event says %d rows, scans gave %d and %d", seed, cut, len(got2), len(got))
		}
	}
}

func TestRangeAndTableRestrictRules(t *testing.T) {
	mem, f := setup(t, 20, faulty.Config{Rules: []faulty.Rule{
		{Fault: faulty.Error, Range: backends.Range{Start: key(10)}},
		{Fault: faulty.Error, Table: "other"},
	}})
	_ = mem
	ctx := context.Background()
	if _, err := scanKeys(t, f, backends.Range{End: key(10)}, backends.ScanOptions{}); err != nil {
		t.Fatalf("scan below the rule's range: %v", err)
	}
	if _, err := scanKeys(t, f, backends.Range{Start: key(5), End: key(11)}, backends.ScanOptions{}); err == nil {
		t.Fatal("scan overlapping the rule's range did not fail")
	}
	if _, err := f.Read(ctx, tbl, [][]byte{key(1), key(2)}, backends.ReadOptions{}); err != nil {
		t.Fatalf("read below the range: %v", err)
	}
	if _, err := f.Read(ctx, tbl, [][]byte{key(1), key(12)}, backends.ReadOptions{}); err == nil {
		t.Fatal("read of a key in the range did not fail")
	}
	if _, err := f.TableMeta(ctx, tbl); err != nil {
		t.Fatalf("TableMeta is not a data op: %v", err)
	}
	f.SetActive(false)
	if _, err := f.Read(ctx, tbl, [][]byte{key(12)}, backends.ReadOptions{}); err != nil {
		t.Fatalf("inactive wrapper injected: %v", err)
	}
}

func TestTimeoutAndDelay(t *testing.T) {
	_, f := setup(t, 5, faulty.Config{Rules: []faulty.Rule{
		{Fault: faulty.Delay, Ops: faulty.OpRead, Delay: 20 * time.Millisecond},
		{Fault: faulty.Timeout, Ops: faulty.OpApply, Delay: time.Millisecond, Retryable: true},
	}})
	ctx := context.Background()
	began := time.Now()
	rows, err := f.Read(ctx, tbl, [][]byte{key(1)}, backends.ReadOptions{})
	if err != nil || len(rows[0].Cells) != 1 || time.Since(began) < 20*time.Millisecond {
		t.Fatalf("delayed Read = %v, %v after %v", rows, err, time.Since(began))
	}
	_, err = f.Apply(ctx, tbl, muts(0, 1))
	if !errors.Is(err, context.DeadlineExceeded) || !driverkit.IsRetryable(err) {
		t.Fatalf("Apply = %v; want a retryable deadline error", err)
	}
	// The caller's cancellation cuts a delay short.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.Read(cctx, tbl, [][]byte{key(1)}, backends.ReadOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Read with a cancelled ctx = %v", err)
	}
	if s := f.Stats(); s.Delays != 2 || s.Timeouts != 1 || s.Injected() != 1 {
		t.Fatalf("stats %v", s)
	}
}

// TestCallsCountedPerOp: every call is counted under its own Op, faulted or not, and while injection
// is off, so a test can assert what reached the store.
func TestCallsCountedPerOp(t *testing.T) {
	ctx := context.Background()
	_, f := setup(t, 10, faulty.Config{Rules: []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpRead}}})
	if _, err := f.Read(ctx, tbl, [][]byte{key(1)}, backends.ReadOptions{}); !errors.Is(err, faulty.ErrInjected) {
		t.Fatalf("Read = %v, want the injected error", err)
	}
	f.SetActive(false)
	for range 2 {
		if _, err := scanKeys(t, f, backends.Range{}, backends.ScanOptions{Limit: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Apply(ctx, tbl, muts(20, 22)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tables(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[faulty.Op]int64{faulty.OpRead: 1, faulty.OpScan: 2, faulty.OpApply: 1, faulty.OpTable: 1, faulty.OpAtomic: 0}
	st := f.Stats()
	if !maps.Equal(st.OpCalls, want) || st.Calls != 5 {
		t.Fatalf("Stats: %d calls, per op %v; want 5, %v", st.Calls, st.OpCalls, want)
	}
}
