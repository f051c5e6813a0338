package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
)

func cell(q, v string) backends.Cell {
	return backends.Cell{Family: "d", Qualifier: q, Value: []byte(v), Timestamp: 1}
}

func newTable(t *testing.T, opts ...memory.Option) *memory.Backend {
	t.Helper()
	b := memory.New(opts...)
	t.Cleanup(func() { b.Close() })
	if err := b.CreateTable(context.Background(), "t", backends.TableOptions{Families: []string{"d", "x"}}); err != nil {
		t.Fatal(err)
	}
	return b
}

func fill(t *testing.T, b *memory.Backend, n int) {
	t.Helper()
	var muts []backends.Mutation
	for i := range n {
		muts = append(muts, backends.Mutation{Key: fmt.Appendf(nil, "k%04d", i), Cells: []backends.Cell{cell("q", "v")}})
	}
	if rowErrs, err := b.Apply(context.Background(), "t", muts); err != nil || rowErrs != nil {
		t.Fatal(rowErrs, err)
	}
}

// recorder counts hook calls by op.
type recorder struct {
	mu    sync.Mutex
	calls map[string]int
	fail  func(op string, key []byte) error
}

func (r *recorder) hook(op, _ string, key []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[op]++
	if r.fail != nil {
		return r.fail(op, key)
	}
	return nil
}

func (r *recorder) count(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[op]
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = nil
}

func TestHookCalls(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	b := newTable(t, memory.WithHook(rec.hook))
	fill(t, b, 50)
	if rec.count(memory.OpCreateTable) != 1 || rec.count(memory.OpApply) != 1 || rec.count(memory.OpApplyRow) != 50 {
		t.Fatalf("calls after create + one Apply of 50 rows: %v", rec.calls)
	}
	rec.reset()
	if _, err := b.Read(ctx, "t", [][]byte{[]byte("k0001"), []byte("nope")}, backends.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	if rec.count(memory.OpRead) != 1 || rec.count(memory.OpReadRow) != 2 {
		t.Fatalf("calls for a Read of 2 keys: %v", rec.calls)
	}
	rec.reset()
	for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{Limit: 7}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if rec.count(memory.OpScan) != 1 || rec.count(memory.OpScanRow) != 7 {
		t.Fatalf("calls for a scan with limit 7: %v", rec.calls)
	}
}

func TestHookFailsApplyAsAWhole(t *testing.T) {
	ctx := context.Background()
	rec := &recorder{}
	b := newTable(t, memory.WithHook(rec.hook))
	rec.fail = func(op string, _ []byte) error {
		if op == memory.OpApply {
			return backends.Retryable(errors.New("server busy"))
		}
		return nil
	}
	rowErrs, err := b.Apply(ctx, "t", []backends.Mutation{{Key: []byte("a"), Cells: []backends.Cell{cell("q", "v")}}})
	if !backends.IsRetryable(err) || rowErrs != nil {
		t.Fatalf("Apply = %v, %v; want a retryable error for the whole call", rowErrs, err)
	}
	rec.fail = nil
	if rows, _ := b.Read(ctx, "t", [][]byte{[]byte("a")}, backends.ReadOptions{}); len(rows[0].Cells) != 0 {
		t.Fatal("a failed Apply wrote its row")
	}
}

func TestHookFailsOneRow(t *testing.T) {
	ctx := context.Background()
	injected := errors.New("injected")
	b := newTable(t, memory.WithHook(func(op, _ string, key []byte) error {
		if op == memory.OpApplyRow && string(key) == "b" {
			return injected
		}
		return nil
	}))
	muts := []backends.Mutation{
		{Key: []byte("a"), Cells: []backends.Cell{cell("q", "v")}},
		{Key: []byte("b"), Cells: []backends.Cell{cell("q", "v")}},
		{Key: []byte("c"), Cells: []backends.Cell{cell("q", "v")}},
	}
	rowErrs, err := b.Apply(ctx, "t", muts)
	if err != nil || len(rowErrs) != 3 || rowErrs[0] != nil || !errors.Is(rowErrs[1], injected) || rowErrs[2] != nil {
		t.Fatalf("Apply = %v, %v", rowErrs, err)
	}
	rows, err := b.Read(ctx, "t", [][]byte{[]byte("a"), []byte("b"), []byte("c")}, backends.ReadOptions{})
	if err != nil || len(rows[0].Cells) != 1 || len(rows[1].Cells) != 0 || len(rows[2].Cells) != 1 {
		t.Fatalf("rows after a failed row: %v, %v", rows, err)
	}
}

func TestHookEndsScan(t *testing.T) {
	ctx := context.Background()
	injected := errors.New("region moved")
	b := newTable(t, memory.WithHook(func(op, _ string, key []byte) error {
		if op == memory.OpScanRow && string(key) == "k0010" {
			return injected
		}
		return nil
	}))
	fill(t, b, 30)
	var n int
	var last error
	for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if last != nil {
			t.Fatal("row after the error")
		}
		if err != nil {
			last = err
			continue
		}
		n++
	}
	if n != 10 || !errors.Is(last, injected) {
		t.Fatalf("scan = %d rows then %v; want 10 rows then the injected error", n, last)
	}
}

