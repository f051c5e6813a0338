package migrate_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/periods"
)

// TestSyncPeriods: a period table copied, then changed on both sides (rows changed and deleted in
// the source, a new period there and its oldest expired, a row only the target has): a dry run
// reports the changes and writes nothing; Sync makes the target equal to the source, its periods
// those of the source; a second Sync finds nothing to change.
func TestSyncPeriods(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "local")
	src, schema := loadPeriods(t, ctx, from)
	if _, err := migrate.Copy(ctx, from, to, "ev", migrate.Options{As: "ev2"}); err != nil {
		t.Fatal(err)
	}
	key := func(host string, at time.Time) []byte {
		k, err := schema.Encode(host, at.UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	sep, oct, dec := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	// The source: 10 rows changed and 10 deleted in October, a December period with 5 rows, and
	// September expired.
	var muts []client.Mutation
	for i := range 20 {
		k := key("h"+string(rune('a'+i%5)), oct.Add(time.Duration(i)*40*time.Minute))
		if i < 10 {
			muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte("new"), Timestamp: 6}}})
		} else {
			muts = append(muts, client.Mutation{Key: k, Delete: true})
		}
	}
	if _, err := src.CreatePeriod(ctx, dec, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		muts = append(muts, client.Mutation{Key: key("hz", dec.Add(time.Duration(i)*time.Hour)), Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte("dec"), Timestamp: 7}}})
	}
	if rowErrs, err := src.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
		t.Fatal(err, errors.Join(rowErrs...))
	}
	var september string
	for _, p := range src.Periods() {
		if p.Start.Equal(sep) {
			september = p.Table
		}
	}
	if err := src.DropPeriod(ctx, september); err != nil {
		t.Fatal(err)
	}
	// The target: a row only it has.
	dst, err := periods.Open(ctx, to, "ev2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Put(ctx, key("only-target", oct.Add(time.Hour)), client.Cell{Family: "d", Qualifier: "v", Value: []byte("x"), Timestamp: 5}); err != nil {
		t.Fatal(err)
	}
	differences := func() int {
		if err := dst.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{}) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		return n
	}
	// September's ~1,080 rows, 10 changed, 10 deleted, 5 new, 1 only in the target.
	before := differences()
	if before < 1000+26 {
		t.Fatalf("%d differences before the sync, want September's rows and 26 more", before)
	}
	dry, err := migrate.Sync(ctx, from, to, "ev", migrate.SyncOptions{As: "ev2", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if int(dry.Changes) != before || differences() != before {
		t.Fatalf("dry run: %d changes of %d differences, and %d differences after it; want them all told and none written", dry.Changes, before, differences())
	}
	st, err := migrate.Sync(ctx, from, to, "ev", migrate.SyncOptions{As: "ev2"})
	if err != nil {
		t.Fatal(err)
	}
	if int(st.Changes) != before {
		t.Errorf("sync: %d changes, want %d", st.Changes, before)
	}
	if n := differences(); n != 0 {
		t.Fatalf("%d differences after the sync", n)
	}
	if got, want := sortedStarts(dst.Periods()), sortedStarts(src.Periods()); len(want) != 3 || !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("target periods start %v, source's %v: want October to December on both", got, want)
	}
	again, err := migrate.Sync(ctx, from, to, "ev", migrate.SyncOptions{As: "ev2"})
	if err != nil || again.Changes != 0 {
		t.Fatalf("second sync: %d changes, %v; want none", again.Changes, err)
	}
	if names, _ := to.Tables(ctx); len(names) != 4 {
		t.Errorf("target store holds %v, want the period table and its 3 periods (no checkpoint)", names)
	}
}

