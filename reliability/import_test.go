package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

const importRows = 3000

func importKey(i int) []byte { return fmt.Appendf(nil, "row%06d", i) }

// importInput yields n rows, Source = index; every 211th has an empty key (rejected by the client)
// and every 307th comes with an input error (a line that did not parse).
func importInput(n int) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			k := importKey(i)
			row := client.ImportRow{Source: i, Mutation: client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "q", Value: value(k)}}}}
			var err error
			switch {
			case i%211 == 7:
				row.Key = nil
			case i%307 == 5:
				err = errors.New("unparsable line")
			}
			if !yield(row, err) {
				return
			}
		}
	}
}

// importLedger records what an import reported, row by row.
type importLedger struct {
	mu        sync.Mutex
	failed    map[int]int    // index -> times reported
	errs      map[int]error  // index -> reported error
	ambiguous map[string]int // logical keys an AfterWrite fault wrote while failing the call
	salter    salting.Salter // faults see physical keys
}

func newLedger(s salting.Salter) *importLedger {
	return &importLedger{failed: map[int]int{}, errs: map[int]error{}, ambiguous: map[string]int{}, salter: s}
}

func (l *importLedger) onFailure(fr client.FailedRow) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, _ := fr.Row.Source.(int)
	if int64(i) != fr.Index {
		i = -1 - int(fr.Index) // reported under a wrong index: counted apart, so the check fails
	}
	l.failed[i]++
	l.errs[i] = fr.Err
}

func (l *importLedger) onInject(e faulty.Event) {
	if e.Fault != faulty.AfterWrite {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range e.Keys {
		logical, err := l.salter.AppendLogical(nil, k)
		if err != nil {
			panic(fmt.Sprintf("physical key %q from the backend: %v", k, err))
		}
		l.ambiguous[string(logical)]++
	}
}

// checkImport is the import contract: every row read is written or reported once; the table holds
// the rows counted as written and no others (rows an AfterWrite fault wrote but failed may be there
// too: their outcome is unknown to any client), each once, with the import's timestamp.
func checkImport(tbl *client.Table, n int, stats client.ImportStats, err error, l *importLedger, ts int64) (stored int, _ error) {
	if stats.Read != int64(n) || stats.Read != stats.Written+stats.Failed {
		return 0, fmt.Errorf("stats %+v: read %d rows of %d, written+failed %d", stats, stats.Read, n, stats.Written+stats.Failed)
	}
	if got := int64(len(l.failed)); got != stats.Failed {
		return 0, fmt.Errorf("%d distinct rows reported to OnFailure, stats say %d failed", got, stats.Failed)
	}
	for i, times := range l.failed {
		if i < 0 || i >= n {
			return 0, fmt.Errorf("OnFailure got index %d, out of the input or not the row's own", -1-i)
		}
		if times != 1 {
			return 0, fmt.Errorf("row %d reported to OnFailure %d times", i, times)
		}
	}
	for i := range n {
		if (i%211 == 7 || i%307 == 5) && l.failed[i] == 0 {
			return 0, fmt.Errorf("bad input row %d was not reported", i)
		}
	}
	// A cancelled import reports ctx's error instead.
	if !errors.Is(err, context.Canceled) && (stats.Failed > 0) != errors.Is(err, client.ErrRowsFailed) {
		return 0, fmt.Errorf("Import returned %v with %d failed rows", err, stats.Failed)
	}
	rows, serr := testkit.CollectErr(tbl.Scan(context.Background(), client.Range{}))
	if serr != nil {
		return 0, serr
	}
	seen := map[string]bool{}
	for _, row := range rows {
		var i int
		if _, err := fmt.Sscanf(string(row.Key), "row%06d", &i); err != nil || !bytes.Equal(row.Key, importKey(i)) || i >= n {
			return 0, fmt.Errorf("stored row %q was never imported (%d rows read)", row.Key, n)
		}
		if seen[string(row.Key)] {
			return 0, fmt.Errorf("row %q stored twice", row.Key)
		}
		seen[string(row.Key)] = true
		if len(row.Cells) != 1 || row.Cells[0].Timestamp != ts || !bytes.Equal(row.Cells[0].Value, value(row.Key)) {
			return 0, fmt.Errorf("row %q has cells %+v; want one cell at the import's timestamp %d", row.Key, row.Cells, ts)
		}
		if l.failed[i] > 0 && l.ambiguous[string(row.Key)] == 0 {
			return 0, fmt.Errorf("row %d is stored but was reported failed (%v)", i, l.errs[i])
		}
	}
	written := 0
	for i := range n {
		if l.failed[i] == 0 {
			written++
			if !seen[string(importKey(i))] {
				return 0, fmt.Errorf("row %d counted as written but not stored", i)
			}
		}
	}
	if int64(written) != stats.Written {
		return 0, fmt.Errorf("%d rows not reported failed, stats say %d written", written, stats.Written)
	}
	return len(rows), nil
}

func bucketRange(t testing.TB, spec string, b int) backends.Range {
	return physicalBuckets(t, spec)[b]
}

// TestImportUnderFaults: Table.Import under retryable and fatal faults, whole-call and per row,
// timeouts, slow calls, lost replies and a dead bucket: Read == Written + Failed, every failed row is
// reported once, and the table holds exactly the rows counted as written, once each.
func TestImportUnderFaults(t *testing.T) {
	const spec = "hash:16"
	cases := []struct {
		name  string
		rules []faulty.Rule
		// retries: the faults are retryable, so the importer must have retried.
		retries bool
	}{
		{"retryable-calls", []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpApply, Prob: 0.3, Retryable: true}}, true},
		{"retryable-rows", []faulty.Rule{{Fault: faulty.RowError, Prob: 0.3, Retryable: true}}, true},
		{"fatal-rows", []faulty.Rule{{Fault: faulty.RowError, Prob: 0.03}, {Fault: faulty.RowError, Prob: 0.2, Retryable: true}}, true},
		{"fatal-calls", []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpApply, Prob: 0.1}, {Fault: faulty.Error, Ops: faulty.OpApply, Prob: 0.2, Retryable: true}}, true},
		{"timeouts", []faulty.Rule{
			{Fault: faulty.Timeout, Ops: faulty.OpApply, Prob: 0.2, Retryable: true},
			{Fault: faulty.Delay, Ops: faulty.OpApply, Prob: 0.2, Delay: 200 * time.Microsecond},
		}, true},
		{"lost-replies", []faulty.Rule{{Fault: faulty.AfterWrite, Prob: 0.3, Retryable: true}, {Fault: faulty.RowError, Prob: 0.1}}, true},
		{"dead-bucket", []faulty.Rule{{Fault: faulty.Error, Ops: faulty.OpApply, Range: bucketRange(t, spec, 3)}}, false},
		{"everything", []faulty.Rule{
			{Fault: faulty.Error, Ops: faulty.OpApply, Prob: 0.1, Retryable: true},
			{Fault: faulty.Error, Ops: faulty.OpApply, Prob: 0.02},
			{Fault: faulty.RowError, Prob: 0.1, Retryable: true},
			{Fault: faulty.RowError, Prob: 0.01},
			{Fault: faulty.AfterWrite, Prob: 0.1, Retryable: true},
			{Fault: faulty.Timeout, Ops: faulty.OpApply, Prob: 0.05, Retryable: true},
			{Fault: faulty.Delay, Ops: faulty.OpApply, Prob: 0.05, Delay: 100 * time.Microsecond},
		}, true},
	}
	var rowsChecked, injected, failedRows, retried int64
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range uint64(seedCount(t, 3)) {
				mem := newMemTable(t, spec, nil)
				l := newLedger(testkit.Salter(t, spec))
				f := faulty.New(mem, faulty.Config{Seed: seed, Rules: tc.rules, OnInject: l.onInject})
				tbl := openOn(t, f)
				ts := time.UnixMilli(testTS)
				stats, err := tbl.Import(context.Background(), importInput(importRows), client.ImportOptions{
					Workers: 4, BatchRows: 64, MaxAttempts: 4, BaseBackoff: 50 * time.Microsecond, MaxBackoff: 500 * time.Microsecond,
					Timestamp: ts, OnFailure: l.onFailure,
				})
				if err != nil && !errors.Is(err, client.ErrRowsFailed) {
					t.Fatalf("seed %d: Import: %v", seed, err)
				}
				if _, cerr := checkImport(openOn(t, mem), importRows, stats, err, l, ts.UnixMilli()); cerr != nil {
					t.Fatalf("seed %d: %v", seed, cerr)
				}
				for i, e := range l.errs { // a report must say which row, not only why
					if !strings.Contains(e.Error(), fmt.Sprintf("input row %d", i)) {
						t.Fatalf("seed %d: the error reported for row %d does not name it: %v", seed, i, e)
					}
				}
				fs := f.Stats()
				if fs.Injected() == 0 || tc.retries && stats.Retried == 0 {
					t.Fatalf("seed %d: %v, %d retries: the faults did not bite", seed, fs, stats.Retried)
				}
				rowsChecked += stats.Read
				injected += fs.Injected()
				failedRows += stats.Failed
				retried += stats.Retried
			}
		})
	}
	t.Logf("%d rows imported and checked, %d faults injected, %d rows failed and reported, %d row retries",
		rowsChecked, injected, failedRows, retried)
}

