package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

// model is what the writers left in the source: key, then column, then value.
type model struct {
	mu   sync.Mutex
	rows map[string]map[client.Column]string
}

// writer makes puts, row deletes and column deletes on the keys k with k%n == w until stop is
// closed, each recorded in m once the store has it; ops counts them. On an indexed table, whose
// indexed column is deleted only with its row, it deletes rows and puts them again in part.
func (m *model) writer(t *testing.T, ctx context.Context, tbl client.TableAPI, indexed bool, w, n int, stop <-chan struct{}, ops *atomic.Int64) {
	r := rand.New(rand.NewPCG(uint64(w), 7))
	buyer, val := client.Column{Family: "d", Qualifier: "buyer"}, client.Column{Family: "m", Qualifier: "v"}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		k := key(r.IntN(rows/n)*n + w)
		var err error
		set := map[client.Column]string{}
		var del []client.Column
		wholeRow := false
		switch p := r.IntN(100); {
		case p < 40:
			set[buyer], set[val] = fmt.Sprintf("b%d", r.IntN(50)), fmt.Sprintf("w%d-%d", w, i)
		case p < 55:
			set[buyer] = fmt.Sprintf("b%d", r.IntN(50))
		case p < 70:
			wholeRow = true
		case p < 85:
			del = []client.Column{val}
		case indexed: // its index's column goes only with its row: the row deleted, then partly put again
			wholeRow, set[val] = true, fmt.Sprintf("w%d-%d", w, i)
		default:
			del = []client.Column{buyer}
		}
		switch {
		case wholeRow:
			if err = tbl.Delete(ctx, k); err == nil && len(set) > 0 {
				err = tbl.Put(ctx, k, client.Cell{Family: val.Family, Qualifier: val.Qualifier, Value: []byte(set[val])})
			}
		case del != nil:
			err = tbl.Delete(ctx, k, del...)
		default:
			var cells []client.Cell
			for c, v := range set {
				cells = append(cells, client.Cell{Family: c.Family, Qualifier: c.Qualifier, Value: []byte(v)})
			}
			err = tbl.Put(ctx, k, cells...)
		}
		if err != nil {
			t.Errorf("writer %d: %v", w, err)
			return
		}
		m.mu.Lock()
		row := m.rows[string(k)]
		switch {
		case wholeRow && len(set) > 0:
			m.rows[string(k)] = set
		case wholeRow:
			delete(m.rows, string(k))
		case del != nil:
			for _, c := range del {
				delete(row, c)
			}
			if len(row) == 0 {
				delete(m.rows, string(k))
			}
		default:
			if row == nil {
				row = map[client.Column]string{}
				m.rows[string(k)] = row
			}
			for c, v := range set {
				row[c] = v
			}
		}
		m.mu.Unlock()
		ops.Add(1)
	}
}

// TestSyncRecipeLiveWriters runs docs/migrate.md's recipe while writers put, delete rows and delete
// columns on the source: copy, two catch-ups, the writers paused, a last catch-up, sync (a dry run
// first), verify. The target then holds exactly what the model of the writers says: no deleted
// row or column came back, and its index is exact.
func TestSyncRecipeLiveWriters(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		t.Run(fmt.Sprintf("indexed=%t", indexed), func(t *testing.T) {
			ctx := testkit.Context(t, 2*time.Minute)
			from, to := open(t, "memory"), open(t, "local")
			load(t, ctx, from, indexed)
			m := &model{rows: map[string]map[client.Column]string{}}
			for i := range rows {
				m.rows[string(key(i))] = map[client.Column]string{{Family: "d", Qualifier: "buyer"}: fmt.Sprintf("b%d", i%50), {Family: "m", Qualifier: "v"}: "2"}
			}
			src, err := from.OpenTable(ctx, "orders", nil)
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan struct{})
			var ops atomic.Int64
			var wg sync.WaitGroup
			for w := range 2 {
				wg.Go(func() { m.writer(t, ctx, src, indexed, w, 2, stop, &ops) })
			}
			waitOps := func(more int64) {
				for n := ops.Load(); ops.Load() < n+more && !t.Failed(); {
					time.Sleep(time.Millisecond)
				}
			}
			opts := migrate.Options{Salter: testkit.Salter(t, "hash:7")}
			st, err := migrate.Copy(ctx, from, to, "orders", opts)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // catch-ups, the writers still writing
				waitOps(200)
				if st, err = migrate.Copy(ctx, from, to, "orders", migrate.Options{Since: st.Since}); err != nil {
					t.Fatal(err)
				}
			}
			waitOps(200)
			close(stop)
			wg.Wait()
			if st, err = migrate.Copy(ctx, from, to, "orders", migrate.Options{Since: st.Since}); err != nil {
				t.Fatal(err)
			}

			var dry []migrate.Change
			dst, err := migrate.Sync(ctx, from, to, "orders", migrate.SyncOptions{DryRun: true, OnChange: func(c migrate.Change) { dry = append(dry, c) }})
			if err != nil || dst.Changes == 0 || int(dst.Changes) != len(dry) {
				t.Fatalf("dry run: %+v, %v, %d changes reported; want the deletes the catch-ups left", dst, err, len(dry))
			}
			if n := differences(t, ctx, from, to, indexed); n != len(dry) {
				t.Fatalf("after the dry run %d differences, want the %d it found, none repaired", n, len(dry))
			}
			var progressed atomic.Bool
			sst, err := migrate.Sync(ctx, from, to, "orders", migrate.SyncOptions{Progress: func(migrate.SyncProgress) { progressed.Store(true) }})
			if err != nil || sst.Changes != dst.Changes || !progressed.Load() {
				t.Fatalf("sync: %+v, %v (progress %t); want the dry run's %d changes", sst, err, progressed.Load(), dst.Changes)
			}
			if n := differences(t, ctx, from, to, indexed); n != 0 {
				t.Fatalf("verify after the sync: %d differences", n)
			}
			checkModel(t, ctx, to, indexed, m)
		})
	}
}

