//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/periods"
)

// TestSyncPeriodsEveryStore syncs a memory period table of three days into every store: the first
// sync declares the target and makes its periods; then the source changes (rows changed and
// deleted, its oldest day expired) and the target gains a row of its own, and a second sync makes
// the target equal again, with the source's periods.
func TestSyncPeriodsEveryStore(t *testing.T) {
	from := client.New(memory.New(), client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
	t.Cleanup(func() { _ = from.Close() })
	for i, to := range everyStore(t, "psync") {
		t.Run(to.kind, func(t *testing.T) { syncPeriodsInto(t, from, to, fmt.Sprintf("brine_psync_src_%d", i)) })
	}
}

func syncPeriodsInto(t *testing.T, from *client.Client, to copyStore, name string) {
	ctx := testkit.Context(t, 3*time.Minute)
	day, err := periods.ParseInterval("day")
	if err != nil {
		t.Fatal(err)
	}
	schema := testkit.Schema(t, "host,ts:int64")
	src, err := periods.Create(ctx, from, name, periods.Config{Interval: day, TimeField: 1,
		Table: client.TableConfig{Salter: testkit.Salter(t, "hash:2"), KeySchema: schema}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Drop(context.Background()) })
	first := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -2)
	if _, err := src.CreateAhead(ctx, first, 2, nil); err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte {
		k, err := schema.Encode(fmt.Sprint("h", i%4), first.Add(time.Duration(i)*15*time.Minute).UnixMilli()) // 288 rows: three days
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	var muts []client.Mutation
	for i := range 288 {
		muts = append(muts, client.Mutation{Key: key(i), Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: fmt.Append(nil, i)}}})
	}
	apply := func(tbl client.TableAPI, muts []client.Mutation) {
		t.Helper()
		if rowErrs, err := tbl.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
			t.Fatal(err, errors.Join(rowErrs...))
		}
	}
	apply(src, muts)
	as := to.name()
	if _, err := migrate.Sync(ctx, from, to.c, name, migrate.SyncOptions{As: as}); err != nil {
		t.Fatal(err)
	}
	dst, err := periods.Open(ctx, to.c, as, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dst.Drop(context.Background()) })
	equal := func(what string) {
		t.Helper()
		if err := dst.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		var st compare.Stats
		for d, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{Stats: &st}) {
			if err != nil {
				t.Fatal(err)
			}
			t.Fatalf("%s: %v at %s", what, d.Kind, d.Key)
		}
		starts := func(infos []periods.Info) []time.Time {
			var out []time.Time
			for _, p := range infos {
				out = append(out, p.Start)
			}
			slices.SortFunc(out, time.Time.Compare)
			return out
		}
		if got, want := starts(dst.Periods()), starts(src.Periods()); !slices.EqualFunc(got, want, time.Time.Equal) {
			t.Fatalf("%s: the target's periods start %v, the source's %v", what, got, want)
		}
		t.Logf("%s: %d rows each side, equal", what, st.RowsA)
	}
	equal("first sync")
	// The source changes, and expires its first day; the target gains a row of its own.
	var changes []client.Mutation
	for i := 100; i < 110; i++ {
		changes = append(changes, client.Mutation{Key: key(i), Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: []byte("changed")}}})
	}
	for i := 110; i < 120; i++ {
		changes = append(changes, client.Mutation{Key: key(i), Delete: true})
	}
	apply(src, changes)
	for _, p := range src.Periods() {
		if p.Start.Equal(first) {
			if err := src.DropPeriod(ctx, p.Table); err != nil {
				t.Fatal(err)
			}
		}
	}
	k, err := schema.Encode("target-only", first.AddDate(0, 0, 1).Add(time.Minute).UnixMilli())
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Put(ctx, k, client.Cell{Family: "d", Qualifier: "v", Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	st, err := migrate.Sync(ctx, from, to.c, name, migrate.SyncOptions{As: as})
	if err != nil {
		t.Fatal(err)
	}
	if st.Changes < 96+21 { // the expired day's 96 rows, 10 changed, 10 deleted, 1 of the target's
		t.Errorf("second sync: %d changes, want at least %d", st.Changes, 96+21)
	}
	equal("second sync")
}
