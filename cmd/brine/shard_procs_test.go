package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

const envShardChild = "BRINE_SHARD_CHILD"

// shardChild is what TestShardChild runs: brine with Args, slowed by ChunkDelay after each copied
// chunk and by LineDelay before each line of output, so that a kill after its first one lands
// before its last.
type shardChild struct {
	Args                  []string
	ChunkDelay, LineDelay time.Duration
}

// slowWriter delays each write: the sync's changes and the verify's differences are printed one per
// line, after the batch they belong to is written.
type slowWriter struct {
	w     io.Writer
	delay time.Duration
}

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.w.Write(p)
}

// TestShardChild is a brine process for TestShardProcesses: run as main runs it, with the copy's
// progress printed as "rows N" after each chunk, and "exit N" at the end.
func TestShardChild(t *testing.T) {
	raw := os.Getenv(envShardChild)
	if raw == "" {
		t.Skip("run by TestShardProcesses")
	}
	var job shardChild
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatal(err)
	}
	env := &cliEnv{stdin: strings.NewReader(""), stdout: slowWriter{os.Stdout, job.LineDelay}, stderr: os.Stderr, getenv: os.Getenv,
		logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	env.watchCopy = func(p migrate.Progress) {
		fmt.Printf("rows %d\n", p.Rows)
		time.Sleep(job.ChunkDelay)
	}
	err := run(context.Background(), env, job.Args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "brine:", err)
	}
	fmt.Printf("exit %d\n", exitCode(context.Background(), err))
}

// proc is a brine child process.
type proc struct {
	name   string
	child  *testkit.Child
	lines  []string // its standard output, "exit N" aside
	code   int      // -1 when killed
	killed bool
}

// startProc starts brine args in a child; kill, when set, is asked of each output line whether to
// SIGKILL the child there.
func startProc(t *testing.T, name string, args []string, kill func(line string) bool, env ...string) (wait func() *proc) {
	t.Helper()
	job := shardChild{Args: args}
	if kill != nil { // slowed: the kill lands after its first chunk or line, long before its last
		job.ChunkDelay, job.LineDelay = 50*time.Millisecond, 2*time.Millisecond
	}
	raw, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, code: -1}
	p.child = testkit.StartChild(t, "^TestShardChild$", append(env, envShardChild+"="+string(raw))...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		exited := false
		for l := range p.child.Lines {
			if code, ok := strings.CutPrefix(l, "exit "); ok && !exited {
				_, _ = fmt.Sscan(code, &p.code)
				exited = true
			}
			if exited { // the test binary's own last words follow brine's
				continue
			}
			p.lines = append(p.lines, l)
			if kill != nil && !p.killed && kill(l) {
				_ = p.child.Cmd.Process.Signal(syscall.SIGKILL)
				p.killed = true
			}
		}
	}()
	return func() *proc {
		<-done
		err := p.child.Cmd.Wait()
		var exit *exec.ExitError
		if p.killed && !errors.As(err, &exit) {
			t.Fatalf("%s: killed, but %v", name, err)
		}
		if !p.killed && (p.code < 0 || err != nil) {
			t.Fatalf("%s: brine %q ended with %v, no exit code:\n%s", name, args, err, p.child.Stderr.String())
		}
		return p
	}
}

// shardStores are the two stores of TestShardProcesses: local files (one process at a time has
// one open, so the shards run in turn) or a local Tablestore server (they run at once).
type shardStores struct {
	from, to string
	env      []string // the children's environment: Tablestore's credentials
	together bool
}

