//go:build integration

package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// EnvRestart must be 1 for TestHBaseRestartResume to run: it stops and starts the HBase server.
const EnvRestart = "BRINE_HBASE_RESTART"

// TestHBaseRestartResume: an import is cut by a graceful stop of the HBase server and resumed from
// its failure report after a restart on the same data. Phase 1 (rows [0, n/2)) is imported fully;
// during phase 2 (rows [n/2, n)) the server is stopped (scripts/hbase/down.sh, HBASE_KEEP_DATA=1).
// The import still ends by itself, within its bounded retries and per-RPC timeouts, with every row
// read either written or in the failure report. After the restart (scripts/hbase/up.sh,
// HBASE_KEEP_DATA=1) a new client finds every row acknowledged before the stop, re-imports the
// report, and the table then equals the whole input exactly.
//
// It stops the server of $BRINE_HBASE_ZK, so it runs only with BRINE_HBASE_RESTART=1 and must never
// run while anything else uses that server (scripts/test.sh runs it alone, last). The scripts get
// this process's environment (HBASE_BASE, HBASE_ZK_PORT, ...), and the test checks that the instance
// they would stop is the one at $BRINE_HBASE_ZK. A second instance to try it on:
//
//	export HBASE_BASE=/tmp/hbase2 HBASE_ZK_PORT=2281 HBASE_MASTER_PORT=16100 HBASE_RS_PORT=16120
//	scripts/hbase/up.sh
//	BRINE_HBASE_ZK=127.0.0.1:2281 BRINE_HBASE_RESTART=1 go test -tags integration -run '^TestHBaseRestartResume$' ./reliability/
//	scripts/hbase/down.sh
func TestHBaseRestartResume(t *testing.T) {
	if os.Getenv(EnvRestart) != "1" {
		t.Skipf("%s is not 1: this test stops and restarts the HBase server at $%s, so it runs only alone "+
			"(scripts/test.sh runs it as its last step); to run it: %s=1 go test -tags integration -run '^TestHBaseRestartResume$' ./reliability/",
			EnvRestart, hbasetest.EnvZK, EnvRestart)
	}
	zk := hbasetest.ZK(t)
	repo := repoRoot(t)
	checkScriptsInstance(t, repo, zk)
	admin := findAdmin(t, zk)

	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const n = 20000
	ts := time.UnixMilli(testTS)

	// Once the server is gone every RPC gives up after 2 s, and a whole batch is in flight at once
	// (Concurrency >= BatchRows): the import's bounded retries then end it in seconds per batch.
	// This client lives through the restart, as an application's would. The pinned gohbase then
	// leaves connections behind that its Close does not reach: the admin client's new master
	// connection, and, in some runs, a region connection to the restarted server orphaned on the
	// way (seen still open minutes after Close; gohbase drops a region client from its cache
	// without closing it on server errors such as the stopping server's
	// RegionServerStoppedException, and its re-establishing goroutines can dial after Close). So
	// this client's own check ignores gohbase's connection goroutines; the ones left at the very
	// end (everything else closed) are counted, logged and excused from TestMain's check by
	// goroutine id. Every other goroutine is still checked.
	t.Cleanup(func() {
		left := hbasetest.GoroutinesWith(processRPCs)
		leakOptions = append(leakOptions, goleak.IgnoreCurrent())
		t.Logf("gohbase region connections the pre-restart client left open after Close: %d", left)
	})
	// c1 is checked while c2 is open (close1, below): c2's stall watch, one goroutine per Backend for
	// its whole life, runs then. That a Backend's Close ends its own watch, TestRefreshStalledRequest
	// checks (goleak.VerifyNone).
	c1, close1 := openHBaseWith(t, zk, hbase.Options{RequestTimeout: 2 * time.Second, Concurrency: 256},
		5*time.Second, goleak.IgnoreAnyFunction(receiveRPCs), goleak.IgnoreAnyFunction(processRPCs),
		goleak.IgnoreAnyFunction(stallWatch))
	name := hbasetest.Table("brine_rel_restart")
	tbl, err := c1.CreateTable(ctx, name, client.TableConfig{Salter: testkit.Salter(t, hbaseSpec)})
	if err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	// The table is dropped through the newest client, while it is open: each drop cleanup is
	// registered after its client's close, so it runs first (cleanups run last-in, first-out).
	cur := c1
	drop := func(c *client.Client) {
		if cur != c {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := c.DeleteTable(ctx, name); err != nil {
			t.Errorf("DeleteTable(%s): %v", name, err)
		}
	}
	t.Cleanup(func() { drop(c1) })

	// Phase 1: imported fully.
	st1, err := tbl.Import(ctx, pacedInput(0, n/2, 0, 0, nil), client.ImportOptions{Timestamp: ts})
	if err != nil || st1.Written != n/2 {
		t.Fatalf("phase 1: %+v, %v", st1, err)
	}

	// Phase 2: the server stops gracefully after some rows are written. The last tenth of the input
	// is held back until it is down, so rows are surely read while it is.
	var written atomic.Int64
	var rep failedRows
	opts := client.ImportOptions{
		Workers: 4, BatchRows: 250, MaxAttempts: 3, BaseBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		Timestamp: ts, OnFailure: rep.add,
		Progress: func(s client.ImportStats) { written.Store(s.Written) }, ProgressEvery: 50 * time.Millisecond,
	}
	stopped := make(chan struct{})
	importDone := make(chan struct{})
	down := false
	t.Cleanup(func() {
		if down { // the test failed between stop and start: leave the server as it found it
			if _, err := hbaseScript(context.Background(), repo, "up.sh"); err != nil {
				t.Errorf("restarting HBase after a failure: %v", err)
			}
		}
	})
	var st2 client.ImportStats
	var importErr error
	var stopTook time.Duration
	var writtenAtStop int64
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(importDone)
		st2, importErr = tbl.Import(gctx, pacedInput(n/2, n, 2, time.Millisecond, stopped), opts)
		return nil
	})
	g.Go(func() error {
		defer close(stopped)
		for written.Load() < 2000 {
			select {
			case <-importDone:
				return errors.New("phase 2 ended before 2000 rows were written: nothing to stop under")
			case <-time.After(20 * time.Millisecond):
			}
		}
		writtenAtStop = written.Load()
		began := time.Now()
		down = true
		out, err := hbaseScript(gctx, repo, "down.sh")
		stopTook = time.Since(began)
		t.Logf("down.sh (%v, %d phase-2 rows written when it began):\n%s", stopTook.Round(time.Millisecond), writtenAtStop, out)
		return err
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if importErr != nil && !errors.Is(importErr, client.ErrRowsFailed) {
		t.Fatalf("phase 2 ended with %v, not with its failures reported (ErrRowsFailed)", importErr)
	}
	if err := checkStats(st2, n/2, n/2, &rep); err != nil {
		t.Fatalf("phase 2: %v", err)
	}
	if st2.Failed == 0 {
		t.Fatalf("phase 2: %+v: no row failed although rows were read while the server was down", st2)
	}
	t.Logf("phase 2 ended by itself in %v: %d rows read, %d written, %d in the failure report, %d row retries, %d batches",
		st2.Elapsed.Round(time.Millisecond), st2.Read, st2.Written, st2.Failed, st2.Retried, st2.Batches)

	began := time.Now()
	out, err := hbaseScript(ctx, repo, "up.sh")
	if err != nil {
		t.Fatal(err)
	}
	down = false
	back := time.Now()
	restartTook := time.Since(began)
	t.Logf("up.sh (%v):\n%s", restartTook.Round(time.Millisecond), out)

	// The old client recovers by itself, within a bound: while the server was away its gohbase client
	// backed off for up to tens of seconds per region, and the driver replaces such a stuck client
	// (hbase.Options.RefreshAfter, 10 s by default). Requests must succeed again within
	// recoveryBound of the server's return; the first that does is timed. Row n/2-1 was written in phase 1.
	var recovered time.Duration
	for attempt := 1; ; attempt++ {
		row, err := tbl.Get(ctx, importKey(n/2-1))
		if err == nil {
			if !bytes.Equal(row.Key, importKey(n/2-1)) {
				t.Fatalf("the client opened before the restart read %q for %q", row.Key, importKey(n/2-1))
			}
			recovered = time.Since(back)
			break
		}
		if !client.IsRetryable(err) {
			t.Fatalf("the client opened before the restart: Get attempt %d failed with a non-retryable error: %v", attempt, err)
		}
		if time.Since(back) > recoveryBound {
			t.Fatalf("the client opened before the restart still fails %v after the server was back (bound %v, %d refreshes): %v",
				time.Since(back).Round(time.Millisecond), recoveryBound, c1.Backend().(*hbase.Backend).Refreshes(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the client opened before the restart reads again %v after the server was back (bound %v; it replaced its gohbase client %d times)",
		recovered.Round(time.Millisecond), recoveryBound, c1.Backend().(*hbase.Backend).Refreshes())

	// A new connection to the restarted server adopts the stored spec and finds every row that was
	// acknowledged before the stop: phase 1, and phase 2 minus the report.
	// Its leak check excuses gohbase's region-connection goroutines by name, like c1's: the gohbase
	// clients that c1 replaced while the server was away (hbase.Options.RefreshAfter) are closed, but
	// a region re-establishment of theirs still in flight can dial after that Close, and the
	// connection it opens, which nothing closes, starts while c2 is open. Everything else is checked.
	c2, _ := openHBaseWith(t, zk, hbase.Options{RequestTimeout: 10 * time.Second}, 5*time.Second,
		goleak.IgnoreAnyFunction(receiveRPCs), goleak.IgnoreAnyFunction(processRPCs))
	cur = c2
	t.Cleanup(func() { drop(c2) })
	tbl2, err := c2.OpenTable(ctx, name, nil)
	if err != nil {
		t.Fatalf("OpenTable after the restart: %v", err)
	}
	if tbl2.Salter().Spec() != hbaseSpec {
		t.Fatalf("spec after the restart: %q, want %q", tbl2.Salter().Spec(), hbaseSpec)
	}
	reported := map[int]bool{}
	for _, fr := range rep.rows {
		reported[fr.Row.Source.(int)] = true
	}
	stored, err := logicalRows(ctx, tbl2, c2.Backend(), n)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i := range n {
		if !reported[i] && !stored[i] {
			lost++
		}
	}
	if lost > 0 {
		t.Fatalf("%d rows acknowledged as written before the stop are gone after the restart", lost)
	}
	ambiguous := 0
	for i := range reported {
		if stored[i] {
			ambiguous++ // written, but the reply was lost in the stop: re-importing rewrites the same version
		}
	}

	// Resume: re-import the report.
	var rep3 failedRows
	opts3 := client.ImportOptions{Workers: 4, BatchRows: 250, MaxAttempts: 10, Timestamp: ts, OnFailure: rep3.add}
	st3, err := tbl2.Import(ctx, rep.input(), opts3)
	if err != nil || st3.Written != st2.Failed {
		t.Fatalf("re-importing the %d reported rows: %+v, %v", st2.Failed, st3, err)
	}
	if err := checkRawTable(ctx, tbl2, c2.Backend(), n, ts.UnixMilli()); err != nil {
		t.Fatal(err)
	}

	// The pinned gohbase (re-)establishes each region in a goroutine, which sleeps out a backoff
	// grown to tens of seconds while the server was down; a client closed before they finish
	// leaks the connections they then open (gohbase checks for Close only on some paths). Let
	// them finish first.
	hbasetest.WaitGoroutinesGone(t, hbasetest.EstablishRegion, 90*time.Second)
	close1()

	regions, err := admin.Regions(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows exact after stop (%v), restart (%v) and resume (%d rows re-imported in %v, %d of them already stored); %d regions online",
		n, stopTook.Round(time.Millisecond), restartTook.Round(time.Millisecond), st3.Written, st3.Elapsed.Round(time.Millisecond), ambiguous, len(regions))
}

// recoveryBound is how soon after a server's return a client that lived through its absence must
// serve requests again: hbase.Options.RefreshAfter (10 s by default) to notice that its gohbase
// client is stuck in backoff and replace it, plus the new client's lookups and a margin for a
// loaded 2-core machine.
const recoveryBound = 25 * time.Second

// The goroutines the restart test waits for or ignores by name: the pinned gohbase's, and the
// driver's stall watch.
const (
	receiveRPCs = "github.com/tsuna/gohbase/region.(*client).receiveRPCs"
	processRPCs = "github.com/tsuna/gohbase/region.(*client).processRPCs"
	stallWatch  = "github.com/brine-kv/brine/backends/hbase.(*Backend).watchStalls.func1"
)

// logicalRows reads the physical table and returns which input rows [0, n) it holds; any other row,
// or a row twice, is an error.
func logicalRows(ctx context.Context, tbl *client.Table, b backends.Backend, n int) (map[int]bool, error) {
	stored := map[int]bool{}
	for row, err := range b.Scan(ctx, tbl.Name(), backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			return nil, fmt.Errorf("raw scan after %d rows: %w", len(stored), err)
		}
		logical, err := tbl.Salter().AppendLogical(nil, row.Key)
		if err != nil {
			return nil, err
		}
		var i int
		if _, err := fmt.Sscanf(string(logical), "row%06d", &i); err != nil || i >= n || !bytes.Equal(logical, importKey(i)) {
			return nil, fmt.Errorf("stored row %q was never imported", logical)
		}
		if stored[i] {
			return nil, fmt.Errorf("row %q stored twice", logical)
		}
		stored[i] = true
	}
	return stored, nil
}

// repoRoot is the module root above the working directory (where scripts/hbase lives).
func repoRoot(t *testing.T) string {
	t.Helper()
	a, err := hbasetest.FindAdmin("")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(a.Script)))
}

// checkScriptsInstance fails the test unless the instance that down.sh would stop (the one under
// $HBASE_BASE, default $repo/.hbase, bare JVM or container) serves ZooKeeper at zk: stopping some other
// server would break whoever uses it. up.sh records its instance's address in run/zk.
func checkScriptsInstance(t *testing.T, repo, zk string) {
	t.Helper()
	base := os.Getenv("HBASE_BASE")
	if base == "" {
		base = filepath.Join(repo, ".hbase")
	}
	file := filepath.Join(base, "run", "zk")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the scripts' instance (HBASE_BASE=%s) has no instance file: %v", base, err)
	}
	if got := strings.TrimSpace(string(raw)); got != zk {
		t.Fatalf("the scripts' instance (%s: %s) is not the server at %s=%s: set HBASE_BASE (and HBASE_*_PORT) to the instance to restart",
			file, got, hbasetest.EnvZK, zk)
	}
}

// hbaseScript runs scripts/hbase/NAME with HBASE_KEEP_DATA=1 and this process's environment, and
// returns its output.
func hbaseScript(ctx context.Context, repo, name string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(repo, "scripts", "hbase", name))
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "HBASE_KEEP_DATA=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", name, err, out)
	}
	return string(out), nil
}
