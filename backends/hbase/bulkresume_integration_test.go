//go:build integration

package hbase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

const envBulkChild = "BRINE_BULK_CHILD"

// bulkChild is the import TestBulkImportChild runs, and where it stops to be killed: "written"
// (every file written, nothing loaded) or "sent" (two units loaded and recorded, a third loaded
// but not recorded: the window between the server's load and the manifest).
type bulkChild struct{ Table, Staging, StopAt string }

var bulkResumeFamilies = []string{"a", "b"}

// bulkResumeInput is the input of the child and of its resume: no Timestamp is given to either,
// so the resume must take the first attempt's.
func bulkResumeInput() backends.BulkOptions {
	return backends.BulkOptions{MemoryBytes: 512 << 10, Workers: 1}
}

// TestBulkImportChild is the import TestBulkImportResume kills: it prints "stopped" where told to
// stop, then waits to be killed.
func TestBulkImportChild(t *testing.T) {
	raw := os.Getenv(envBulkChild)
	if raw == "" {
		t.Skip("run by TestBulkImportResume")
	}
	var job bulkChild
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatal(err)
	}
	b := openBulkBackend(t)
	stop := func() {
		fmt.Println("stopped")
		time.Sleep(time.Hour)
	}
	opts := bulkResumeInput()
	opts.Staging = job.Staging
	switch job.StopAt {
	case "written":
		b.bulkHooks.written = func(context.Context) error { stop(); return nil }
	case "sent":
		b.bulkHooks.sent = func(n int) {
			if n == 3 {
				stop()
			}
		}
	}
	_, err := b.BulkImport(t.Context(), job.Table, seqOf(bulkInput(4, 6000, bulkResumeFamilies)), opts)
	t.Fatalf("the import ended (%v) before it was killed", err)
}

// TestBulkImportResume SIGKILLs a bulk import's process after its files are written, and after it
// loaded three regions of which it recorded two, then resumes it in this process: a resume with
// another table, other rows or another timestamp is refused; the resume loads only what the
// killed one did not (the unrecorded load found in the table), the table equals the input cell
// by cell, and the work directory is gone.
func TestBulkImportResume(t *testing.T) {
	for _, tc := range []struct {
		stopAt          string
		loaded, skipped int
		loadedRecorded  int
	}{
		{stopAt: "written"},
		{stopAt: "sent", loaded: 3, skipped: 3, loadedRecorded: 2},
	} {
		t.Run(tc.stopAt, func(t *testing.T) {
			b := openBulkBackend(t)
			table := bulkImportTable(t, b, bulkResumeFamilies, "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f")
			other := bulkImportTable(t, b, bulkResumeFamilies)
			staging := hbasetest.Staging(t)
			killBulkChild(t, bulkChild{Table: table, Staging: staging, StopAt: tc.stopAt})

			m, err := readManifest(BulkWorkDir(staging))
			if err != nil || m == nil {
				t.Fatalf("no manifest after the kill: %v", err)
			}
			states := map[string]int{}
			for _, u := range m.Units {
				states[u.State]++
			}
			if states[stateLoaded] != tc.loadedRecorded || states[stateLoading] != tc.loaded-tc.loadedRecorded || len(m.Units) != 16 {
				t.Fatalf("manifest after the kill: %v in %d units", states, len(m.Units))
			}

			// The unit left loading was loaded, and its files are still there (the server copies
			// them from a file system not its own): the resume must find its cells in the table.
			job := &bulkJob{b: b, table: table, dir: BulkWorkDir(staging)}
			for _, u := range m.Units {
				if u.State == stateWritten {
					if ok, err := job.unitLoaded(t.Context(), u); err != nil || ok {
						t.Fatalf("unit %s, never loaded, reads as loaded (%v)", u.Name, err)
					}
				}
				if u.State != stateLoading {
					continue
				}
				for _, f := range u.Files {
					if _, err := os.Stat(filepath.Join(BulkWorkDir(staging), f.Name)); err != nil {
						t.Logf("a loaded file is gone (moved by the server): %v", err)
					}
				}
				ok, err := job.unitLoaded(t.Context(), u)
				if err != nil || !ok {
					t.Fatalf("the unit loaded before the kill reads as not loaded (%v)", err)
				}
			}
			input := bulkInput(4, 6000, bulkResumeFamilies)
			opts := bulkResumeInput()
			opts.Staging = staging
			if _, err := b.BulkImport(t.Context(), other, seqOf(input), opts); !errors.Is(err, backends.ErrBulkMismatch) {
				t.Fatalf("resume into another table: %v, want ErrBulkMismatch", err)
			}
			if _, err := b.BulkImport(t.Context(), table, seqOf(bulkInput(5, 6000, bulkResumeFamilies)), opts); !errors.Is(err, backends.ErrBulkMismatch) {
				t.Fatalf("resume with other rows: %v, want ErrBulkMismatch", err)
			}
			stamped := opts
			stamped.Timestamp = time.UnixMilli(m.Timestamp + 1)
			if _, err := b.BulkImport(t.Context(), table, seqOf(input), stamped); !errors.Is(err, backends.ErrBulkMismatch) {
				t.Fatalf("resume with another timestamp: %v, want ErrBulkMismatch", err)
			}

			stats, err := b.BulkImport(t.Context(), table, seqOf(input), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("resumed: %+v", stats)
			if !stats.Resumed || stats.Skipped != int64(tc.skipped) || stats.Regions != int64(16-tc.loaded) {
				t.Fatalf("resumed %t, skipped %d, loaded %d; want true, %d, %d", stats.Resumed, stats.Skipped, stats.Regions, tc.skipped, 16-tc.loaded)
			}
			checkBulkTable(t, b, table, bulkModel(input, m.Timestamp))
			checkClean(t, staging)
		})
	}
}

// killBulkChild runs the child import and SIGKILLs it once it says it stopped.
func killBulkChild(t *testing.T, job bulkChild) {
	t.Helper()
	raw, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	child := testkit.StartChild(t, "^TestBulkImportChild$", envBulkChild+"="+string(raw))
	killed := false
	for l := range child.Lines {
		if l == "stopped" && !killed {
			_ = child.Cmd.Process.Signal(syscall.SIGKILL)
			killed = true
		}
	}
	err = child.Cmd.Wait()
	var exit *exec.ExitError
	if !killed || !errors.As(err, &exit) {
		t.Fatalf("the child import was not killed part-way (%v):\n%s", err, child.Stderr.String())
	}
}
