package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// slowCalls make calls and streams pause, so that a cancellation lands while I/O is in flight.
var slowCalls = []faulty.Rule{
	{Fault: faulty.Delay, Prob: 0.3, Delay: 200 * time.Microsecond, AfterRows: 30},
}

// randomCancel returns a context cancelled after a random time up to max.
func randomCancel(rng *rand.Rand, maxWait time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(time.Duration(rng.Int64N(int64(maxWait))), cancel)
	return ctx, func() { timer.Stop(); cancel() }
}

// TestCancelScans cancels scans at random points: from the consumer after k rows (no row may follow
// the cancellation, and the error must be ctx's), from a timer, and by breaking out of the loop. The
// rows given are always a prefix of the reference, and no goroutine outlives the scans.
func TestCancelScans(t *testing.T) {
	ks := scanKeys()
	want := expected(ks, client.Range{}, false, 0, nil)
	var scans, cut int
	for _, spec := range []string{"hash:16", "none"} {
		mem := newMemTable(t, spec, ks)
		for seed := range uint64(seedCount(t, 40)) {
			rng := rand.New(rand.NewPCG(seed, 0xca9))
			f := faulty.New(mem, faulty.Config{Seed: seed, Rules: slowCalls})
			tbl := openOn(t, f, client.WithScanConcurrency(1+rng.IntN(8)), client.WithPrefetch(1+rng.IntN(32)))

			// From the consumer, after k rows.
			k := rng.IntN(len(want) + 1)
			ctx, cancel := context.WithCancel(context.Background())
			if k == 0 {
				cancel()
			}
			var got []client.Row
			var err error
			for row, e := range tbl.Scan(ctx, client.Range{}) {
				if e != nil {
					err = e
					break
				}
				got = append(got, row)
				if len(got) == k {
					cancel()
				}
			}
			cancel()
			if cerr := checkScan(want, got, err); cerr != nil {
				t.Fatalf("%s seed %d, cancel after %d rows: %v", spec, seed, k, cerr)
			}
			if k < len(want) && (len(got) != k || !errors.Is(err, context.Canceled)) {
				t.Fatalf("%s seed %d: cancelled after %d rows, got %d rows and %v", spec, seed, k, len(got), err)
			}

			// From a timer.
			ctx, cancel = randomCancel(rng, 3*time.Millisecond)
			got, err = testkit.CollectErr(tbl.Scan(ctx, client.Range{}, client.Reverse()))
			cancel()
			if cerr := checkScan(expected(ks, client.Range{}, true, 0, nil), got, err); cerr != nil {
				t.Fatalf("%s seed %d, timer: %v", spec, seed, cerr)
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Fatalf("%s seed %d, timer: %v is not ctx's error", spec, seed, err)
			}
			if err != nil {
				cut++
			}

			// Breaking out of the loop.
			n := 0
			for range tbl.Scan(context.Background(), client.Range{}) {
				if n++; n == k {
					break
				}
			}
			scans += 3
		}
	}
	goleak.VerifyNone(t)
	t.Logf("%d cancelled scans (%d cut by a timer), no goroutine left", scans, cut)
	if cut == 0 {
		t.Fatal("no timer cancellation landed during a scan: the test proves nothing")
	}
}