// runShards runs brine args --shard I/3 for I = 0, 1, 2 (at once, or in turn), SIGKILLs shard 1 at
// the first line killAt accepts, runs it again with again added (--resume, or nothing) and returns
// the output lines of the three complete runs and their exit codes.
func runShards(t *testing.T, st shardStores, args []string, killAt func(string) bool, again ...string) (lines []string, codes []int) {
	t.Helper()
	shard := func(i int) []string { return append(slices.Clone(args), "--shard", fmt.Sprintf("%d/3", i)) }
	var waits []func() *proc
	var victim *proc
	for i := range 3 {
		var kill func(string) bool
		if i == 1 {
			kill = killAt
		}
		w := startProc(t, fmt.Sprintf("shard %d/3", i), shard(i), kill, st.env...)
		if st.together {
			waits = append(waits, w)
			continue
		}
		if p := w(); i == 1 {
			victim = p
		} else {
			lines, codes = append(lines, p.lines...), append(codes, p.code)
		}
	}
	for i, w := range waits {
		if p := w(); i == 1 {
			victim = p
		} else {
			lines, codes = append(lines, p.lines...), append(codes, p.code)
		}
	}
	if !victim.killed || victim.code >= 0 {
		t.Fatalf("shard 1/3 was not killed part-way: exit %d, output %q\n%s", victim.code, victim.lines, victim.child.Stderr.String())
	}
	p := startProc(t, "shard 1/3 again", append(shard(1), again...), nil, st.env...)()
	return append(lines, p.lines...), append(codes, p.code)
}

// dump is a table's rows, every cell with its timestamp, as scan --format cells prints them: a row
// a line.
func dump(t *testing.T, st shardStores, store, table string) []string {
	t.Helper()
	p := startProc(t, "scan "+table, []string{"scan", "--store", store, "--table", table, "--format", "cells"}, nil, st.env...)()
	if p.code != 0 || len(p.lines) == 0 {
		t.Fatalf("scan %s: exit %d, %d lines", table, p.code, len(p.lines))
	}
	return p.lines
}

