package memory_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	backendtest.RunWithOptions(t, backendtest.Options{MaxKeyLen: memory.MaxKeyLen, SplitKeysAreRegions: true},
		func(t *testing.T) backends.Backend {
			b := memory.New(memory.WithScanBatch(16))
			t.Cleanup(func() { b.Close() })
			return b
		})
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
		muts = append(muts, backends.Mutation{Key: fmt.Appendf(nil, "k%04d", i), Cells: []backends.Cell{testkit.Cell("q", "v")}})
	}
	testkit.Apply(t, context.Background(), b, "t", muts...)
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
			if _, err := b.Apply(ctx, "t", []backends.Mutation{{Key: []byte("z"), Cells: []backends.Cell{testkit.Cell("q", "v")}}}); err != nil {
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
	testkit.Apply(t, ctx, b, "free", backends.Mutation{Key: []byte("r"), Cells: []backends.Cell{{Qualifier: "q"}, {Family: "any", Qualifier: "q"}}})
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
	if _, err := b.Read(ctx, "t", [][]byte{[]byte("a")}, backends.ReadOptions{}); !errors.Is(err, backends.ErrClosed) {
		t.Errorf("Read after Close: %v", err)
	}
	if _, err := b.Apply(ctx, "t", nil); !errors.Is(err, backends.ErrClosed) {
		t.Errorf("Apply after Close: %v", err)
	}
	if err := b.CreateTable(ctx, "u", backends.TableOptions{}); !errors.Is(err, backends.ErrClosed) {
		t.Errorf("CreateTable after Close: %v", err)
	}
	for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if !errors.Is(err, backends.ErrClosed) {
			t.Errorf("Scan after Close: %v", err)
		}
	}
}
