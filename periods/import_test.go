package periods_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/periods"
)

// TestImport: an import into a period table routes each row to its period, reports
// a row outside every period and an input error with their positions in the whole input, counts a
// repeated key once per input whatever the periods, and sums its stats over the periods.
func TestImport(t *testing.T) {
	ctx := context.Background()
	p := monthlyEv(t, "hash:4")
	if _, err := p.CreateAhead(ctx, time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), 2, nil); err != nil { // Jan, Feb, Mar
		t.Fatal(err)
	}
	schema := testkit.Schema(t, "host,ts:int64")
	key := func(host string, month time.Month, day int) []byte {
		k, _ := schema.Encode(host, time.Date(2026, month, day, 0, 0, 0, 0, time.UTC).UnixMilli())
		return k
	}
	type in struct {
		key []byte
		val string
		err error
	}
	input := []in{
		{key: key("a", 1, 2), val: "1"}, {key: key("b", 2, 3), val: "2"}, {key: key("c", 3, 4), val: "3"},
		{key: key("d", 5, 1), val: "no period"}, {err: errors.New("unparsable")},
		{key: key("b", 2, 3), val: "2 again"}, {key: key("e", 1, 31), val: "5"},
	}
	rows := func(yield func(client.ImportRow, error) bool) {
		for i, r := range input {
			row := client.ImportRow{Mutation: client.Mutation{Key: r.key, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte(r.val)}}}, Source: i}
			if !yield(row, r.err) {
				return
			}
		}
	}
	var mu sync.Mutex
	failed := map[int64]error{}
	var progress []client.ImportStats
	stats, err := p.Import(ctx, iter.Seq2[client.ImportRow, error](rows), client.ImportOptions{
		OnFailure: func(fr client.FailedRow) {
			mu.Lock()
			defer mu.Unlock()
			if src, _ := fr.Row.Source.(int); int64(src) != fr.Index {
				t.Errorf("failed row %d carries the source of input row %v", fr.Index, fr.Row.Source)
			}
			failed[fr.Index] = fr.Err
		},
		Progress: func(s client.ImportStats) { progress = append(progress, s) },
	})
	if !errors.Is(err, client.ErrRowsFailed) {
		t.Fatalf("import: %v, want ErrRowsFailed", err)
	}
	if stats.Read != 7 || stats.Written != 5 || stats.Failed != 2 || stats.Duplicates != 1 {
		t.Errorf("stats %+v, want read 7, written 5, failed 2, duplicates 1", stats)
	}
	if len(failed) != 2 || !errors.Is(failed[3], periods.ErrNoPeriod) || failed[4] == nil {
		t.Errorf("failures %v, want input row 3 (no period) and 4 (input error)", failed)
	}
	if len(progress) == 0 || progress[len(progress)-1] != stats {
		t.Errorf("last progress %v, want the final stats %+v", progress, stats)
	}
	var got []string
	for row, err := range p.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		v, _ := schema.Decode(row.Key)
		got = append(got, fmt.Sprintf("%s %s=%s", v[0], time.UnixMilli(v[1].(int64)).UTC().Format("01-02"), row.Cells[0].Value))
	}
	want := []string{"a 01-02=1", "b 02-03=2 again", "c 03-04=3", "e 01-31=5"}
	if !slices.Equal(got, want) {
		t.Errorf("rows %q, want %q", got, want)
	}
}

// TestImportCancel: an import whose context ends stops pulling rows, and every row it
// pulled is written or reported.
func TestImportCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := monthlyEv(t, "hash:2")
	if _, err := p.CreateAhead(ctx, time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), 1, nil); err != nil {
		t.Fatal(err)
	}
	schema := testkit.Schema(t, "host,ts:int64")
	pulled := 0
	rows := func(yield func(client.ImportRow, error) bool) {
		for i := range 100000 {
			if i == 500 {
				cancel()
			}
			pulled++
			k, _ := schema.Encode(fmt.Sprint(i), time.Date(2026, time.Month(1+i%2), 1+i%28, 0, 0, 0, 0, time.UTC).UnixMilli())
			if !yield(client.ImportRow{Mutation: client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte("x")}}}}, nil) {
				return
			}
		}
	}
	var failed int64
	stats, err := p.Import(ctx, rows, client.ImportOptions{BatchRows: 7, OnFailure: func(client.FailedRow) { failed++ }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("import: %v, want context.Canceled", err)
	}
	if pulled >= 100000 || stats.Read != int64(pulled) || stats.Read != stats.Written+stats.Failed || stats.Failed != failed {
		t.Errorf("pulled %d rows, stats %+v, %d reported failed: want read = pulled = written + failed", pulled, stats, failed)
	}
}

// TestImportBulkRefused: a bulk import into a period table fails with ErrUnsupported before a row
// is read.
func TestImportBulkRefused(t *testing.T) {
	p := monthlyEv(t, "hash:4")
	rows := func(func(client.ImportRow, error) bool) { t.Error("the input was read") }
	stats, err := p.Import(t.Context(), rows, client.ImportOptions{Bulk: &client.BulkLoad{Staging: t.TempDir()}})
	if !errors.Is(err, client.ErrUnsupported) || stats != (client.ImportStats{}) {
		t.Fatalf("Import: %+v, %v; want nothing done and ErrUnsupported", stats, err)
	}
}

// monthlyEv is the period table "ev", a table per month with the time in key field 1, salted by
// spec, on a memory store closed when the test ends.
func monthlyEv(t *testing.T, spec string) *periods.Table {
	t.Helper()
	c := client.New(memory.New())
	t.Cleanup(func() { c.Close() })
	month, _ := periods.ParseInterval("month")
	p, err := periods.Create(t.Context(), c, "ev", periods.Config{Interval: month, TimeField: 1, Table: client.TableConfig{Salter: testkit.Salter(t, spec)}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
