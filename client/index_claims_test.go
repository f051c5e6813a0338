package client_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// In a parallel indexed Import, the first input row to give a unique key wins it, even when a later
// row's batch is written first: here the first row's bucket never fills a batch (it is sent at the
// end), while the later claimant's bucket fills one at once. A repeat of the first row's own key
// keeps the claim.
func TestImportFirstInputRowWinsUniqueClash(t *testing.T) {
	main := testkit.Salter(t, "hash:4") // indextest.NewOrders' main salter
	bucket := func(no string) int {
		b, err := main.Bucket(indextest.OrderKey(no))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := "f"
	var others []string // orders of another bucket than first's
	for i := 0; len(others) < 10; i++ {
		if no := fmt.Sprint("o", i); bucket(no) != bucket(first) {
			others = append(others, no)
		}
	}
	row := func(no, ext string) client.ImportRow {
		return client.ImportRow{Mutation: client.Mutation{Key: indextest.OrderKey(no), Cells: []client.Cell{
			{Family: "d", Qualifier: "ext", Value: []byte(ext)}, {Family: "d", Qualifier: "amount", Value: []byte("1")}}}}
	}
	// Input: first (ext x), first again (ext x), then others; others[2] also gives x.
	input := []client.ImportRow{row(first, "x"), row(first, "x")}
	for i, no := range others {
		ext := fmt.Sprint("e", i)
		if i == 2 {
			ext = "x"
		}
		input = append(input, row(no, ext))
	}
	const later = 4 // others[2]'s input row
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprint(workers, " workers"), func(t *testing.T) {
			tbl := indextest.NewOrders(t, memory.New(), "orders")
			var failed []client.FailedRow
			rows := func(yield func(client.ImportRow, error) bool) {
				for _, r := range input {
					if !yield(r, nil) {
						return
					}
				}
			}
			stats, err := tbl.Import(t.Context(), rows, client.ImportOptions{Workers: workers, BatchRows: 5,
				OnFailure: func(f client.FailedRow) { failed = append(failed, f) }})
			if !errors.Is(err, client.ErrRowsFailed) || len(failed) != 1 || stats.Written != int64(len(input)-1) {
				t.Fatalf("Import = %+v, %v; failed %+v; want input row %d alone failed", stats, err, failed, later)
			}
			if f := failed[0]; f.Index != later || !errors.Is(f.Err, client.ErrUniqueViolation) {
				t.Fatalf("failed row %d: %v; want row %d, ErrUniqueViolation", f.Index, f.Err, later)
			}
			byExt := indextest.Index(t, tbl, "by_ext")
			x, err := byExt.Prefix([]byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := byExt.Get(t.Context(), x)
			if err != nil || string(got.Key) != string(indextest.OrderKey(first)) {
				t.Fatalf("by_ext x is row %q (%v), want the first input row's %q", got.Key, err, indextest.OrderKey(first))
			}
			indextest.AssertIndexes(t, tbl)
		})
	}
}
