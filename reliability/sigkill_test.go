package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

// A client process killed with SIGKILL in the middle of an indexed import, a rebucket (of the main
// table or of an index's table), or an exclusive job (an import or an index build under the fence):
// the test re-runs its own binary as the child (TestSIGKILLChild, told what to do by
// $BRINE_SIGKILL_JOB), kills it at a random point, and checks, before any repair, that every query
// by index equals the answer computed from the main table (or, where the dead job's fence left its
// indexes building, is refused); then completes the work (the import again, the rebucket resumed by
// the same call from a new client, the exclusive job resumed as --resume does) and checks that every
// index is exact and verifies clean.

const envKillJob = "BRINE_SIGKILL_JOB"

// killJob is what the child does.
type killJob struct {
	Store string        // "local:PATH" or "hbase:ZK"
	Table string        //
	Op    string        // one of killOps
	Gen   int           // the import's generation: its values differ from the one before's
	Rows  int           // rows of the import
	Index string        // the index a rebucket-index moves, or an exclusive-index builds (killBuilds)
	To    string        // the rebucket's spec
	Fence time.Duration // the rebucket's fence; handles refresh at a fifth of it
	Lease time.Duration // an exclusive job's lease
	Hold  time.Duration // how long the child's work waits midway for the kill (killHold)
}

// killOps are the rounds' operations: an import, a rebucket of the main table, one of an index
// table (indextest.Rebuckets), an exclusive import and an exclusive index build.
var killOps = []string{"import", "rebucket", "rebucket-index", "exclusive-import", "exclusive-index"}

// rebucket runs the job's rebucket; progress, when set, is told each step it takes.
func (j killJob) rebucket(ctx context.Context, tbl *client.Table, progress func(state string)) error {
	opts := client.RebucketOptions{Fence: j.Fence, Grace: j.Fence / 2, Workers: 2}
	if progress != nil {
		opts.Progress = func(p client.RebucketProgress) { progress(p.State) }
	}
	s, err := salting.ParseSpec(j.To)
	if err != nil {
		return err
	}
	if j.Op == "rebucket-index" {
		return tbl.RebucketIndex(ctx, j.Index, s, opts)
	}
	return tbl.Rebucket(ctx, s, opts)
}

// openKillStore opens the store a job names. The local store skips fsync: a killed process leaves
// its writes in the page cache, which is what a SIGKILL (not a power cut) tests.
func openKillStore(ctx context.Context, store string) (backends.Backend, error) {
	scheme, rest, _ := strings.Cut(store, ":")
	switch scheme {
	case "local":
		return local.Open(context.Background(), local.Config{Path: rest, NoSync: true, LockTimeout: 10 * time.Second})
	case "hbase":
		return hbase.Open(ctx, hbase.Config{ZKQuorum: rest, Options: hbase.Options{RequestTimeout: 10 * time.Second}})
	}
	return nil, fmt.Errorf("store %q: want local:PATH or hbase:ZK", store)
}

func killClient(b backends.Backend, fence time.Duration, opts ...client.Option) *client.Client {
	return client.New(b, append([]client.Option{client.WithRouteRefresh(fence / 5), client.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
}

// killHold is how long a child's import or index build waits midway: its input after half the
// rows, its build after each bucket it reports. The parent's kill follows a line the child printed
// before (at most a third of the rows written, or one or two buckets of four built), and a few
// hundred rows are written in milliseconds, sooner than a busy parent may act on the line: the hold
// keeps the rest of the work for the kill.
const killHold = 2 * time.Second

// killImportRows are generation gen of the import, killImportRow 0 to n-1; the input waits hold
// after its first half.
func killImportRows(gen, n int, hold time.Duration) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			if i == n/2 {
				time.Sleep(hold)
			}
			if !yield(killImportRow(gen, i), nil) {
				return
			}
		}
	}
}

// killImportRow is row i of generation gen: its seller, timestamp and amount change with gen (so
// that a later import moves entries), its unique ext stays its own. Its Source is i.
func killImportRow(gen, i int) client.ImportRow {
	return client.ImportRow{Source: i, Mutation: client.Mutation{Key: indextest.OrderKey(fmt.Sprintf("imp%05d", i)), Cells: []client.Cell{
		{Family: "d", Qualifier: "seller", Value: fmt.Appendf(nil, "host%d", (i+gen)%5)},
		{Family: "d", Qualifier: "buyer", Value: fmt.Appendf(nil, "b%d", i%3)},
		{Family: "d", Qualifier: "ext", Value: fmt.Appendf(nil, "x%d", i)},
		{Family: "d", Qualifier: "ts", Value: indextest.TS(uint64(gen))},
		{Family: "d", Qualifier: "amount", Value: killAmount(gen, i)},
	}}}
}

func killAmount(gen, i int) []byte { return fmt.Appendf(nil, "%d-%d", gen, i) }

