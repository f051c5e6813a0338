package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

// loadSpread creates table "orders" unsalted (one bucket) with rows rows whose keys are random
// bytes: a table whose shards are pieces of its key space, all of them holding rows.
func loadSpread(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	tbl, err := c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "none"), Families: []string{"d", "m"}, MaxVersions: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	muts := make([]client.Mutation, rows)
	for i := range muts {
		muts[i] = client.Mutation{Key: fmt.Appendf(nil, "%08x", r.Uint32()), Cells: []client.Cell{
			{Family: "d", Qualifier: "buyer", Value: fmt.Appendf(nil, "b%d", i%50), Timestamp: 1000},
			{Family: "m", Qualifier: "v", Value: []byte("1"), Timestamp: 1000},
		}}
		muts[i].Key[0] = byte(r.Uint32()) // the leading byte spread over all 256 values
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || errors.Join(rowErrs...) != nil {
		t.Fatal(err, errors.Join(rowErrs...))
	}
}

// copyShards runs the n shards of a copy of table at once, as n processes would, and returns their
// stats.
func copyShards(t *testing.T, ctx context.Context, from, to *client.Client, table string, n int, opts migrate.Options) []migrate.Stats {
	t.Helper()
	stats := make([]migrate.Stats, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			o := opts
			o.Shard = compare.Shard{Index: i, Count: n}
			<-start // all at once: they race to create the target
			stats[i], errs[i] = migrate.Copy(ctx, from, to, table, o)
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return stats
}

// TestShardedCopy: N shards of a copy started at once, N below, at and above the source's buckets,
// leave the target equal to the source, every version; one of them created the target, every
// checkpoint is gone, and together they wrote each row once.
func TestShardedCopy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		spread bool // the one-bucket table of random keys, else hash:4
		n      []int
	}{
		{"hash:4", false, []int{1, 3, 4, 6}},
		{"unsalted", true, []int{2, 5}},
	} {
		for _, n := range tc.n {
			t.Run(fmt.Sprintf("%s/N=%d", tc.name, n), func(t *testing.T) {
				ctx := testkit.Context(t, time.Minute)
				from, to := open(t, "memory"), open(t, "local")
				if tc.spread {
					loadSpread(t, ctx, from)
				} else {
					load(t, ctx, from, false)
					deleteSome(t, ctx, from, false)
				}
				stats := copyShards(t, ctx, from, to, "orders", n, migrate.Options{Salter: testkit.Salter(t, "hash:7"), AllVersions: true, ChunkRows: 200})
				created, written, nonEmpty := 0, int64(0), 0
				for _, st := range stats {
					if st.Created {
						created++
					}
					if st.Rows > 0 {
						nonEmpty++
					}
					written += st.Rows
				}
				want := int64(rows - 1)
				if tc.spread {
					want = rows
				}
				if created != 1 || written != want {
					t.Errorf("%d shards created the target and wrote %d rows; want 1, and %d rows", created, written, want)
				}
				if tc.spread && nonEmpty != n {
					t.Errorf("%d of %d shards of random keys wrote rows", nonEmpty, n)
				}
				equal(t, ctx, from, to, "orders", true)
				if names, err := to.Tables(ctx); err != nil || len(names) != 1 {
					t.Errorf("the target store holds %v (%v), want the copy only", names, err)
				}
			})
		}
	}
}

