package memory

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
)

func TestTables(t *testing.T) {
	ctx := context.Background()
	b := New()
	for _, name := range []string{"b", "a", "c"} {
		if err := b.CreateTable(ctx, name, backends.TableOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.DeleteTable(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Tables(ctx); err != nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Tables: %q, %v; want [a b]", got, err)
	}
	b.Close()
	if _, err := b.Tables(ctx); !errors.Is(err, backends.ErrClosed) {
		t.Fatalf("Tables after Close: %v, want ErrClosed", err)
	}
}
