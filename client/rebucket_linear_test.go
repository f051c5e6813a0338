package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestRebucketLinearizable runs backendtest's linearizability check (Linearizable/PutCheckAndMutateGet)
// through the client while the table is rebucketed: concurrent gets, puts and check-and-puts on a few
// rows, each through the next of three handles (each of its own client, so their views of the
// directory differ), must stay linearizable, one register per row, across every step of the move.
func TestRebucketLinearizable(t *testing.T) {
	stores := rebucketStores()
	for _, name := range []string{"memory", "local"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			b := stores[name](t)
			quiet := client.WithLogger(slog.New(slog.DiscardHandler))
			c := client.New(b, client.WithRouteRefresh(testRefresh), quiet)
			defer c.Close()
			tbl, err := c.CreateTable(ctx, "lin", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
			if err != nil {
				t.Fatal(err)
			}
			// Rows besides the registers, so that the copy (the migrate step) takes a while too.
			filler := make([]client.Mutation, 3000)
			for i := range filler {
				filler[i] = client.Mutation{Key: fmt.Appendf(nil, "f%05d", i), Cells: []client.Cell{{Family: client.DefaultFamily, Qualifier: "f", Value: []byte("x")}}}
			}
			if _, err := tbl.Apply(ctx, filler); err != nil {
				t.Fatal(err)
			}
			handles := make([]*client.Table, 3)
			for i := range handles {
				oc := client.New(b, client.WithRouteRefresh(testRefresh), quiet)
				defer oc.Close()
				if handles[i], err = oc.OpenTable(ctx, "lin", nil); err != nil {
					t.Fatal(err)
				}
			}
			var next atomic.Uint64
			handle := func() *client.Table { return handles[next.Add(1)%uint64(len(handles))] }
			col := client.Column{Family: client.DefaultFamily, Qualifier: "v"}

			done := make(chan struct{})
			var states []string
			rebucketed := make(chan error, 1)
			go func() {
				defer close(done)
				time.Sleep(20 * time.Millisecond) // some history before the pause
				rebucketed <- tbl.Rebucket(ctx, testkit.Salter(t, "hash:7"), client.RebucketOptions{
					Fence: testFence, Grace: testFence / 10,
					Progress: func(p client.RebucketProgress) { states = append(states, p.State) },
				})
				time.Sleep(20 * time.Millisecond) // and some after the old table is gone
			}()
			backendtest.CheckLinearizable(t, ctx, backendtest.Registers{
				Get: func(ctx context.Context, key []byte) (string, error) {
					row, err := handle().Get(ctx, key, client.Columns(col))
					switch {
					case errors.Is(err, client.ErrNotFound):
						return "", nil
					case err != nil || len(row.Cells) == 0:
						return "", err
					}
					return string(row.Cells[0].Value), nil
				},
				Put: func(ctx context.Context, key []byte, value string) error {
					return handle().Put(ctx, key, client.Cell{Family: col.Family, Qualifier: col.Qualifier, Value: []byte(value)})
				},
				CheckAndPut: func(ctx context.Context, key []byte, expect, value string) (bool, error) {
					cond := client.Condition{Family: col.Family, Qualifier: col.Qualifier, Value: []byte(expect)}
					m := client.Mutation{Key: key, Cells: []client.Cell{{Family: col.Family, Qualifier: col.Qualifier, Value: []byte(value)}}}
					return handle().CheckAndMutate(ctx, cond, m)
				},
				Done: done,
				// Paced, so that the history of the whole rebucket stays one the checker decides in
				// a second or two.
				Pause: time.Millisecond,
			})
			<-done
			if err := <-rebucketed; err != nil {
				t.Fatal(err)
			}
			if len(states) < 4 || states[len(states)-1] != "" {
				t.Fatalf("rebucket went through %q, want it to finish", states)
			}
			st, err := c.RebucketStatus(ctx, "lin")
			if err != nil || st.Spec != "hash:7" || st.State != "" {
				t.Fatalf("after the rebucket: %+v, %v; want hash:7 serving", st, err)
			}
		})
	}
}