// TestShardProcesses runs copy, verify and sync as 3 shard processes each, SIGKILLs one of them
// part-way and runs it again (the same command, with --resume=auto, for copy and sync): the copy's target then holds what a
// one-process copy's holds, cell for cell with timestamps; the shards' differences together are the
// one-process verify's; and after the sharded sync a whole verify finds the tables equal.
func TestShardProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs brine processes")
	}
	for _, kind := range []string{"local", "tablestore"} {
		t.Run(kind, func(t *testing.T) {
			var st shardStores
			c := newCLI(t)
			switch kind {
			case "local":
				st = shardStores{from: "local://" + filepath.Join(c.dir, "from.db") + "?nosync=1", to: "local://" + filepath.Join(c.dir, "to.db") + "?nosync=1"}
			case "tablestore":
				srv := tablestoretest.Start(t)
				vars := map[string]string{tablestore.EnvAccessKeyID: srv.AccessKeyID(), tablestore.EnvAccessKeySecret: srv.AccessKeySecret()}
				c.env.getenv = func(k string) string { return vars[k] }
				url := "tablestore+http://" + srv.Instance() + "@" + strings.TrimPrefix(srv.Endpoint(), "http://")
				st = shardStores{from: url, to: url, together: true}
				for k, v := range vars {
					st.env = append(st.env, k+"="+v)
				}
			}
			// 32 buckets, copied 2 at a time (--workers 2): a shard's 10 or 11 buckets take several
			// chunks, so a kill after its first lands part-way.
			const n = 4000
			var csv strings.Builder
			csv.WriteString("id,v,w\n")
			for i := range n {
				fmt.Fprintf(&csv, "%d,v%d,w%d\n", i, i, i%7)
			}
			c.ok("import", "--store", st.from, "--table", "orders", "--create", "--salt", "hash:32", "--key", "id:int64", c.file("orders.csv", csv.String()))
			copyArgs := []string{"copy", "--from", st.from, "--to", st.to, "orders", "--salt", "hash:8", "--workers", "2"}
			firstRows := func(l string) bool {
				var rows int
				_, err := fmt.Sscanf(l, "rows %d", &rows)
				return err == nil && rows > 0
			}

			// Copy: into "sharded" by 3 processes, into "whole" by one.
			// Each shard's one command line, as a job runner runs it again: --resume=auto.
			lines, codes := runShards(t, st, append(copyArgs, "--as", "sharded", "--resume=auto"), firstRows)
			if slices.ContainsFunc(codes, func(c int) bool { return c != 0 }) {
				t.Fatalf("sharded copy: exit codes %v\n%s", codes, lines)
			}
			if p := startProc(t, "whole copy", append(copyArgs, "--as", "whole"), nil, st.env...)(); p.code != 0 {
				t.Fatalf("whole copy: exit %d", p.code)
			}
			sharded, whole := dump(t, st, st.to, "sharded"), dump(t, st, st.to, "whole")
			if len(whole) < n {
				t.Fatalf("the one-process copy holds %d rows, want %d", len(whole), n)
			}
			if !slices.Equal(sharded, whole) {
				i := testkit.FirstDiff(sharded, whole)
				t.Fatalf("the sharded copy differs from the one-process copy at row %d of %d/%d", i, len(sharded), len(whole))
			}

			// Verify: the source changed, then 3 verify shards against one whole verify.
			var changes strings.Builder
			changes.WriteString("id,v\n")
			for i := 0; i < n; i += 3 {
				fmt.Fprintf(&changes, "%d,changed%d\n", i, i)
			}
			c.ok("import", "--store", st.from, "--table", "orders", c.file("changes.csv", changes.String()))
			verifyArgs := []string{"verify", "--from", st.from, "--to", st.to, "orders", "--as", "sharded", "--chunk", "64"}
			wantDiffs := startProc(t, "whole verify", verifyArgs, nil, st.env...)()
			if wantDiffs.code != 3 || len(wantDiffs.lines) != (n+2)/3 {
				t.Fatalf("whole verify: exit %d, %d differences; want 3 and %d", wantDiffs.code, len(wantDiffs.lines), (n+2)/3)
			}
			anyLine := func(string) bool { return true }
			lines, codes = runShards(t, st, verifyArgs, anyLine)
			if !slices.Equal(codes, []int{3, 3, 3}) {
				t.Errorf("verify shards: exit codes %v, want 3 each", codes)
			}
			slices.Sort(lines)
			if want := slices.Sorted(slices.Values(wantDiffs.lines)); !slices.Equal(lines, want) {
				t.Errorf("the verify shards found %d differences, the whole verify %d (first apart: %d)", len(lines), len(want), testkit.FirstDiff(lines, want))
			}

			// Sync: 3 shards repair it all; a whole verify then finds no difference.
			syncArgs := []string{"sync", "--from", st.from, "--to", st.to, "orders", "--as", "sharded", "--chunk", "64"}
			lines, codes = runShards(t, st, append(slices.Clone(syncArgs), "--resume=auto"), anyLine)
			if !slices.Equal(codes, []int{0, 0, 0}) {
				t.Fatalf("sync shards: exit codes %v\n%s", codes, lines)
			}
			if p := startProc(t, "verify after sync", verifyArgs, nil, st.env...)(); p.code != 0 || len(p.lines) != 0 {
				t.Fatalf("verify after the sharded sync: exit %d, differences %q", p.code, p.lines)
			}
			if got, want := dump(t, st, st.to, "sharded"), dump(t, st, st.from, "orders"); !slices.Equal(got, want) {
				t.Errorf("after the sync the target holds %d cells, the source %d (first apart: %d)", len(got), len(want), testkit.FirstDiff(got, want))
			}
		})
	}
}

// A bad --shard fails before any store is opened, saying what is wrong; brine reads no
// JOB_COMPLETION_INDEX of its own, so an unset one shows as a missing index.
func TestShardFlag(t *testing.T) {
	c := newCLI(t)
	to := "local://" + filepath.Join(c.dir, "to.db")
	for _, cmd := range []string{"copy", "verify", "sync"} {
		for _, tc := range []struct{ shard, want string }{
			{"3/3", "0 to 2"},
			{"1/0", "1 or more"},
			{"/4", "JOB_COMPLETION_INDEX"},
			{"x", "want I/N"},
		} {
			_, errOut, err := c.run(context.Background(), cmd, "--from", c.store, "--to", to, "orders", "--shard", tc.shard)
			if err == nil || !strings.Contains(err.Error()+errOut, tc.want) {
				t.Errorf("%s --shard %s: %v (%s), want an error saying %q", cmd, tc.shard, err, errOut, tc.want)
			}
		}
	}
	if entries, _ := os.ReadDir(c.dir); len(entries) != 0 {
		t.Errorf("the refused commands made %v", entries)
	}
}
