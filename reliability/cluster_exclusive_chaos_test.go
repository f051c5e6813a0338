//go:build integration

package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// Sizes and timings of TestClusterExclusiveChaos.
const (
	exChaosRows = 3000
	exChaosRate = 300 // rows a second, at most: the import spans several kills
	// A request gives up on a region moving off a killed server after this: the job's run fails, and
	// is resumed, more often than with a longer wait.
	exChaosRequest = 3 * time.Second
	// The lease outlasts a renewal or two lost to a kill; the jobs resume by take-overs anyway.
	exChaosLease    = 20 * time.Second
	exChaosMaxChaos = 30 * time.Second // per job; it goes on without kills after
)

// TestClusterExclusiveChaos: on the cluster of scripts/hbase/cluster.sh, the exclusive bulk mode while
// region servers are SIGKILLed and restarted (killUntil, as in TestClusterIndexChaos): an exclusive
// import of generation 2 over the order table's generation 1, then the build of two new indexes under
// one fence (killBuilds, AddIndex). The kills begin as each job's work does; the import's writes
// must have met them (a batch retried or a row failed). A job that fails is resumed by a take-over
// of the fence, as --resume does (the import with the rows it had not confirmed: failed or not read,
// as the CLI's failure report holds them), until it completes. Then, through a new client: every
// index active and verifying clean before any query, every query by index exact, and every row of
// generation 2 there.
func TestClusterExclusiveChaos(t *testing.T) {
	cl := hbasetest.FindCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sess, err := cl.Admin.Session()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	c := openChaosClient(t, cl, exChaosRequest)
	name := hbasetest.Table("brine_exchaos")
	tbl, err := c.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, "hash:4"), Indexes: indextest.OrderIndexes(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer dropTable(t, c, name)
	if err := importAll(ctx, tbl.Import, 1, exChaosRows, nil, 0); err != nil {
		t.Fatal(err)
	}

	// underChaos: the kills go on; each job counts the work it did meanwhile.
	var underChaos atomic.Bool
	imp := exChaosImport{underChaos: &underChaos}
	for i := range exChaosRows {
		imp.pending = append(imp.pending, i)
	}
	builds := killBuilds(t)
	var bucketsUnderChaos atomic.Int64
	jobs := []struct {
		what string
		work func(*client.ExclusiveTable) error
		// progress: the work done while the kills went on (rows imported, buckets built), for the log:
		// how much a run gets done depends on how soon the killed server's regions are back.
		progress func() int64
	}{
		{"exclusive import", func(x *client.ExclusiveTable) error { return imp.run(ctx, x) }, imp.writtenUnderChaos.Load},
		{"exclusive index build", func(x *client.ExclusiveTable) error {
			for _, cfg := range builds {
				if _, err := x.AddIndex(ctx, cfg, func(client.RebuildProgress) {
					if underChaos.Load() {
						bucketsUnderChaos.Add(1)
					}
				}); err != nil {
					return err
				}
			}
			return nil
		}, bucketsUnderChaos.Load},
	}
	m := newMonkey(t, cl, sess, name)
	for _, job := range jobs {
		began := time.Now()
		done, fenced := make(chan struct{}), make(chan struct{})
		var once sync.Once
		var attempts int
		go func() {
			defer close(done)
			attempts = untilDone(ctx, t, job.what, func(takeOver bool) error {
				return underFence(ctx, tbl, client.ExclusiveOptions{Lease: exChaosLease, TakeOver: takeOver}, func(x *client.ExclusiveTable) error {
					once.Do(func() { close(fenced) })
					return job.work(x)
				})
			})
		}()
		// The kills begin with the work, once the fence is first taken: the fence's reads and writes of
		// the tables' meta and directory (one region each) are refused run after run while a killed
		// server's regions move, and the work would begin only once the kills are over.
		select {
		case <-fenced:
		case <-done:
		}
		underChaos.Store(true)
		kills := killUntil(ctx, t, m, done, exChaosMaxChaos)
		underChaos.Store(false)
		<-done
		fmt.Printf("exclusive chaos: %s: %d region server kills, %d runs, %d done under the kills, %s\n",
			job.what, kills, attempts, job.progress(), time.Since(began).Round(time.Millisecond))
		if t.Failed() {
			return
		}
	}
	fmt.Printf("exclusive chaos: import: %d rows written, %d retried, %d failed and imported again\n", imp.written, imp.retried, imp.failed)
	if imp.retried+imp.failed == 0 {
		t.Errorf("no write of the import met a kill: too little to prove anything")
	}
	if err := m.heal(ctx); err != nil {
		t.Fatalf("bringing every region server back: %v", err)
	}

	// Verify through a client that saw none of it, once every table serves again: first Verify, before
	// any query (a query repairs what it passes), then the queries.
	fresh, err := openChaosClient(t, cl, 30*time.Second).OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh.Indexes()) != len(indextest.OrderIndexes(t))+len(builds) {
		t.Fatalf("indexes after the jobs: %d, want %d", len(fresh.Indexes()), len(indextest.OrderIndexes(t))+len(builds))
	}
	for _, ix := range fresh.Indexes() {
		if ix.State() != client.IndexActive {
			t.Fatalf("index %s is %s after the jobs, want active", ix.Name(), ix.State())
		}
		var rep client.IndexReport
		if err := untilServed(ctx, "verify "+ix.Name(), func() (err error) {
			rep, err = ix.Verify(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if rep.Problems() != 0 || rep.Rows != exChaosRows {
			t.Fatalf("after the jobs: %v %q, want %d rows and no problem", rep, rep.Examples, exChaosRows)
		}
	}
	indextest.AssertIndexes(t, fresh)
	if n := countGen(t, fresh, 2); n != exChaosRows {
		t.Fatalf("after the import: %d of %d rows of generation 2", n, exChaosRows)
	}
}

// untilDone runs a job until it succeeds, each run after a failed one a take-over of the fence the
// failed one may have left; it returns the runs. An error that is brine's own mistake, not the
// cluster's, fails the test at once.
func untilDone(ctx context.Context, t *testing.T, what string, run func(takeOver bool) error) (attempts int) {
	for attempts = 1; ; attempts++ {
		err := run(attempts > 1)
		switch {
		case err == nil:
			return attempts
		case errors.Is(err, backends.ErrInvalidArgument), errors.Is(err, client.ErrUniqueViolation), errors.Is(err, client.ErrIndexMismatch):
			t.Errorf("%s: %v", what, err)
			return attempts
		case ctx.Err() != nil:
			t.Errorf("%s: not done in time: %v", what, err)
			return attempts
		}
		t.Logf("%s stopped (run %d), resuming by a take-over: %v", what, attempts, err)
		time.Sleep(time.Second)
	}
}

// exChaosImport is the import of generation 2, run again for the rows it has not confirmed.
type exChaosImport struct {
	underChaos        *atomic.Bool
	writtenUnderChaos atomic.Int64 // rows confirmed while underChaos

	mu                       sync.Mutex
	pending                  []int // the rows not confirmed: all at first, then the failed and the unread
	written, retried, failed int64
}

// run imports the pending rows through x and keeps the ones not confirmed for the next run.
func (imp *exChaosImport) run(ctx context.Context, x *client.ExclusiveTable) error {
	var failed []int
	var seen int64 // rows confirmed at the last progress report (one report at a time)
	// Two tries a row: a row a kill fails twice is left to the next run, as the CLI's failure report
	// leaves it to --resume, rather than waited for.
	opts := client.ImportOptions{BatchRows: 50, MaxAttempts: 2, MaxBackoff: time.Second}
	opts.OnFailure = func(f client.FailedRow) {
		imp.mu.Lock()
		defer imp.mu.Unlock()
		failed = append(failed, f.Row.Source.(int))
	}
	opts.ProgressEvery, opts.Progress = 100*time.Millisecond, func(st client.ImportStats) {
		if imp.underChaos.Load() {
			imp.writtenUnderChaos.Add(st.Written - seen)
		}
		seen = st.Written
	}
	st, err := x.Import(ctx, pacedRows(2, imp.pending), opts)
	imp.mu.Lock()
	defer imp.mu.Unlock()
	imp.pending = append(failed, imp.pending[st.Read:]...)
	imp.written, imp.retried, imp.failed = imp.written+st.Written, imp.retried+st.Retried, imp.failed+st.Failed
	return err
}

// pacedRows yields rows idx of generation gen at about exChaosRate a second.
func pacedRows(gen int, idx []int) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		began := time.Now()
		for n, i := range idx {
			if n%50 == 0 {
				time.Sleep(time.Until(began.Add(time.Duration(n) * time.Second / exChaosRate)))
			}
			if !yield(killImportRow(gen, i), nil) {
				return
			}
		}
	}
}
