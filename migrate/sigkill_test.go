package migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/migrate"
)

const envCopyChild = "BRINE_COPY_CHILD"

// copyChild is what the child process copies: between two embedded stores.
type copyChild struct{ From, To string }

func openLocal(t *testing.T, path string) *client.Client {
	t.Helper()
	b, err := local.Open(context.Background(), local.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(b, client.WithRouteRefresh(20*time.Millisecond), client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// childOptions are the copy's options in the child and in its resume.
func childOptions() migrate.Options {
	return migrate.Options{As: "copy", AllVersions: true, ChunkRows: 20, Workers: 2}
}

// TestCopyChild is the copy TestCopySIGKILL kills: it prints "rows N" as chunks are written.
func TestCopyChild(t *testing.T) {
	raw := os.Getenv(envCopyChild)
	if raw == "" {
		t.Skip("run by TestCopySIGKILL")
	}
	var job copyChild
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t, time.Minute)
	from, to := openLocal(t, job.From), openLocal(t, job.To)
	opts := childOptions()
	opts.Progress = func(p migrate.Progress) { fmt.Printf("rows %d\n", p.Rows) }
	if _, err := migrate.Copy(ctx, from, to, "orders", opts); err != nil {
		t.Fatal(err)
	}
	fmt.Println("done")
}

// TestCopySIGKILL kills a copy's process part-way, at several points, then resumes it: the target
// then equals the source exactly, every version and (for an indexed table) every index entry.
func TestCopySIGKILL(t *testing.T) {
	for _, indexed := range []bool{false, true} {
		for _, at := range []int{100, 1500} {
			t.Run(fmt.Sprintf("indexed=%t/rows=%d", indexed, at), func(t *testing.T) {
				dir := t.TempDir()
				job := copyChild{From: filepath.Join(dir, "from"), To: filepath.Join(dir, "to")}
				func() {
					from := openLocal(t, job.From)
					load(t, testkit.Context(t, time.Minute), from, indexed)
					_ = from.Close()
				}()
				killAt(t, job, at)
				ctx := testkit.Context(t, time.Minute)
				from, to := openLocal(t, job.From), openLocal(t, job.To)
				if _, err := to.OpenTable(ctx, migrate.CheckpointTable("copy"), nil); err != nil {
					t.Fatalf("no checkpoint after the kill: %v", err)
				}
				opts := childOptions()
				opts.Resume = true
				if _, err := migrate.Copy(ctx, from, to, "orders", opts); err != nil {
					t.Fatal(err)
				}
				equal(t, ctx, from, to, "copy", true)
			})
		}
	}
}

// killAt runs the child copy and SIGKILLs it once it has written at least rows rows.
func killAt(t *testing.T, job copyChild, rows int) {
	raw, err := json.Marshal(job)
	if err != nil {
		t.Fatal(err)
	}
	child := testkit.StartChild(t, "^TestCopyChild$", envCopyChild+"="+string(raw))
	killed := false
	for l := range child.Lines {
		var n int
		if _, err := fmt.Sscanf(l, "rows %d", &n); err == nil && n >= rows && !killed {
			_ = child.Cmd.Process.Signal(syscall.SIGKILL)
			killed = true
		}
	}
	err = child.Cmd.Wait()
	var exit *exec.ExitError
	if !killed || !errors.As(err, &exit) {
		t.Fatalf("the child copy was not killed part-way (%v):\n%s", err, child.Stderr.String())
	}
}