// TestCancelBatches cancels Table.Apply and GetMany at random times while batches are in flight.
// Apply: every row ends with an outcome, rows without an error are stored and rows with one are not;
// GetMany: the right rows, or ctx's error.
func TestCancelBatches(t *testing.T) {
	const n = 600
	var partial, getCut int
	for seed := range uint64(seedCount(t, 40)) {
		rng := rand.New(rand.NewPCG(seed, 0xba7))
		mem := newMemTable(t, "hash:16", nil)
		f := faulty.New(mem, faulty.Config{Seed: seed, Rules: slowCalls})
		tbl := openOn(t, f, client.WithBatchRows(1+rng.IntN(20)), client.WithConcurrency(1+rng.IntN(4)))
		muts := make([]client.Mutation, n)
		ks := make([][]byte, n)
		for i := range n {
			ks[i] = fmt.Appendf(nil, "k%05d", i)
			muts[i] = putRow(ks[i])
		}

		ctx, cancel := randomCancel(rng, 4*time.Millisecond)
		rowErrs, callErr := tbl.Apply(ctx, muts)
		cancel()
		if callErr != nil && (rowErrs != nil || !errors.Is(callErr, context.Canceled)) {
			t.Fatalf("seed %d: Apply = %d row errors, %v; a whole-call error comes alone, and here only from ctx", seed, len(rowErrs), callErr)
		}
		stored, err := openOn(t, mem).GetMany(context.Background(), ks)
		if err != nil {
			t.Fatal(err)
		}
		if callErr != nil {
			// The whole call failed: no row may be stored.
			for i := range n {
				if len(stored[i].Cells) != 0 {
					t.Fatalf("seed %d: Apply failed whole (%v) but row %d is stored", seed, callErr, i)
				}
			}
		}
		for i := 0; callErr == nil && i < n; i++ {
			var e error
			if rowErrs != nil {
				e = rowErrs[i]
			}
			has := len(stored[i].Cells) == 1
			switch {
			case e == nil && !has:
				t.Fatalf("seed %d: row %d reported written but not stored", seed, i)
			case e != nil && has:
				t.Fatalf("seed %d: row %d stored but reported %v", seed, i, e)
			case e != nil && (!errors.Is(e, context.Canceled) || !strings.Contains(e.Error(), fmt.Sprintf("row %d ", i))):
				t.Fatalf("seed %d: row %d: %v; want ctx's error, naming the row", seed, i, e)
			}
		}
		if rowErrs != nil {
			partial++
		}

		ctx, cancel = randomCancel(rng, 2*time.Millisecond)
		rows, err := tbl.GetMany(ctx, ks)
		cancel()
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			t.Fatalf("seed %d: GetMany: %v", seed, err)
		case err != nil:
			getCut++
		default:
			for i, row := range rows {
				if !bytes.Equal(row.Key, ks[i]) || len(row.Cells) != len(stored[i].Cells) {
					t.Fatalf("seed %d: GetMany row %d = %q with %d cells, stored %d", seed, i, row.Key, len(row.Cells), len(stored[i].Cells))
				}
			}
		}
	}
	goleak.VerifyNone(t)
	t.Logf("Apply cut short %d times, GetMany %d times; every row accounted for", partial, getCut)
	if partial == 0 || getCut == 0 {
		t.Fatal("no cancellation landed mid-batch: the test proves nothing")
	}
}

// TestCancelImport cancels imports at random times and from the input itself: rows read == written +
// failed, each failed row reported once, and the table holds exactly the rows counted as written.
func TestCancelImport(t *testing.T) {
	var cut int
	var rows int64
	for seed := range uint64(seedCount(t, 24)) {
		rng := rand.New(rand.NewPCG(seed, 0x1e9))
		mem := newMemTable(t, "hash:16", nil)
		rules := append([]faulty.Rule{{Fault: faulty.RowError, Prob: 0.2, Retryable: true}}, slowCalls...)
		f := faulty.New(mem, faulty.Config{Seed: seed, Rules: rules})
		tbl := openOn(t, f)
		l := newLedger(tbl.Salter())
		ts := time.UnixMilli(testTS)

		ctx, cancel := randomCancel(rng, 10*time.Millisecond)
		input := importInput(importRows)
		if seed%2 == 1 { // cancel from the input after a random number of rows
			at := rng.IntN(importRows)
			inner := input
			input = func(yield func(client.ImportRow, error) bool) {
				i := 0
				for r, err := range inner {
					if i == at {
						cancel()
					}
					i++
					if !yield(r, err) {
						return
					}
				}
			}
		}
		stats, err := tbl.Import(ctx, input, client.ImportOptions{
			Workers: 1 + rng.IntN(4), BatchRows: 1 + rng.IntN(100), BaseBackoff: 100 * time.Microsecond, MaxBackoff: time.Millisecond,
			Timestamp: ts, OnFailure: l.onFailure,
		})
		cancel()
		if err != nil && !errors.Is(err, client.ErrRowsFailed) && !errors.Is(err, context.Canceled) {
			t.Fatalf("seed %d: Import: %v", seed, err)
		}
		if _, cerr := checkImport(openOn(t, mem), int(stats.Read), stats, err, l, ts.UnixMilli()); cerr != nil {
			t.Fatalf("seed %d (err %v): %v", seed, err, cerr)
		}
		if errors.Is(err, context.Canceled) {
			cut++
		}
		rows += stats.Read
	}
	goleak.VerifyNone(t)
	t.Logf("%d imports cancelled, %d rows accounted for", cut, rows)
	if cut == 0 {
		t.Fatal("no import was cancelled: the test proves nothing")
	}
}
