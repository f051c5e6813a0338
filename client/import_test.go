package client_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// importInput yields n rows; every 97th has an empty key and every 101st an input error.
func importInput(n int) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			row := client.ImportRow{Source: i, Mutation: client.Mutation{
				Key:   []byte(fmt.Sprintf("%010d", i)),
				Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte(fmt.Sprint(i))}},
			}}
			var err error
			switch {
			case i%97 == 0:
				row.Key = nil
			case i%101 == 0:
				err = errors.New("unparsable line")
			}
			if !yield(row, err) {
				return
			}
		}
	}
}

func TestImportAccountsForEveryRow(t *testing.T) {
	ctx := context.Background()
	// One Apply in three fails as a whole with a retryable error: the importer must retry, not drop.
	b := faulty.New(memory.New(), faulty.Config{Seed: 1, Rules: []faulty.Rule{
		{Fault: faulty.Error, Ops: faulty.OpApply, Prob: 1.0 / 3, Retryable: true, Err: errors.New("server busy")},
	}})
	c := client.New(b)
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:16")})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	failed := map[int]error{}
	var progressCalls atomic.Int64
	stats, err := tbl.Import(ctx, importInput(n), client.ImportOptions{
		Workers: 4, BatchRows: 100, BaseBackoff: 1,
		OnFailure: func(fr client.FailedRow) {
			i := fr.Row.Source.(int)
			if _, dup := failed[i]; dup {
				t.Errorf("row %d reported twice", i)
			}
			failed[i] = fr.Err
		},
		Progress: func(client.ImportStats) { progressCalls.Add(1) },
	})
	if !errors.Is(err, client.ErrRowsFailed) {
		t.Fatalf("Import: %v, want ErrRowsFailed", err)
	}
	wantFailed := 0
	for i := range n {
		bad := i%97 == 0 || i%101 == 0
		if bad {
			wantFailed++
		}
		if _, ok := failed[i]; ok != bad {
			t.Fatalf("row %d: reported failed = %v", i, ok)
		}
	}
	if stats.Read != n || stats.Failed != int64(wantFailed) || stats.Written != int64(n-wantFailed) {
		t.Fatalf("stats %+v: want read %d, failed %d, written %d", stats, n, wantFailed, n-wantFailed)
	}
	if stats.Retried == 0 {
		t.Fatal("no retries counted although every third batch failed")
	}
	if progressCalls.Load() == 0 {
		t.Fatal("progress never reported")
	}
	if !errors.Is(failed[97], client.ErrInvalidKey) {
		t.Fatalf("empty key failed with %v", failed[97])
	}
	// The stats add up against the table itself.
	if scanned := int64(testkit.Count(t, tbl.Scan(ctx, client.Range{}))); scanned != stats.Written {
		t.Fatalf("table holds %d rows, import says %d written", scanned, stats.Written)
	}
}

func TestImportCancelReportsPendingRows(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	_, tbl := newTable(t, "hash:64")
	var failed atomic.Int64
	input := func(yield func(client.ImportRow, error) bool) {
		for row, err := range importInput(1_000_000) {
			if k := row.Source.(int); k == 5000 {
				cancel()
			}
			if !yield(row, err) {
				return
			}
		}
	}
	stats, err := tbl.Import(ctx, input, client.ImportOptions{
		BatchRows: 1000, // most rows are still pending in bucket batches when ctx ends
		OnFailure: func(client.FailedRow) { failed.Add(1) },
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import: %v, want context.Canceled", err)
	}
	if stats.Read != stats.Written+stats.Failed || stats.Failed != failed.Load() {
		t.Fatalf("after cancel: %+v (reported %d): every row read must end written or reported", stats, failed.Load())
	}
	if stats.Read >= 1_000_000 {
		t.Fatal("import did not stop promptly")
	}
}

// TestImportRetriesItsRoute: the directory read an import starts with fails retryably (its region
// moving after a server died). Fewer times than MaxAttempts, and the import waits it out and writes
// every row; as many times, and it fails whole, retryable, before reading a row.
func TestImportRetriesItsRoute(t *testing.T) {
	for _, tc := range []struct {
		fails int
		ok    bool
	}{{2, true}, {3, false}} {
		t.Run(fmt.Sprintf("%d failed reads", tc.fails), func(t *testing.T) {
			ctx := context.Background()
			b := faulty.New(memory.New(), faulty.Config{Seed: 1, Rules: []faulty.Rule{
				{Fault: faulty.Error, Ops: faulty.OpRead, Table: client.DirTable, Retryable: true, Max: tc.fails},
			}})
			b.SetActive(false)
			c := client.New(b, client.WithRouteRefresh(time.Millisecond))
			defer c.Close()
			tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(5 * time.Millisecond) // the handle's view of the directory is stale: Import reads it
			b.SetActive(true)
			rows := func(yield func(client.ImportRow, error) bool) {
				for i := range 10 {
					if !yield(client.ImportRow{Mutation: client.Mutation{Key: fmt.Appendf(nil, "k%d", i), Cells: []client.Cell{{Family: client.DefaultFamily, Qualifier: "q", Value: []byte("v")}}}}, nil) {
						return
					}
				}
			}
			st, err := tbl.Import(ctx, rows, client.ImportOptions{MaxAttempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
			if got := b.Stats().Errors; got != int64(tc.fails) {
				t.Fatalf("%d directory reads failed, want %d", got, tc.fails)
			}
			if tc.ok {
				if err != nil || st.Written != 10 {
					t.Fatalf("import: %+v, %v; want 10 rows written", st, err)
				}
				return
			}
			if !client.IsRetryable(err) || st.Read != 0 {
				t.Fatalf("import: %+v, %v; want a retryable error before any row was read", st, err)
			}
		})
	}
}