// differences is how many keys compare finds differing between orders on a and on b.
func differences(t *testing.T, ctx context.Context, a, b *client.Client, indexed bool) int {
	t.Helper()
	n := 0
	for _, err := range compare.Tables(ctx, side(t, ctx, a, indexed), side(t, ctx, b, indexed), client.Range{}, compare.Options{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

func side(t *testing.T, ctx context.Context, c *client.Client, indexed bool) compare.Source {
	t.Helper()
	if indexed {
		it, err := c.OpenTable(ctx, "orders", nil)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	tbl, err := c.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// checkModel fails t unless orders on c holds exactly m's rows, and its indexes are exact.
func checkModel(t *testing.T, ctx context.Context, c *client.Client, indexed bool, m *model) {
	t.Helper()
	seen := 0
	for row, err := range side(t, ctx, c, indexed).Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		seen++
		want, ok := m.rows[string(row.Key)]
		if !ok {
			t.Errorf("row %s is on the target, deleted by the writers", row.Key)
			continue
		}
		got := map[client.Column]string{}
		for _, cell := range row.Cells {
			got[client.Column{Family: cell.Family, Qualifier: cell.Qualifier}] = string(cell.Value)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("row %s holds %v, the writers left %v", row.Key, got, want)
		}
	}
	if seen != len(m.rows) {
		t.Errorf("the target holds %d rows, the writers left %d", seen, len(m.rows))
	}
	if !indexed {
		return
	}
	it, err := c.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ix := range it.Indexes() {
		rep, err := ix.Verify(ctx)
		if err != nil || rep.Problems() != 0 {
			t.Errorf("index %s after the sync: %+v, %v", ix.Name(), rep, err)
		}
	}
}

// TestSyncResume interrupts a sync after its first batch, then resumes it; a new sync over the
// interrupted one, and a resume with other options, are refused.
func TestSyncResume(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := copiedThenChanged(t, ctx, rows/3)
	cctx, cancel := context.WithCancel(ctx)
	first, err := migrate.Sync(cctx, from, to, "orders", migrate.SyncOptions{OnChange: func(migrate.Change) { cancel() }})
	cancel()
	if !errors.Is(err, context.Canceled) || first.Changes == 0 || first.Changes >= rows/3 {
		t.Fatalf("interrupted sync: %+v, %v; want canceled after its first batch", first, err)
	}
	if _, err := migrate.Sync(ctx, from, to, "orders", migrate.SyncOptions{}); !errors.Is(err, migrate.ErrInterrupted) {
		t.Errorf("a new sync over an interrupted one: %v, want ErrInterrupted", err)
	}
	if _, err := migrate.Sync(ctx, from, to, "orders", migrate.SyncOptions{Resume: true, AllVersions: true}); !errors.Is(err, migrate.ErrResumeMismatch) {
		t.Errorf("resume with other versions: %v, want ErrResumeMismatch", err)
	}
	rest, err := migrate.Sync(ctx, from, to, "orders", migrate.SyncOptions{Resume: true})
	if err != nil || rest.Changes+first.Changes != rows/3 {
		t.Fatalf("resumed sync: %+v, %v; want the rest of %d changes after %d", rest, err, rows/3, first.Changes)
	}
	if n := differences(t, ctx, from, to, false); n != 0 {
		t.Fatalf("after the resumed sync: %d differences", n)
	}
	if _, err := to.OpenTable(ctx, migrate.SyncCheckpointTable("orders"), nil); !errors.Is(err, client.ErrTableNotFound) {
		t.Errorf("checkpoint left after the sync: %v", err)
	}
}

func TestSyncBadInput(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "memory")
	load(t, ctx, from, false)
	if _, err := to.CreateTable(ctx, "keyed", client.TableConfig{Salter: testkit.Salter(t, "hash:2"), KeySchema: testkit.Schema(t, "n:int64")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		to   *client.Client
		opts migrate.SyncOptions
		want error
	}{
		{"onto itself", from, migrate.SyncOptions{}, migrate.ErrSameTable},
		{"no target", to, migrate.SyncOptions{}, client.ErrTableNotFound},
		{"target with another key schema", to, migrate.SyncOptions{As: "keyed"}, client.ErrInvalidArgument},
		{"resume with no checkpoint", to, migrate.SyncOptions{As: "keyed", Resume: true}, client.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := migrate.Sync(ctx, from, tc.to, "orders", tc.opts); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if names, _ := to.Tables(ctx); len(names) != 1 {
				t.Errorf("the target store has %v, want only the table made before", names)
			}
		})
	}
}

// TestSyncCheckpointMadeWhenNeeded: a sync whose changes fit in one batch makes no checkpoint (its
// create and drop were most of a small sync's time on HBase); a sync of more than one batch has it
// before its first change is written, and resumes from it. Either way the next sync finds the rest.
func TestSyncCheckpointMadeWhenNeeded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changed int // source rows changed (copiedThenChanged)
		want    bool
	}{
		{"one batch", 30, false},
		{"several batches", rows / 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testkit.Context(t, time.Minute)
			from, to := copiedThenChanged(t, ctx, tc.changed)
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var cpThere []bool // at each change reported
			first, err := migrate.Sync(cctx, from, to, "orders", migrate.SyncOptions{OnChange: func(migrate.Change) {
				_, err := to.OpenTable(ctx, migrate.SyncCheckpointTable("orders"), nil)
				cpThere = append(cpThere, err == nil)
				cancel()
			}})
			// Cancelled in its last batch's report, a sync is done: it had nothing more to write.
			if len(cpThere) == 0 || tc.want && !errors.Is(err, context.Canceled) || !tc.want && (err != nil || first.Changes != int64(tc.changed)) {
				t.Fatalf("sync cancelled at its first change: %+v, %v (checkpoint seen %v)", first, err, cpThere)
			}
			if cpThere[0] != tc.want {
				t.Fatalf("checkpoint there after the first batch: %t, want %t", cpThere[0], tc.want)
			}
			again, err := migrate.Sync(ctx, from, to, "orders", migrate.SyncOptions{Resume: tc.want})
			if err != nil || again.Changes+first.Changes != int64(tc.changed) {
				t.Fatalf("sync after the interrupted one: %+v, %v; want the rest of %d changes after %d", again, err, tc.changed, first.Changes)
			}
			if n := differences(t, ctx, from, to, false); n != 0 {
				t.Fatalf("after the sync: %d differences", n)
			}
			if _, err := to.OpenTable(ctx, migrate.SyncCheckpointTable("orders"), nil); !errors.Is(err, client.ErrTableNotFound) {
				t.Errorf("checkpoint left after the sync: %v", err)
			}
		})
	}
}

// copiedThenChanged loads the orders into a memory store, copies them into another (hash:3), and
// then deletes column m:v of n of the source's rows, every third from key 0: n differences.
func copiedThenChanged(t *testing.T, ctx context.Context, n int) (from, to *client.Client) {
	t.Helper()
	from, to = open(t, "memory"), open(t, "memory")
	load(t, ctx, from, false)
	if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{Salter: testkit.Salter(t, "hash:3")}); err != nil {
		t.Fatal(err)
	}
	src, err := from.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := src.Delete(ctx, key(3*i), client.Column{Family: "m", Qualifier: "v"}); err != nil {
			t.Fatal(err)
		}
	}
	return from, to
}
