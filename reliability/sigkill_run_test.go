package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/indextest"
	"github.com/brine-kv/brine/internal/testkit"
)

// The parent's side of the SIGKILL rounds (sigkill_test.go): the child run and killed, and what the
// parent reads meanwhile and after.

// readWhileKilled queries every index until stop is called; each answer must carry the index key
// its row's values make. fenced: the child takes an exclusive fence, under which a query by index
// is refused with ErrIndexBuilding (every other error fails the test as before).
func readWhileKilled(t *testing.T, tbl *client.Table, fenced bool) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, ix := range tbl.Indexes() {
		wg.Go(func() {
			for ctx.Err() == nil {
				for ir, err := range ix.Scan(ctx, client.Range{}) {
					if err != nil {
						switch {
						case fenced && errors.Is(err, client.ErrIndexBuilding):
							time.Sleep(10 * time.Millisecond) // refused at once: no spinning beside the child
						case ctx.Err() == nil && !client.IsRetryable(err):
							t.Errorf("index %s: %v", ix.Name(), err)
						}
						break
					}
					if k, ok, err := ix.EntryKey(ir.Key, ir.Cells); err != nil || !ok || string(k) != string(ir.IndexKey) {
						t.Errorf("index %s: row %q under %q has key %q (%v)", ix.Name(), ir.Key, ir.IndexKey, k, err)
					}
				}
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// countGen counts the imported rows holding generation gen's amount.
func countGen(t *testing.T, tbl *client.Table, gen int) int {
	t.Helper()
	n := 0
	for i := range 1 << 30 {
		key := indextest.OrderKey(fmt.Sprintf("imp%05d", i))
		row, err := tbl.Get(context.Background(), key, client.Columns(client.Column{Family: "d", Qualifier: "amount"}))
		if errors.Is(err, client.ErrNotFound) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(row.Cells[0].Value) == string(killAmount(gen, i)) {
			n++
		}
	}
	return n
}

// runChild starts the child with job, waits for it to be ready, runs whileReady, and SIGKILLs it
// delay after it printed a line at or past trigger ("rows N", "buckets N": N or more; else the line
// itself); done reports that it had finished its work first.
func runChild(t *testing.T, job killJob, trigger string, delay time.Duration, whileReady func()) (done bool) {
	raw, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	child := testkit.StartChild(t, "^TestSIGKILLChild$", envKillJob+"="+string(raw))
	cmd, lines, stderr := child.Cmd, child.Lines, child.Stderr
	var seen []string
	ready := false
	for !ready {
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("child ended before it was ready: %q\n%s", seen, stderr.String())
			}
			seen = append(seen, l)
			ready = l == "ready"
		case <-time.After(time.Minute):
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("child not ready in a minute: %q\n%s", seen, stderr.String())
		}
	}
	whileReady()
	reached := func(l string) bool {
		var tw, lw string
		var w, g int
		if _, err := fmt.Sscan(trigger, &tw, &w); err != nil {
			return l == trigger // a step: the line itself
		}
		_, err := fmt.Sscan(l, &lw, &g)
		return err == nil && lw == tw && g >= w
	}
	for waiting := true; waiting; {
		l, ok := <-lines
		done = done || l == "done"
		if !ok || done {
			break // the child ended on its own (then reaped below), or is about to
		}
		if reached(l) {
			time.Sleep(delay)
			waiting = false
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	for range lines { // until the kill closes the pipe
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
	case err == nil && done:
	default:
		t.Fatalf("child: %v, want killed or done\n%s", err, stderr.String())
	}
	return done
}
