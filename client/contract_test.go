package client_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestApplyWholeCallError: a failure of the whole call (nothing written) is Apply's err, with nil
// rowErrs, as Bigtable's ApplyBulk; per-row failures stay in rowErrs.
func TestApplyWholeCallError(t *testing.T) {
	ctx := context.Background()
	muts := func(bad bool) []client.Mutation {
		var ms []client.Mutation
		for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
			ms = append(ms, client.Mutation{Key: []byte(k), Cells: []client.Cell{testkit.Cell("q", k)}})
		}
		if bad {
			ms = append(ms, client.Mutation{Key: nil, Cells: []client.Cell{testkit.Cell("q", "bad")}})
		}
		return ms
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		drop bool
		bad  bool
		want error
	}{
		{"missing table", ctx, true, false, client.ErrTableNotFound},
		{"missing table and a bad key", ctx, true, true, client.ErrTableNotFound},
		{"cancelled context", cancelled, false, false, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, tbl := newTable(t, "hash:4", client.WithBatchRows(2))
			if tt.drop {
				if err := c.DeleteTable(ctx, tbl.Name()); err != nil {
					t.Fatal(err)
				}
			}
			rowErrs, err := tbl.Apply(tt.ctx, muts(tt.bad))
			if rowErrs != nil || !errors.Is(err, tt.want) {
				t.Fatalf("Apply = %v, %v; want nil, %v", rowErrs, err, tt.want)
			}
		})
	}
	t.Run("per-row failures only", func(t *testing.T) {
		_, tbl := newTable(t, "hash:4")
		rowErrs, err := tbl.Apply(ctx, muts(true))
		if err != nil || len(rowErrs) != 7 || !errors.Is(rowErrs[6], client.ErrInvalidKey) {
			t.Fatalf("Apply = %v, %v; want per-row errors, the last ErrInvalidKey", rowErrs, err)
		}
	})
}

// shortReads breaks the driver contract: Read returns no rows at all.
type shortReads struct{ backends.Backend }

func (shortReads) Read(context.Context, string, [][]byte, backends.ReadOptions) ([]backends.Row, error) {
	return nil, nil
}

// TestGetReportsDriverContractViolation: a driver answering one key with no row is a bug, not a
// missing row.
func TestGetReportsDriverContractViolation(t *testing.T) {
	ctx := context.Background()
	c := client.New(shortReads{memory.New()})
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tbl.Get(ctx, []byte("k"))
	if err == nil || errors.Is(err, client.ErrNotFound) || !strings.Contains(err.Error(), "0 rows") {
		t.Fatalf("Get through a driver returning no row: %v; want a contract error, not ErrNotFound", err)
	}
	if _, err := tbl.GetMany(ctx, [][]byte{[]byte("k")}); err == nil {
		t.Fatal("GetMany through a driver returning no row: no error")
	}
}

// TestImportGaveUpKeepsLastError: a row that stops being retried because ctx ended during a backoff
// reports both the context's error and the last store error, visible to errors.Is and
// driverkit.IsRetryable.
func TestImportGaveUpKeepsLastError(t *testing.T) {
	busy := errors.New("server busy")
	one := func(yield func(client.ImportRow, error) bool) {
		yield(client.ImportRow{Source: 1, Mutation: client.Mutation{Key: []byte("k"), Cells: []client.Cell{testkit.Cell("q", "v")}}}, nil)
	}
	// The store always fails; ctx ends while the import sleeps between tries (nearly all of its time).
	// Should it end in the microseconds between a try and the import's look at ctx, the row fails
	// without a give-up: that run proves nothing, and the scenario runs again.
	for range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		var once atomic.Bool
		b := faulty.New(memory.New(), faulty.Config{
			Rules: []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpApply, Retryable: true, Err: busy}},
			OnInject: func(faulty.Event) {
				if once.CompareAndSwap(false, true) {
					time.AfterFunc(50*time.Millisecond, cancel)
				}
			},
		})
		c := client.New(b)
		tbl, err := c.CreateTable(context.Background(), "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
		if err != nil {
			t.Fatal(err)
		}
		var failed []client.FailedRow
		_, err = tbl.Import(ctx, one, client.ImportOptions{
			MaxAttempts: 1000, BaseBackoff: 20 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
			OnFailure: func(r client.FailedRow) { failed = append(failed, r) },
		})
		cancel()
		c.Close()
		if err == nil || len(failed) != 1 {
			t.Fatalf("Import: %v, %d failed rows; want an error and the one row failed", err, len(failed))
		}
		got := failed[0].Err
		if !strings.Contains(got.Error(), "gave up") {
			continue
		}
		if !errors.Is(got, busy) || !client.IsRetryable(got) || !errors.Is(got, context.Canceled) {
			t.Fatalf("failed row error %v: want the give-up to wrap the last error (retryable) and context.Canceled", got)
		}
		return
	}
	t.Fatal("ctx never ended during a backoff in 10 runs")
}
