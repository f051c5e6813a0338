//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// The import rules that must hold on every store, run here on the real HBase and the Tablestore
// server (client/import_dup_test.go runs them on the embedded stores): the last occurrence of a
// duplicated key wins, re-importing is idempotent, and an interrupted import resumed from its failed
// ("not confirmed") rows plus the unread rest ends with the whole input stored.

func TestHBaseImportRules(t *testing.T) {
	e := openHBase(t)
	t.Run("duplicates", func(t *testing.T) { checkImportDuplicates(t, e.salted(t, "hash:8", 0)) })
	t.Run("interrupt", func(t *testing.T) { checkImportInterrupt(t, e.salted(t, "hash:8", 0)) })
}

func TestTablestoreImportRules(t *testing.T) {
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		e := tg.open(t, nil)
		t.Run("duplicates", func(t *testing.T) { checkImportDuplicates(t, e.salted(t, "hash:8")) })
		t.Run("interrupt", func(t *testing.T) { checkImportInterrupt(t, e.salted(t, "hash:8")) })
	})
}

// importRowAt is row i of an input whose keys are keys[i] (keys nil: key i) and whose values are i.
func importRowAt(i int, keys []int) client.ImportRow {
	k := i
	if keys != nil {
		k = keys[i]
	}
	return client.ImportRow{Source: i, Mutation: client.Mutation{
		Key:   fmt.Appendf(nil, "imp%06d", k),
		Cells: []client.Cell{{Family: fam, Qualifier: "v", Value: fmt.Append(nil, i)}},
	}}
}

// wantLastValues checks that the table holds exactly the keys of want, each with its value.
func wantLastValues(t *testing.T, tbl *client.Table, want map[int]int) {
	t.Helper()
	got := 0
	for row, err := range tbl.Scan(testkit.Context(t, 2*time.Minute), client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		var k int
		if _, err := fmt.Sscanf(string(row.Key), "imp%06d", &k); err != nil {
			t.Fatalf("stored key %q was never imported", row.Key)
		}
		last, ok := want[k]
		if !ok || len(row.Cells) != 1 || string(row.Cells[0].Value) != fmt.Sprint(last) {
			t.Fatalf("key %q holds %v; want the value of its last occurrence, row %d", row.Key, row.Cells, last)
		}
		got++
	}
	if got != len(want) {
		t.Fatalf("%d rows stored, want %d", got, len(want))
	}
}

// checkImportDuplicates imports 3,000 rows over about 1,000 keys, a key's occurrences next to each
// other or far apart, in 7-row batches on 16 writers (so occurrences share a batch, or are in flight
// together in different ones), twice: each time the last occurrence of every key is stored and the
// repeats are counted.
func checkImportDuplicates(t *testing.T, tbl *client.Table) {
	const n, distinct = 3000, 1000
	rnd := rand.New(rand.NewPCG(15, 1))
	keys := make([]int, n)
	last := map[int]int{}
	for i := range keys {
		keys[i] = rnd.IntN(distinct)
		if i > 0 && rnd.IntN(3) == 0 {
			keys[i] = keys[i-1]
		}
		last[keys[i]] = i
	}
	input := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			if !yield(importRowAt(i, keys), nil) {
				return
			}
		}
	}
	for run := range 2 {
		stats, err := tbl.Import(testkit.Context(t, 5*time.Minute), input, client.ImportOptions{Workers: 16, BatchRows: 7})
		if err != nil || stats.Written != n || stats.Duplicates != int64(n-len(last)) {
			t.Fatalf("run %d: %+v, %v; want %d written, %d duplicates", run, stats, err, n, n-len(last))
		}
		wantLastValues(t, tbl, last)
	}
}

// checkImportInterrupt cancels an import of unique keys after 2,000 rows were handed to it, then
// resumes as the CLI does: the rows reported failed (not confirmed: some may be stored) in input
// order, then the rows never read. The table must then hold every row once, with its value.
func checkImportInterrupt(t *testing.T, tbl *client.Table) {
	const n = 6000
	ctx, cancel := context.WithCancel(testkit.Context(t, 5*time.Minute))
	defer cancel()
	handed := 0
	input := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			if i == 2000 {
				cancel()
			}
			handed++
			if !yield(importRowAt(i, nil), nil) {
				return
			}
		}
	}
	var failed []int
	stats, err := tbl.Import(ctx, input, client.ImportOptions{BatchRows: 100, OnFailure: func(fr client.FailedRow) {
		failed = append(failed, fr.Row.Source.(int))
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Import: %v, want context.Canceled", err)
	}
	if stats.Read != int64(handed) || stats.Read != stats.Written+stats.Failed || int(stats.Failed) != len(failed) || handed >= n {
		t.Fatalf("stats %+v, %d rows handed, %d reported failed: every row read must end written or reported", stats, handed, len(failed))
	}
	slices.Sort(failed)
	resume := func(yield func(client.ImportRow, error) bool) {
		for _, i := range failed {
			if !yield(importRowAt(i, nil), nil) {
				return
			}
		}
		for i := handed; i < n; i++ {
			if !yield(importRowAt(i, nil), nil) {
				return
			}
		}
	}
	st2, err := tbl.Import(testkit.Context(t, 5*time.Minute), resume, client.ImportOptions{})
	if err != nil || st2.Written != int64(len(failed)+n-handed) {
		t.Fatalf("resume: %+v, %v", st2, err)
	}
	all := map[int]int{}
	for i := range n {
		all[i] = i
	}
	wantLastValues(t, tbl, all)
}
