package testkit_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestRows(t *testing.T) {
	c := testkit.Cell("q1", "v1")
	if c.Family != "d" || c.Qualifier != "q1" || string(c.Value) != "v1" || c.Timestamp != 1 {
		t.Errorf("Cell = %+v", c)
	}
	rows := []backends.Row{{Key: []byte("a")}, {Key: []byte{0, 0xff}}}
	if got := testkit.Keys(rows); len(got) != 2 || !bytes.Equal(got[0], []byte("a")) || !bytes.Equal(got[1], []byte{0, 0xff}) {
		t.Errorf("Keys = %q", got)
	}
	if got := testkit.KeyStrings(rows); !slices.Equal(got, []string{"a", "\x00\xff"}) {
		t.Errorf("KeyStrings = %q", got)
	}
	if got := testkit.KeyStrings(nil); len(got) != 0 {
		t.Errorf("KeyStrings(nil) = %q", got)
	}
}

func TestApplyAndDeleteAtEnd(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	t.Cleanup(func() { b.Close() })
	if err := b.CreateTable(ctx, "t", backends.TableOptions{Families: []string{"d"}}); err != nil {
		t.Fatal(err)
	}
	put := backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{testkit.Cell("q", "v")}}
	if f := runFake(func(tb *fakeTB) { testkit.Apply(tb, ctx, b, "t", put) }); len(f.fatal) != 0 {
		t.Fatalf("Apply of a good row: fatal %q", f.fatal)
	}
	if n := testkit.Count(t, b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{})); n != 1 {
		t.Fatalf("%d rows after Apply, want 1", n)
	}
	// A row error fails the test as a whole-call error does.
	bad := backends.Mutation{Key: []byte("k2"), Cells: []backends.Cell{{Family: "nope", Qualifier: "q", Value: []byte("v")}}}
	if f := runFake(func(tb *fakeTB) { testkit.Apply(tb, ctx, b, "t", put, bad) }); len(f.fatal) != 1 {
		t.Errorf("Apply with a bad row: fatal %q", f.fatal)
	}
	if f := runFake(func(tb *fakeTB) { testkit.Apply(tb, ctx, b, "missing", put) }); len(f.fatal) != 1 {
		t.Errorf("Apply to a missing table: fatal %q", f.fatal)
	}

	f := runFake(func(tb *fakeTB) { testkit.DeleteAtEnd(tb, "t", b.DeleteTable) })
	if len(f.errs) != 0 {
		t.Fatalf("DeleteAtEnd of a table: errors %q", f.errs)
	}
	if _, err := b.Read(ctx, "t", [][]byte{[]byte("k")}, backends.ReadOptions{}); !errors.Is(err, backends.ErrTableNotFound) {
		t.Fatalf("table left after DeleteAtEnd: %v", err)
	}
	if f := runFake(func(tb *fakeTB) { testkit.DeleteAtEnd(tb, "t", b.DeleteTable) }); len(f.errs) != 1 {
		t.Errorf("DeleteAtEnd of a missing table: errors %q, want one", f.errs)
	}
	if f := runFake(func(tb *fakeTB) { testkit.DeleteAtEnd(tb, "t", b.DeleteTable, backends.ErrTableNotFound) }); len(f.errs) != 0 {
		t.Errorf("DeleteAtEnd of a missing table, tolerated: errors %q", f.errs)
	}
	var deadline time.Time
	runFake(func(tb *fakeTB) {
		testkit.DeleteAtEnd(tb, "x", func(ctx context.Context, _ string) error {
			deadline, _ = ctx.Deadline()
			return nil
		})
	})
	if d := time.Until(deadline); d < 50*time.Second || d > time.Minute {
		t.Errorf("DeleteAtEnd's context ends in %v, want a minute", d)
	}
}
