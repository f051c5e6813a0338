package client_test

import (
	"context"
	"errors"
	"testing"

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
