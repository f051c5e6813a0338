package client_test

import (
	"context"
	"errors"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
)

func TestCheckAndMutateAndIncrement(t *testing.T) {
	ctx := context.Background()
	_, tbl := newTable(t, "hash:8")
	key := []byte("user/42")
	m := client.Mutation{Key: key, Cells: []client.Cell{{Family: "d", Qualifier: "state", Value: []byte("new"), Timestamp: 1}}}
	for i, want := range []bool{true, false} { // put if absent: once only
		applied, err := tbl.CheckAndMutate(ctx, client.Condition{Family: "d", Qualifier: "state"}, m)
		if err != nil || applied != want {
			t.Fatalf("CheckAndMutate #%d = %v, %v; want %v", i, applied, err, want)
		}
	}
	next := client.Mutation{Key: key, Cells: []client.Cell{{Family: "d", Qualifier: "state", Value: []byte("paid"), Timestamp: 2}}}
	if applied, err := tbl.CheckAndMutate(ctx, client.Condition{Family: "d", Qualifier: "state", Value: []byte("new")}, next); err != nil || !applied {
		t.Fatalf("CheckAndMutate on the expected value = %v, %v", applied, err)
	}
	if row, err := tbl.Get(ctx, key); err != nil || string(row.Cells[0].Value) != "paid" {
		t.Fatalf("row = %+v, %v", row, err)
	}
	if _, err := tbl.CheckAndMutate(ctx, client.Condition{Family: "d", Qualifier: "state"}, client.Mutation{Cells: m.Cells}); !errors.Is(err, client.ErrInvalidKey) {
		t.Fatalf("CheckAndMutate with an empty key: %v, want ErrInvalidKey", err)
	}

	for want := int64(3); want <= 9; want += 3 {
		cells, err := tbl.Increment(ctx, key, client.Increment{Family: "d", Qualifier: "visits", Delta: 3})
		if err != nil || len(cells) != 1 {
			t.Fatalf("Increment = %v, %v", cells, err)
		}
		if n, ok := client.CounterValue(cells[0]); !ok || n != want {
			t.Fatalf("counter = %d (%v), want %d", n, ok, want)
		}
	}
}

// noAtomic hides the driver's atomic operations.
type noAtomic struct{ backends.Backend }

func TestAtomicUnsupported(t *testing.T) {
	ctx := context.Background()
	c := client.New(noAtomic{memory.New()})
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: mustSalter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Increment(ctx, []byte("k"), client.Increment{Family: "d", Qualifier: "n", Delta: 1}); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("Increment without RowAtomic: %v, want ErrUnsupported", err)
	}
	if _, err := tbl.CheckAndMutate(ctx, client.Condition{Family: "d", Qualifier: "n"}, client.Mutation{Key: []byte("k"), Delete: true}); !errors.Is(err, client.ErrUnsupported) {
		t.Errorf("CheckAndMutate without RowAtomic: %v, want ErrUnsupported", err)
	}
}