// importFunc is an Import: Table's, or ExclusiveTable's under the fence.
type importFunc func(context.Context, iter.Seq2[client.ImportRow, error], client.ImportOptions) (client.ImportStats, error)

// importAll imports generation gen by imp; progress, when set, is told the rows written so far,
// often; the input waits hold after its first half.
func importAll(ctx context.Context, imp importFunc, gen, n int, progress func(written int64), hold time.Duration) error {
	// Small batches: the rows land steadily, so a kill finds some written and some not.
	opts := client.ImportOptions{BatchRows: 20}
	if progress != nil {
		opts.Progress, opts.ProgressEvery = func(st client.ImportStats) { progress(st.Written) }, time.Millisecond
	}
	stats, err := imp(ctx, killImportRows(gen, n, hold), opts)
	if err == nil && stats.Written != int64(n) {
		err = fmt.Errorf("import generation %d: %d of %d rows written", gen, stats.Written, n)
	}
	return err
}

// TestSIGKILLChild is the child of the SIGKILL tests; alone, it skips.
func TestSIGKILLChild(t *testing.T) {
	raw := os.Getenv(envKillJob)
	if raw == "" {
		t.Skip("the child process of the SIGKILL tests, run by them")
	}
	var job killJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := openKillStore(ctx, job.Store)
	if err != nil {
		t.Fatal(err)
	}
	var opts []client.Option
	if job.Op == "exclusive-index" {
		// The build reports each bucket of the main table done (hash:4); two at a time, the first
		// report comes with half the build to go, not at its end.
		opts = append(opts, client.WithConcurrency(2))
	}
	c := killClient(b, job.Fence, opts...)
	defer c.Close()
	tbl, err := c.OpenTable(ctx, job.Table, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	switch job.Op {
	case "import":
		err = importAll(ctx, tbl.Import, job.Gen, job.Rows, func(n int64) { fmt.Println("rows", n) }, job.Hold)
	case "exclusive-import", "exclusive-index":
		err = job.exclusive(t, ctx, tbl, false, func(line string) { fmt.Println(line) }, job.Hold)
	default:
		// Indexed writers run throughout, so the kill also lands in the middle of their writes.
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(job.Gen), uint64(w)))
				for wctx.Err() == nil {
					_ = indextest.RandomWrite(wctx, tbl, rng, 40)
				}
			})
		}
		err = job.rebucket(ctx, tbl, func(state string) { fmt.Println("state", state) })
		stop()
		wg.Wait()
	}
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("done")
}

// killStore is one store the SIGKILL rounds run on.
type killStore struct {
	// store is the child's name for round's store; open opens a client on it.
	store func(round int) string
	open  func(t *testing.T, round int) *client.Client
	// exclusive: one process at a time (the bbolt file's lock); the parent closes its client while
	// the child runs, and checks that the child holds the lock.
	exclusive bool
	table     func(round int) string
	rows      int
	fence     time.Duration
}

// runSIGKILL runs rounds of killOps on ks: create and fill the order table, start the child, kill it
// at a random point, check queries, complete, check everything exact. At least one kill of each op
// must land in the middle of its work.
func runSIGKILL(t *testing.T, ks killStore, rounds int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	midway := map[string]int{}
	for round := range rounds {
		op := killOps[round%len(killOps)]
		t.Run(fmt.Sprintf("%d-%s", round, op), func(t *testing.T) {
			if killRound(t, ks, round, op, rng) {
				midway[op]++
			}
		})
		if t.Failed() {
			return
		}
	}
	t.Logf("kills that landed midway, by op: %v", midway)
	for _, op := range killOps {
		if rounds >= len(killOps) && midway[op] == 0 {
			t.Errorf("no kill landed in the middle of a %s in %d rounds", op, rounds)
		}
	}
}