// TestShardResume: an interrupted shard resumes alone, with the same shard; a resume with another
// shard count, or none, and a new copy of another split, are refused before writing; its siblings
// start and finish meanwhile.
func TestShardResume(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "memory")
	load(t, ctx, from, false)
	cctx, cancel := context.WithCancel(ctx)
	opts := migrate.Options{AllVersions: true, ChunkRows: 100, Workers: 1, Shard: compare.Shard{Index: 1, Count: 3},
		Progress: func(p migrate.Progress) {
			if p.Rows >= 200 {
				cancel()
			}
		}}
	st, err := migrate.Copy(cctx, from, to, "orders", opts)
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted shard: %+v, %v; want canceled part-way", st, err)
	}
	opts.Progress = nil
	cp := migrate.ShardCheckpoint(migrate.CheckpointTable("orders"), opts.Shard)
	if _, err := to.OpenTable(ctx, cp, nil); err != nil {
		t.Fatalf("no checkpoint %s: %v", cp, err)
	}
	before, _ := to.Tables(ctx)
	for _, tc := range []struct {
		name  string
		shard compare.Shard
		res   bool
		want  error
		words string
	}{
		{"resume with another count", compare.Shard{Index: 1, Count: 4}, true, migrate.ErrResumeMismatch, "in 3 shards"},
		{"resume without a shard", compare.Shard{}, true, migrate.ErrResumeMismatch, "in 3 shards"},
		{"a new copy without a shard", compare.Shard{}, false, migrate.ErrInterrupted, cp},
		{"a new copy of another count", compare.Shard{Index: 0, Count: 2}, false, migrate.ErrInterrupted, cp},
		{"the same shard anew", opts.Shard, false, migrate.ErrInterrupted, cp},
		{"a bad shard", compare.Shard{Index: 3, Count: 3}, false, client.ErrInvalidArgument, "0 to 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			o.Shard, o.Resume = tc.shard, tc.res
			_, err := migrate.Copy(ctx, from, to, "orders", o)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("got %v, want %v saying %q", err, tc.want, tc.words)
			}
			if after, _ := to.Tables(ctx); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the refused copy changed the store's tables from %v to %v", before, after)
			}
		})
	}
	for _, i := range []int{0, 2} { // the siblings, while shard 1 waits to be resumed
		o := opts
		o.Shard = compare.Shard{Index: i, Count: 3}
		if _, err := migrate.Copy(ctx, from, to, "orders", o); err != nil {
			t.Fatalf("shard %d/3 beside the interrupted one: %v", i, err)
		}
	}
	opts.Resume = true
	rest, err := migrate.Copy(ctx, from, to, "orders", opts)
	if err != nil {
		t.Fatal(err)
	}
	if rest.Rows >= rows/3+rows/10 || st.Since.IsZero() || !rest.Since.Equal(st.Since.Truncate(time.Millisecond)) {
		t.Errorf("resumed shard: %d rows, next Since %v (the interrupted run's %v)", rest.Rows, rest.Since, st.Since)
	}
	equal(t, ctx, from, to, "orders", true)
	if names, _ := to.Tables(ctx); len(names) != 1 {
		t.Errorf("after the shards: %v, want the copy only", names)
	}
}

// TestShardIndexed: an indexed source is not copied in shards into a new target (one fence, one
// holder), with nothing made on the target; into a target that is there it is, through the
// target's indexes.
func TestShardIndexed(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "memory")
	mid := load(t, ctx, from, true)
	_, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{Shard: compare.Shard{Index: 0, Count: 2}})
	if !errors.Is(err, client.ErrInvalidArgument) || !strings.Contains(err.Error(), "fence") {
		t.Fatalf("sharded copy of an indexed table into a new target: %v, want ErrInvalidArgument naming the fence", err)
	}
	if names, _ := to.Tables(ctx); len(names) != 0 {
		t.Fatalf("the refused copy left %v", names)
	}
	if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{Since: mid, AllVersions: true}); err != nil {
		t.Fatal(err)
	}
	src, err := from.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := src.Put(ctx, key(i*100), client.Cell{Family: "d", Qualifier: "buyer", Value: []byte("late"), Timestamp: 3_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	copyShards(t, ctx, from, to, "orders", 3, migrate.Options{Since: time.UnixMilli(2_500_000)})
	equal(t, ctx, from, to, "orders", false)
	it, err := to.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := it.Index("by_buyer")
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := ix.Verify(ctx); err != nil || rep.Problems() != 0 {
		t.Errorf("the target's index after the sharded catch-up: %v, %v", rep, err)
	}
}

// TestShardedSync: N syncs, one per shard, started at once, repair every difference; each resumes
// alone, and a resume with another count is refused.
func TestShardedSync(t *testing.T) {
	ctx := testkit.Context(t, time.Minute)
	from, to := open(t, "memory"), open(t, "local")
	load(t, ctx, from, false)
	if _, err := migrate.Copy(ctx, from, to, "orders", migrate.Options{Salter: testkit.Salter(t, "hash:3"), AllVersions: true}); err != nil {
		t.Fatal(err)
	}
	src, err := from.OpenTable(ctx, "orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 60 {
		switch k := key(i * 50); {
		case i == 0: // equal's counts allow one row fewer
			err = src.Delete(ctx, k)
		case i%2 == 1:
			err = src.Put(ctx, k, client.Cell{Family: "m", Qualifier: "v", Value: []byte("3"), Timestamp: 3_000_000})
		default:
			err = src.Delete(ctx, k, client.Column{Family: "d", Qualifier: "buyer"})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	const n = 3
	var wg sync.WaitGroup
	changes := make([]int64, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			st, err := migrate.Sync(ctx, from, to, "orders", migrate.SyncOptions{AllVersions: true, Chunk: 64, Shard: compare.Shard{Index: i, Count: n}})
			changes[i], errs[i] = st.Changes, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if total := changes[0] + changes[1] + changes[2]; total != 60 || changes[0] == 0 || changes[2] == 0 {
		t.Errorf("the shards made %v changes, want 60 in all, spread", changes)
	}
	equal(t, ctx, from, to, "orders", true)
	if names, _ := to.Tables(ctx); len(names) != 1 {
		t.Errorf("after the syncs: %v, want the table only", names)
	}
}