// TestShardedSyncPeriods: two shards of a period table's sync, run at once, make the target equal
// to a source with rows changed, a period added and one expired.
func TestShardedSyncPeriods(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "local")
	src, schema := loadPeriods(t, ctx, from)
	if _, err := migrate.Copy(ctx, from, to, "ev", migrate.Options{As: "ev2"}); err != nil {
		t.Fatal(err)
	}
	dec := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	if _, err := src.CreatePeriod(ctx, dec, nil); err != nil {
		t.Fatal(err)
	}
	var muts []client.Mutation
	for i := range 200 {
		k, err := schema.Encode("h"+string(rune('a'+i%7)), time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i)*time.Hour).UnixMilli())
		if err != nil {
			t.Fatal(err)
		}
		muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte("s"), Timestamp: 8}}})
		if k, err = schema.Encode("hz", dec.Add(time.Duration(i)*time.Minute).UnixMilli()); err != nil {
			t.Fatal(err)
		}
		muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte("d"), Timestamp: 8}}})
	}
	if rowErrs, err := src.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
		t.Fatal(err, errors.Join(rowErrs...))
	}
	oldest := sortedStarts(src.Periods())[0]
	for _, p := range src.Periods() {
		if p.Start.Equal(oldest) {
			if err := src.DropPeriod(ctx, p.Table); err != nil {
				t.Fatal(err)
			}
		}
	}
	errs := make(chan error, 2)
	for i := range 2 {
		go func() {
			_, err := migrate.Sync(ctx, from, to, "ev", migrate.SyncOptions{As: "ev2", Shard: compare.Shard{Index: i, Count: 2}})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	dst, err := periods.Open(ctx, to, "ev2", nil)
	if err != nil {
		t.Fatal(err)
	}
	for d, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatalf("after the sharded sync: %v at %x", d.Kind, d.Key)
	}
	if got, want := sortedStarts(dst.Periods()), sortedStarts(src.Periods()); !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("target periods start %v, the source's %v", got, want)
	}
}

// sortedStarts is the periods' starts, in order.
func sortedStarts(infos []periods.Info) []time.Time {
	var out []time.Time
	for _, p := range infos {
		out = append(out, p.Start)
	}
	slices.SortFunc(out, time.Time.Compare)
	return out
}

// TestSyncPeriodsResume: a period table's sync into an empty target, interrupted in its second
// period, leaves that period's checkpoint (SyncInterrupted finds it); run again without Resume it
// is refused, with Resume it finishes, and the target equals the source with no checkpoint left.
func TestSyncPeriodsResume(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "local")
	src, _ := loadPeriods(t, ctx, from)
	cctx, cancel := context.WithCancel(ctx)
	opts := migrate.SyncOptions{As: "ev2", Progress: func(p migrate.SyncProgress) {
		if p.Changes > 1080+300 {
			cancel() // in the second period, past its first batch of changes
		}
	}}
	if _, err := migrate.Sync(cctx, from, to, "ev", opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted sync: %v, want context.Canceled", err)
	}
	cancel()
	if ok, err := migrate.SyncInterrupted(ctx, from, to, "ev", "ev2", compare.Shard{}); err != nil || !ok {
		t.Fatalf("SyncInterrupted after the interrupt: %t, %v; want true", ok, err)
	}
	opts.Progress = nil
	if _, err := migrate.Sync(ctx, from, to, "ev", opts); !errors.Is(err, migrate.ErrInterrupted) {
		t.Fatalf("sync again without Resume: %v, want ErrInterrupted", err)
	}
	opts.Resume = true
	if _, err := migrate.Sync(ctx, from, to, "ev", opts); err != nil {
		t.Fatal(err)
	}
	if ok, err := migrate.SyncInterrupted(ctx, from, to, "ev", "ev2", compare.Shard{}); err != nil || ok {
		t.Fatalf("SyncInterrupted after the resume: %t, %v; want false", ok, err)
	}
	dst, err := periods.Open(ctx, to, "ev2", nil)
	if err != nil {
		t.Fatal(err)
	}
	for d, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatalf("after the resumed sync: %v at %x", d.Kind, d.Key)
	}
	if names, _ := to.Tables(ctx); len(names) != 4 {
		t.Errorf("target store holds %v, want the period table and its 3 periods (no checkpoint)", names)
	}
}