// killRound is one round; it reports whether the kill landed in the middle of op.
func killRound(t *testing.T, ks killStore, round int, op string, rng *rand.Rand) (midway bool) {
	ctx := context.Background()
	name := ks.table(round)
	c := ks.open(t, round)
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: indextest.OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := importAll(ctx, tbl.Import, 1, ks.rows, nil, 0); err != nil {
		t.Fatal(err)
	}
	// Each op's second, fourth... round takes the alternatives in turn: the other index kind (moved by
	// a rebucket-index, built by an exclusive-index), and an exclusive job resumed once its lease ran
	// out instead of by a take-over.
	again := round / len(killOps)
	rb := indextest.Rebuckets[0] // the main table; a rebucket-index takes the indexes in turn
	if op == "rebucket-index" {
		rb = indextest.Rebuckets[1+again%(len(indextest.Rebuckets)-1)]
	}
	// The lease: long enough to outlast the parent's checks under a dead holder's fence, short enough
	// to run out within the round.
	job := killJob{Store: ks.store(round), Table: name, Op: op, Gen: 2, Rows: ks.rows, Index: rb.Index, To: rb.To,
		Fence: ks.fence, Lease: 10 * ks.fence, Hold: killHold}
	if op == "exclusive-index" {
		builds := killBuilds(t)
		job.Index = builds[again%len(builds)].Name
	}
	// The kill: once the child reports a random number of rows written (in its first third; its input
	// holds after half), a random number of buckets built (one or two of four; it holds after each,
	// while its other worker's bucket goes on), or a random step taken, then within a random part of
	// a fence (a step lasts at least one).
	trigger := fmt.Sprint("rows ", 1+rng.IntN(ks.rows/3)) // batches in flight land too: leave room for them
	var delay time.Duration
	switch op {
	case "exclusive-index":
		trigger = fmt.Sprint("buckets ", 1+rng.IntN(2))
		delay = time.Duration(rng.Int64N(int64(ks.fence)))
	case "rebucket", "rebucket-index":
		trigger = "state " + []string{"pause", "migrate", "copied", "switched"}[rng.IntN(4)]
		delay = time.Duration(rng.Int64N(int64(ks.fence)))
	}
	if ks.exclusive {
		c.Close()
	}

	// Where another process may read while the child runs, every answer it gets must match its row.
	stopReads := func() {}
	if !ks.exclusive {
		stopReads = readWhileKilled(t, tbl, isExclusive(op))
	}
	done := runChild(t, job, trigger, delay, func() {
		if !ks.exclusive {
			return
		}
		path := strings.TrimPrefix(job.Store, "local:")
		if s, err := local.Open(context.Background(), local.Config{Path: path, LockTimeout: 50 * time.Millisecond}); err == nil {
			s.Close()
			t.Error("the local store opened while the child had it open")
		} else if !errors.Is(err, local.ErrLocked) {
			t.Errorf("opening the local store the child holds: %v", err)
		}
	})
	stopReads()
	if ks.exclusive {
		c = ks.open(t, round)
	}
	t.Logf("killed %v after %q (child finished first: %v)", delay, trigger, done)
	if isExclusive(op) {
		tbl, midway = finishExclusive(t, c, job, done, again%2 == 1)
		indextest.AssertIndexes(t, tbl)
		if err := c.DeleteTable(ctx, name); err != nil {
			t.Fatal(err)
		}
		return midway
	}
	if tbl, err = c.OpenTable(ctx, name, nil); err != nil {
		t.Fatal(err)
	}
	phys := name
	if op == "rebucket-index" {
		phys = client.IndexTableName(name, rb.Index)
	}
	st, err := c.RebucketStatus(ctx, phys)
	if err != nil {
		t.Fatal(err)
	}
	imported := countGen(t, tbl, 2)
	t.Logf("%d rows of generation 2, rebucket state %q %d/%d", imported, st.State, st.BucketsDone, st.Buckets)
	indextest.AssertQueries(t, tbl) // exact, with whatever the dead client left

	// Complete: the import once more, or the rebucket resumed by a new client.
	if op == "import" {
		midway = !done && imported > 0 && imported < ks.rows
		if err := importAll(ctx, tbl.Import, 2, ks.rows, nil, 0); err != nil {
			t.Fatal(err)
		}
		if n := countGen(t, tbl, 2); n != ks.rows {
			t.Fatalf("after the complete import: %d of %d rows of generation 2", n, ks.rows)
		}
	} else {
		midway = !done && st.Target != ""
		if err := job.rebucket(ctx, tbl, nil); err != nil {
			t.Fatal(err)
		}
		if st, err := c.RebucketStatus(ctx, phys); err != nil || st.Spec != rb.To || st.State != "" {
			t.Fatalf("after --resume: %+v %v, want %s serving", st, err, rb.To)
		}
	}
	indextest.AssertIndexes(t, tbl)
	if err := c.DeleteTable(ctx, name); err != nil {
		t.Fatal(err)
	}
	return midway
}

// TestSIGKILLIndexedLocal: the SIGKILL rounds on the embedded local store, a bbolt file the child
// holds locked until it is killed.
func TestSIGKILLIndexedLocal(t *testing.T) {
	// Each op twice: the rebucket-index once per index kind, the exclusive jobs resumed once by a
	// take-over and once after their lease ran out, the index build once per killBuilds. -short runs
	// each op once: the take-over, the first of killBuilds.
	rounds := 2 * len(killOps)
	if testing.Short() {
		rounds = len(killOps)
	}
	dir := t.TempDir()
	path := func(round int) string { return filepath.Join(dir, fmt.Sprintf("db%d", round)) }
	runSIGKILL(t, killStore{
		store: func(round int) string { return "local:" + path(round) },
		open: func(t *testing.T, round int) *client.Client {
			b, err := openKillStore(context.Background(), "local:"+path(round))
			if err != nil {
				t.Fatal(err)
			}
			c := killClient(b, 200*time.Millisecond)
			t.Cleanup(func() { _ = c.Close() })
			return c
		},
		exclusive: true,
		table:     func(int) string { return "orders" },
		rows:      600,
		fence:     200 * time.Millisecond,
	}, rounds, 1)
}
