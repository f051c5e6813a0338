//go:build integration

package integration

import (
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

// TestSyncTargetNewer syncs a memory table into a target on every store whose rows hold versions
// the source has not: newer ones (one, and two stacked, which the sync's read-back uncovers one at
// a time), one of the same stamp with another value, older ones when every version is compared, a
// column and a row of the target's own, a row it lacks. On HBase a delete of a whole column would
// leave a marker hiding the source's older cells put after it: the sync deletes those versions one
// by one. Then the tables compare equal.
func TestSyncTargetNewer(t *testing.T) {
	from := client.New(memory.New(), client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
	t.Cleanup(func() { _ = from.Close() })
	n := 0
	for _, to := range everyStore(t, "sync") {
		for _, all := range []bool{false, true} {
			n++
			src := fmt.Sprintf("brine_sync_src_%d", n)
			t.Run(fmt.Sprintf("%s/all-versions=%t", to.kind, all), func(t *testing.T) { syncTargetNewer(t, from, to, src, all) })
		}
	}
}

func syncTargetNewer(t *testing.T, from *client.Client, to copyStore, src string, all bool) {
	ctx := testkit.Context(t, 2*time.Minute)
	dst := to.name()
	testkit.DeleteAtEnd(t, src, from.DeleteTable, backends.ErrTableNotFound)
	testkit.DeleteAtEnd(t, dst, to.c.DeleteTable, backends.ErrTableNotFound)
	cfg := client.TableConfig{Families: []string{"d"}, MaxVersions: 3, KeySchema: testkit.Schema(t, "id:string")}
	cfg.Salter = testkit.Salter(t, "hash:2")
	source, err := from.CreateTable(ctx, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Salter = testkit.Salter(t, "hash:3")
	target, err := to.c.CreateTable(ctx, dst, cfg)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour).UnixMilli() // near the clock: Tablestore refuses stamps far from it
	c := func(q, v string, dt int64) client.Cell {
		return client.Cell{Family: "d", Qualifier: q, Value: []byte(v), Timestamp: base + dt}
	}
	apply := func(tbl *client.Table, rows map[string][]client.Cell) {
		t.Helper()
		var muts []client.Mutation
		for k, cells := range rows {
			muts = append(muts, client.Mutation{Key: []byte(k), Cells: cells})
		}
		if rowErrs, err := tbl.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
			t.Fatal(err, errors.Join(rowErrs...))
		}
	}
	both := map[string][]client.Cell{}
	for i := range 20 {
		both[fmt.Sprintf("k%02d", i)] = []client.Cell{c("a", "old", 0), c("a", fmt.Sprint(i), 10), c("b", "b", 10)}
	}
	apply(source, both)
	apply(target, both)
	apply(source, map[string][]client.Cell{"k20": {c("a", "only in the source", 10)}})
	apply(target, map[string][]client.Cell{
		"k01": {c("a", "newer", 20)},                       // one newer version
		"k02": {c("a", "newer", 20), c("a", "newest", 30)}, // two, stacked
		"k03": {c("a", "other", 10)},                       // the same stamp, another value
		"k04": {c("z", "the target's own column", 10)},
		"k05": {c("a", "older", 5)}, // hidden under the newest; a difference of every version only
		"k30": {c("a", "only in the target", 10)},
	})
	st, err := migrate.Sync(ctx, from, to.c, src, migrate.SyncOptions{As: dst, AllVersions: all})
	if err != nil {
		t.Fatalf("sync: %v (%+v)", err, st)
	}
	wantChanges := int64(6)
	if all {
		wantChanges = 7
	}
	if st.Changes != wantChanges {
		t.Errorf("sync changed %d rows, want %d", st.Changes, wantChanges)
	}
	for d, err := range compare.Tables(ctx, source, target, client.Range{}, compare.Options{AllVersions: all}) {
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("after the sync: %v at %q: source %v, target %v", d.Kind, d.Key, d.A.Cells, d.B.Cells)
	}
}