// TestImportCheckCatchesLoss: checkImport fails on an import that lost a row (deleted behind its
// back), on a row reported twice, and on a row reported but stored; a check that cannot fail proves
// nothing.
func TestImportCheckCatchesLoss(t *testing.T) {
	mem := newMemTable(t, "hash:4", nil)
	tbl := openOn(t, mem)
	l := newLedger(tbl.Salter())
	ts := time.UnixMilli(testTS)
	stats, err := tbl.Import(context.Background(), importInput(100), client.ImportOptions{Timestamp: ts, OnFailure: l.onFailure})
	if _, cerr := checkImport(tbl, 100, stats, err, l, ts.UnixMilli()); cerr != nil {
		t.Fatalf("a clean import fails the check: %v", cerr)
	}
	if _, derr := tbl.Apply(context.Background(), []client.Mutation{{Key: importKey(42), Delete: true}}); derr != nil {
		t.Fatal(derr)
	}
	if _, cerr := checkImport(tbl, 100, stats, err, l, ts.UnixMilli()); cerr == nil {
		t.Fatal("a lost row passed the check")
	}
	if _, perr := tbl.Apply(context.Background(), []client.Mutation{putRowAt(importKey(42), ts.UnixMilli()), putRowAt(importKey(7), ts.UnixMilli())}); perr != nil {
		t.Fatal(perr)
	}
	if _, cerr := checkImport(tbl, 100, stats, err, l, ts.UnixMilli()); cerr == nil {
		t.Fatal("a row stored although reported failed passed the check")
	}
	if _, derr := tbl.Apply(context.Background(), []client.Mutation{{Key: importKey(7), Delete: true}}); derr != nil {
		t.Fatal(derr)
	}
	l.failed[5]++
	if _, cerr := checkImport(tbl, 100, stats, err, l, ts.UnixMilli()); cerr == nil {
		t.Fatal("a row reported twice passed the check")
	}
}

func putRowAt(k []byte, ts int64) client.Mutation {
	m := putRow(k)
	m.Cells[0].Timestamp = ts
	return m
}
