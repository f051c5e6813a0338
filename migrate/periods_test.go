package migrate_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/periods"
)

// TestCopyPeriods copies a period table of three months period by period, interrupted in the
// second and resumed: the target is declared alike, each period keeps its own spec unless Salter
// says otherwise, and the logical tables are equal.
func TestCopyPeriods(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "local")
	src, schema := loadPeriods(t, ctx, from)
	cctx, cancel := context.WithCancel(ctx)
	calls := 0
	opts := migrate.Options{As: "ev2", ChunkRows: 50, Workers: 1, Progress: func(migrate.Progress) {
		if calls++; calls == 30 {
			cancel() // about 1,400 rows in: in the second period (1,080 rows a month)
		}
	}}
	first, err := migrate.Copy(cctx, from, to, "ev", opts)
	if !errors.Is(err, context.Canceled) || first.Rows < 1080 {
		t.Fatalf("interrupted copy: %d rows, %v; want canceled in the second period", first.Rows, err)
	}
	cancel()
	opts.Progress, opts.Resume = nil, true
	st, err := migrate.Copy(ctx, from, to, "ev", opts)
	if err != nil {
		t.Fatal(err)
	}
	// Only the chunk in flight at the interrupt may be written twice.
	if st.Buckets != 3 || st.Rows >= 3000-first.Rows+50 || first.Rows+st.Rows < 3000 {
		t.Errorf("resumed copy: %d periods, %d rows after %d; want 3 periods, the rest of 3,000 rows", st.Buckets, st.Rows, first.Rows)
	}
	dst, err := periods.Open(ctx, to, "ev2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(dst.Periods()), len(src.Periods()); got != want {
		t.Errorf("target has %d periods, want %d", got, want)
	}
	for _, p := range dst.Periods() {
		if p.Spec != "hash:4" {
			t.Errorf("period %s has spec %s, want the source's hash:4", p.Table, p.Spec)
		}
	}
	if dst.KeySchema().String() != schema.String() {
		t.Errorf("target key schema %s, want %s", dst.KeySchema(), schema)
	}
	var cs compare.Stats
	for d, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{Stats: &cs}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("differ: %v at %x", d.Kind, d.Key)
	}
	if cs.RowsA != 3000 || cs.RowsB != 3000 {
		t.Errorf("compared %d and %d rows, want 3000 each", cs.RowsA, cs.RowsB)
	}
	if names, _ := to.Tables(ctx); len(names) != 4 {
		t.Errorf("target store holds %v, want the period table and its 3 periods (no checkpoint)", names)
	}
}

// loadPeriods creates the period table "ev" (months, hash:4, key host,ts:int64) with 3,000 rows over
// September to November 2026, about 1,080 a month.
func loadPeriods(t *testing.T, ctx context.Context, from *client.Client) (*periods.Table, *keys.Schema) {
	t.Helper()
	month, _ := periods.ParseInterval("month")
	schema := testkit.Schema(t, "host,ts:int64")
	src, err := periods.Create(ctx, from, "ev", periods.Config{Interval: month, TimeField: 1,
		Table: client.TableConfig{Salter: testkit.Salter(t, "hash:4"), KeySchema: schema}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	if _, err := src.CreateAhead(ctx, start, 2, nil); err != nil {
		t.Fatal(err)
	}
	var muts []client.Mutation
	for i := range 3000 {
		at := start.Add(time.Duration(i) * 40 * time.Minute) // 83 days: September to November
		k, err := schema.Encode("h"+string(rune('a'+i%5)), at.UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte{byte(i)}, Timestamp: 5}}})
	}
	if rowErrs, err := src.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
		t.Fatal(err, errors.Join(rowErrs...))
	}
	return src, schema
}

// TestShardedCopyPeriods: 3 shards of a period table's copy, started at once, one of them
// interrupted and resumed alone: the target holds every period, each of its source's spec, and
// equals the source; together the shards wrote each row once, and no checkpoint is left.
func TestShardedCopyPeriods(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "local")
	src, _ := loadPeriods(t, ctx, from)
	opts := migrate.Options{As: "ev2", ChunkRows: 50, Workers: 1}
	stats := make([]migrate.Stats, 3)
	errs := make([]error, 3)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			o := opts
			o.Shard = compare.Shard{Index: i, Count: 3}
			c := ctx
			if i == 1 {
				calls := 0
				c, o.Progress = cctx, func(migrate.Progress) {
					if calls++; calls == 10 {
						cancel() // in its shard of the first or second period
					}
				}
			}
			stats[i], errs[i] = migrate.Copy(c, from, to, "ev", o)
		})
	}
	wg.Wait()
	if !errors.Is(errs[1], context.Canceled) || errors.Join(errs[0], errs[2]) != nil {
		t.Fatalf("shards: %v; want shard 1 canceled, the others done", errs)
	}
	if _, err := migrate.Copy(ctx, from, to, "ev", migrate.Options{As: "ev2", ChunkRows: 50, Workers: 1}); !errors.Is(err, migrate.ErrInterrupted) {
		t.Errorf("an unsharded copy over the interrupted shard: %v, want ErrInterrupted", err)
	}
	o := opts
	o.Shard, o.Resume = compare.Shard{Index: 1, Count: 3}, true
	resumed, err := migrate.Copy(ctx, from, to, "ev", o)
	if err != nil {
		t.Fatalf("resume of shard 1/3: %v", err)
	}
	written := stats[0].Rows + stats[2].Rows + stats[1].Rows + resumed.Rows
	if written < 3000 || written >= 3000+50 { // only the chunk in flight at the interrupt twice
		t.Errorf("the shards wrote %d rows (shard 1: %d, then %d); want 3,000", written, stats[1].Rows, resumed.Rows)
	}
	dst, err := periods.Open(ctx, to, "ev2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(dst.Periods()), len(src.Periods()); got != want {
		t.Errorf("target has %d periods, want %d", got, want)
	}
	for d, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("differ: %v at %x", d.Kind, d.Key)
	}
	if names, _ := to.Tables(ctx); len(names) != 4 {
		t.Errorf("target store holds %v, want the period table and its 3 periods (no checkpoint)", names)
	}
}
