package faulty_test

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
)

// A store where one row in three fails with a retryable error, and scans break after at most 10 rows.
func ExampleNew() {
	ctx := context.Background()
	mem := memory.New()
	defer mem.Close()
	_ = mem.CreateTable(ctx, "t", backends.TableOptions{})

	b := faulty.New(mem, faulty.Config{Seed: 42, Rules: []faulty.Rule{
		{Fault: faulty.RowError, Prob: 1.0 / 3, Retryable: true},
		{Fault: faulty.Error, Ops: faulty.OpScan, AfterRows: 10},
	}})
	var muts []backends.Mutation
	for i := range 30 {
		muts = append(muts, backends.Mutation{Key: fmt.Appendf(nil, "k%02d", i), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("v")}}})
	}
	rowErrs, _ := b.Apply(ctx, "t", muts)
	failed := 0
	for _, err := range rowErrs {
		if driverkit.IsRetryable(err) {
			failed++
		}
	}
	rows := 0
	var scanErr error
	for _, err := range b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			scanErr = err
			break
		}
		rows++
	}
	fmt.Println(failed > 0, failed < 30, rows <= 10, scanErr != nil)
	fmt.Println(b.Stats().Injected() == int64(failed)+1)
	// Output:
	// true true true true
	// true
}