func TestHookDelay(t *testing.T) {
	// A slow hook slows the call, as a slow server would, and is called outside any lock: a Read
	// proceeds while a scan's row hook sleeps.
	ctx := context.Background()
	release := make(chan struct{})
	entered := make(chan struct{})
	b := newTable(t, memory.WithHook(func(op, _ string, key []byte) error {
		if op == memory.OpScanRow {
			close(entered)
			<-release
		}
		return nil
	}))
	fill(t, b, 1)
	done := make(chan error)
	go func() {
		for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	<-entered
	if _, err := b.Apply(ctx, "t", []backends.Mutation{{Key: []byte("other"), Cells: []backends.Cell{cell("q", "v")}}}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestLimitPushdown(t *testing.T) {
	ctx := context.Background()
	var examined int
	var mu sync.Mutex
	b := newTable(t, memory.WithHook(func(op, _ string, _ []byte) error {
		if op == memory.OpScanRow {
			mu.Lock()
			examined++
			mu.Unlock()
		}
		return nil
	}), memory.WithScanBatch(100))
	fill(t, b, 500)
	for _, reverse := range []bool{false, true} {
		examined = 0
		n := 0
		for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{Limit: 3, Reverse: reverse}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n != 3 || examined != 3 {
			t.Fatalf("limit 3 (reverse %v): %d rows, %d rows taken from the table", reverse, n, examined)
		}
	}
}

func TestWriteSameTableDuringScan(t *testing.T) {
	// The lock is not held while yielding: the consumer may write the table it scans, and rows it
	// adds past the current batch are seen.
	ctx := context.Background()
	b := newTable(t, memory.WithScanBatch(4))
	fill(t, b, 10)
	var got []string
	for row, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(row.Key))
		if string(row.Key) == "k0000" {
			if _, err := b.Apply(ctx, "t", []backends.Mutation{{Key: []byte("z"), Cells: []backends.Cell{cell("q", "v")}}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != 11 || got[10] != "z" {
		t.Fatalf("scan = %q", got)
	}
}

func TestDeleteTableDuringScan(t *testing.T) {
	ctx := context.Background()
	b := newTable(t, memory.WithScanBatch(4))
	fill(t, b, 10)
	var last error
	n := 0
	for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 1 {
			if err := b.DeleteTable(ctx, "t"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n != 4 || !errors.Is(last, backends.ErrTableNotFound) {
		t.Fatalf("scan of a table deleted under it: %d rows, then %v; want the batch, then ErrTableNotFound", n, last)
	}
}

func TestSemantics(t *testing.T) {
	ctx := context.Background()
	b := newTable(t, memory.WithClock(func() time.Time { return time.UnixMilli(5000) }))
	apply := func(m backends.Mutation) error {
		rowErrs, err := b.Apply(ctx, "t", []backends.Mutation{m})
		if err == nil && rowErrs != nil {
			err = rowErrs[0]
		}
		return err
	}
	read := func(key string) []backends.Cell {
		rows, err := b.Read(ctx, "t", [][]byte{[]byte(key)}, backends.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return rows[0].Cells
	}
	// Families are checked, as HBase checks them.
	if err := apply(backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{{Family: "nope", Qualifier: "q"}}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("put to an unknown family: %v", err)
	}
	if err := apply(backends.Mutation{Key: []byte("r")}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("put with no cells: %v", err)
	}
	if err := apply(backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Timestamp: -1}}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("negative timestamp: %v", err)
	}
	// The clock stamps timestamp 0.
	if err := apply(backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{
		{Family: "d", Qualifier: "a", Value: []byte("1")}, {Family: "d", Qualifier: "b", Value: []byte("2")},
		{Family: "x", Qualifier: "a", Value: []byte("3")},
	}}); err != nil {
		t.Fatal(err)
	}
	if c := read("r"); len(c) != 3 || c[0].Timestamp != 5000 {
		t.Fatalf("row = %+v", c)
	}
	// An empty qualifier in a delete names the whole family.
	if err := apply(backends.Mutation{Key: []byte("r"), Delete: true, Cells: []backends.Cell{{Family: "d"}}}); err != nil {
		t.Fatal(err)
	}
	if c := read("r"); len(c) != 1 || c[0].Family != "x" {
		t.Fatalf("after deleting family d: %+v", c)
	}
	// A table created without families takes any.
	if err := b.CreateTable(ctx, "free", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if rowErrs, err := b.Apply(ctx, "free", []backends.Mutation{{Key: []byte("r"), Cells: []backends.Cell{{Qualifier: "q"}, {Family: "any", Qualifier: "q"}}}}); err != nil || rowErrs != nil {
		t.Fatal(rowErrs, err)
	}
	// Split keys must be non-empty and ascending.
	for _, splits := range [][][]byte{{[]byte("b"), []byte("a")}, {[]byte("a"), []byte("a")}, {{}}} {
		if err := b.CreateTable(ctx, "bad", backends.TableOptions{SplitKeys: splits}); !errors.Is(err, backends.ErrInvalidArgument) {
			t.Errorf("split keys %q: %v", splits, err)
		}
	}
	regions, err := b.Regions(ctx, "t")
	if err != nil || !slices.EqualFunc(regions, [][]byte{{}}, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Errorf("Regions of an unsplit table = %q, %v", regions, err)
	}
}

func TestClosed(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	if err := b.CreateTable(ctx, "t", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := b.Read(ctx, "t", [][]byte{[]byte("a")}, backends.ReadOptions{}); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if _, err := b.Apply(ctx, "t", nil); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Apply after Close: %v", err)
	}
	if err := b.CreateTable(ctx, "u", backends.TableOptions{}); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("CreateTable after Close: %v", err)
	}
	for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if !errors.Is(err, memory.ErrClosed) {
			t.Errorf("Scan after Close: %v", err)
		}
	}
}
