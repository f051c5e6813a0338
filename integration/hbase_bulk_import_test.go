//go:build integration

package integration

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestHBaseBulkImport: Table.Import with Bulk into a salted table pre-split at its buckets loads
// every good row where a plain import puts it (the whole table read back through the client holds
// the last occurrence of every key), and reports the rows refused by the client (an empty key), by
// the driver (a delete, a family the table lacks) and by the input, with their positions in the
// input, while loading the others.
func TestHBaseBulkImport(t *testing.T) {
	e := openHBase(t)
	tbl := e.salted(t, "hash:8", 0)
	const n, distinct = 6000, 4000
	rnd := rand.New(rand.NewPCG(43, 2))
	keys := make([]int, n)
	for i := range keys {
		keys[i] = rnd.IntN(distinct)
	}
	bad := map[int]string{10: "empty key", 777: "delete", 2500: "unknown family", 4001: "input error"}
	last := map[int]int{}
	for i, k := range keys {
		if bad[i] == "" {
			last[k] = i
		}
	}
	input := func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			r := importRowAt(i, keys)
			var err error
			switch bad[i] {
			case "empty key":
				r.Key = nil
			case "delete":
				r.Delete, r.Cells = true, nil
			case "unknown family":
				r.Cells[0].Family = "nofam"
			case "input error":
				err = errors.New("unparsable line")
			}
			if !yield(r, err) {
				return
			}
		}
	}
	failed := map[int]bool{}
	stats, err := tbl.Import(testkit.Context(t, 3*time.Minute), input, client.ImportOptions{
		Bulk: &client.BulkLoad{Staging: hbasetest.Staging(t)},
		OnFailure: func(fr client.FailedRow) {
			if fr.Index != int64(fr.Row.Source.(int)) || bad[int(fr.Index)] == "" {
				t.Errorf("input row %d reported as row %d (%v)", fr.Row.Source, fr.Index, fr.Err)
			}
			failed[int(fr.Index)] = true
		},
	})
	if !errors.Is(err, client.ErrRowsFailed) {
		t.Fatalf("Import: %v, want ErrRowsFailed", err)
	}
	if len(failed) != len(bad) || stats.Read != n || stats.Failed != int64(len(bad)) || stats.Written != n-int64(len(bad)) || stats.Duplicates == 0 {
		t.Fatalf("stats %+v, %d rows reported; want %d read, %d failed, the rest written, duplicates counted", stats, len(failed), n, len(bad))
	}
	wantLastValues(t, tbl, last)
}
