package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/migrate"
)

// TestCLICopy copies a table from the embedded store to the Tablestore server (the SDK over HTTP),
// re-salted, checks it with verify, then copies a row written since as a catch-up pass.
func TestCLICopy(t *testing.T) {
	c := newCLI(t)
	from := c.store
	c.useTablestore(t)
	in := c.file("in.csv", csvRows(500, 500))
	c.ok("import", "--store", from, "--table", "src", "--create", "--salt", "hash:4", "--key", typedKey, in)
	dst := c.tab("dst")
	c.ok("copy", "--from", from, "--to", c.store, "src", "--as", dst, "--salt", "hash:8", "--versions", "all")
	c.ok("verify", "--from", from, "--to", c.store, "src", "--as", dst, "--versions", "all")
	if out := c.ok("describe", "--store", c.store, dst); !slices.Contains(strings.Split(out, "\n"), "salt    hash:8 (8 buckets)") {
		t.Errorf("describe of the copy:\n%s\nwant salt hash:8", out)
	}

	c.ok("put", "--store", from, "--table", "src", "h0,1767225600000", "d:v=late")
	if _, _, err := c.run(context.Background(), "verify", "--from", from, "--to", c.store, "src", "--as", dst); err == nil {
		t.Fatal("verify after a write to the source: equal, want a difference")
	}
	c.ok("copy", "--from", from, "--to", c.store, "src", "--as", dst, "--since", "2000-01-01")
	c.ok("verify", "--from", from, "--to", c.store, "src", "--as", dst)
}

func TestCLICopyBadInput(t *testing.T) {
	c := newCLI(t)
	c.ok("import", "--store", c.store, "--table", "src", "--create", "--salt", "hash:4", "--key", typedKey, c.file("in.csv", csvRows(10, 10)))
	for _, tc := range []struct {
		name string
		args []string
		want error
	}{
		{"onto itself", []string{"copy", "--from", c.store, "src"}, migrate.ErrSameTable},
		{"onto itself by --as", []string{"copy", "--from", c.store, "--to", c.store, "src", "--as", "src"}, migrate.ErrSameTable},
		{"bad --since", []string{"copy", "--from", c.store, "src", "--as", "b", "--since", "yesterday"}, nil},
		{"bad --versions", []string{"copy", "--from", c.store, "src", "--as", "b", "--versions", "some"}, nil},
		{"resume with nothing to resume", []string{"copy", "--from", c.store, "src", "--as", "b", "--resume"}, nil},
		{"bad --resume", []string{"copy", "--from", c.store, "src", "--as", "b", "--resume=maybe"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := c.run(context.Background(), tc.args...)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("got %v, want an error (%v)", err, tc.want)
			}
			if out := c.ok("tables", "--store", c.store); out != "src\tsalt hash:4, key "+typedKey+"\n" {
				t.Errorf("tables after the refused copy:\n%s", out)
			}
		})
	}
}

// TestCLICopyTargetRefuses: a family the Tablestore target cannot hold (its column names take no
// '-') fails the copy before anything is written: no table, no checkpoint, on the target.
func TestCLICopyTargetRefuses(t *testing.T) {
	c := newCLI(t)
	from := c.store
	c.useTablestore(t)
	c.ok("create", "--store", from, "--table", "src", "--salt", "hash:2", "--families", "d,x-y")
	c.ok("put", "--store", from, "--table", "src", "k1", "x-y:v=1")
	_, _, err := c.run(context.Background(), "copy", "--from", from, "--to", c.store, "src")
	if !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("copy of a family Tablestore cannot hold: %v, want ErrInvalidArgument", err)
	}
	if out := c.ok("tables", "--store", c.store); out != "" {
		t.Errorf("tables on the target after the refused copy:\n%s", out)
	}
}

// TestCLICopyInterrupt: a copy interrupted part-way exits 130 and prints the command that resumes
// it; that command finishes the copy, and verify then finds the tables equal. Run from the embedded
// store to the Tablestore server.
func TestCLICopyInterrupt(t *testing.T) {
	c := newCLI(t)
	from := c.store
	c.useTablestore(t)
	checkCLICopyInterrupt(t, c, from)
}

func checkCLICopyInterrupt(t *testing.T, c *cli, from string) {
	c.ok("import", "--store", from, "--table", "src", "--create", "--salt", "hash:4", "--key", typedKey, c.file("in.csv", csvRows(20_000, 20_000)))
	dst := c.tab("dst")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.env.watchCopy = func(p migrate.Progress) {
		if p.Rows >= 2000 {
			cancel()
		}
	}
	out, _, err := c.run(ctx, "copy", "--from", from, "--to", c.store, "src", "--as", dst, "--salt", "hash:2", "--workers", "1")
	c.env.watchCopy = nil
	wantExit(t, err, exitInterrupted)
	resume := printedCommand(t, out, "resume with:")
	if !slices.Contains(resume, "--resume") || !slices.Contains(resume, "--salt=hash:2") {
		t.Fatalf("resume command %q lacks --resume or the copy's flags", resume)
	}
	c.ok(resume...)
	c.ok("verify", "--from", from, "--to", c.store, "src", "--as", dst)
}

// TestCLIResumeAuto: one command line with --resume=auto, run as a job runner runs it again after a
// failure: the first try starts the copy (no checkpoint there), is interrupted, and the same command
// then resumes it (it copies only what was left) and finishes it; the same for a sync that has
// changes to make. Verify then finds the tables equal.
func TestCLIResumeAuto(t *testing.T) {
	c := newCLI(t)
	const rows = 20_000
	c.ok("import", "--store", c.store, "--table", "src", "--create", "--salt", "hash:4", "--key", typedKey, c.file("in.csv", csvRows(rows, rows)))
	copyArgs := []string{"copy", "--from", c.store, "src", "--as", "dst", "--salt", "hash:2", "--workers", "1", "--resume=auto"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.env.watchCopy = func(p migrate.Progress) {
		if p.Rows >= 2000 {
			cancel()
		}
	}
	_, _, err := c.run(ctx, copyArgs...)
	c.env.watchCopy = nil
	wantExit(t, err, exitInterrupted)
	c.stderr.Reset()
	c.ok(copyArgs...)
	if n := copiedRows(t, c.stderr.String()); n <= 0 || n >= rows {
		t.Errorf("the retry copied %d rows; want the rest of %d, as a resume does", n, rows)
	}
	c.ok("verify", "--from", c.store, "src", "--as", "dst")

	c.ok("put", "--store", c.store, "--table", "dst", "h0,1767225600000", "d:v=the target's own")
	syncArgs := []string{"sync", "--from", c.store, "src", "--as", "dst", "--resume=auto"}
	c.ok(syncArgs...) // no checkpoint: a sync from the start
	c.ok("verify", "--from", c.store, "src", "--as", "dst")
}

// TestCLIMigrationRecipe runs docs/migrate.md's recipe from the embedded store to the Tablestore
// server: copy, a write, a catch-up, a last catch-up, verify.
func TestCLIMigrationRecipe(t *testing.T) {
	c := newCLI(t)
	from := c.store
	c.useTablestore(t)
	checkCLIRecipe(t, c, from, "orders")
}

// checkCLIRecipe migrates table src from the store from to c's store, as docs/migrate.md says.
func checkCLIRecipe(t *testing.T, c *cli, from, src string) {
	c.ok("import", "--store", from, "--table", src, "--create", "--salt", "hash:4", "--key", typedKey, c.file("in.csv", csvRows(3000, 3000)))
	dst := c.tab("orders_new")
	c.ok("copy", "--from", from, "--to", c.store, src, "--as", dst, "--salt", "hash:16")
	since := printedSince(t, c.stderr.String())
	c.ok("put", "--store", from, "--table", src, "h1,1767225600001", "d:v=written during the copy")
	c.ok("delete", "--store", from, "--table", src, "h2,1767225600002", "d:v")
	if _, _, err := c.run(context.Background(), "verify", "--from", from, "--to", c.store, src, "--as", dst); err == nil {
		t.Fatal("verify before the catch-up: equal, want differences")
	}
	c.ok("copy", "--from", from, "--to", c.store, src, "--as", dst, "--since", since)
	next := printedSince(t, c.stderr.String())
	c.ok("copy", "--from", from, "--to", c.store, src, "--as", dst, "--since", next) // the writers paused
	out, _, err := c.run(context.Background(), "verify", "--from", from, "--to", c.store, src, "--as", dst)
	// A catch-up copies what rows hold, not their absence: the deleted cell is the one difference.
	wantExit(t, err, 3)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "only in --to: h2,") {
		t.Fatalf("verify after the catch-up:\n%s\nwant the deleted row only in --to", out)
	}
	// The sync repairs it: a dry run lists the change and writes nothing, then the sync makes it.
	want := "delete: h2,1767225600002"
	if out := c.ok("sync", "--from", from, "--to", c.store, src, "--as", dst, "--dry-run"); strings.TrimSpace(out) != want {
		t.Fatalf("sync --dry-run:\n%s\nwant %q", out, want)
	}
	if _, _, err := c.run(context.Background(), "verify", "--from", from, "--to", c.store, src, "--as", dst); err == nil {
		t.Fatal("verify after the dry run: equal, want the difference still there")
	}
	if out := c.ok("sync", "--from", from, "--to", c.store, src, "--as", dst); strings.TrimSpace(out) != want {
		t.Fatalf("sync:\n%s\nwant %q", out, want)
	}
	c.ok("verify", "--from", from, "--to", c.store, src, "--as", dst)
}

// printedSince is the --since a copy printed for the next catch-up pass.
func printedSince(t *testing.T, stderr string) string {
	t.Helper()
	_, rest, ok := strings.Cut(stderr, "the next catch-up pass: --since ")
	if !ok {
		t.Fatalf("no catch-up time in the copy's output:\n%s", stderr)
	}
	since, _, _ := strings.Cut(rest, " ")
	return since
}

// copiedRows is the row count of a copy's last line, "copied N rows (...".
func copiedRows(t *testing.T, stderr string) int {
	t.Helper()
	_, rest, ok := strings.Cut(stderr, "copied ")
	if !ok {
		t.Fatalf("no rows copied in the copy's output:\n%s", stderr)
	}
	num, _, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(num)
	if err != nil {
		t.Fatalf("copied %q rows: %v", num, err)
	}
	return n
}

// TestCLICopyResumeCatchUp: rows written between an interrupted copy and its resume, into ranges
// the interrupted run had already copied, are caught up by the --since the resume prints: the start
// of the first run (less --clock-skew, here 1ms so that the resume starts well after it).
func TestCLICopyResumeCatchUp(t *testing.T) {
	c := newCLI(t)
	from := "local://" + filepath.Join(c.dir, "from.db") + "?nosync=1"
	c.ok("import", "--store", from, "--table", "src", "--create", "--salt", "hash:4", "--key", typedKey, c.file("in.csv", csvRows(20_000, 20_000)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.env.watchCopy = func(p migrate.Progress) {
		if p.Rows >= 2000 {
			cancel()
		}
	}
	before := time.Now()
	out, _, err := c.run(ctx, "copy", "--from", from, "--to", c.store, "src", "--salt", "hash:2", "--workers", "1", "--clock-skew", "1ms")
	c.env.watchCopy = nil
	after := time.Now()
	wantExit(t, err, exitInterrupted)
	resume := printedCommand(t, out, "resume with:")
	// Every row again, stamped now: the rows the interrupted run copied are stale on --to.
	c.ok("import", "--store", from, "--table", "src", c.file("upd.csv", csvRows(40_000, 20_000)))
	time.Sleep(50 * time.Millisecond) // the resume starts more than --clock-skew after those writes
	c.ok(resume...)
	since, err := time.Parse(time.RFC3339, printedSince(t, c.stderr.String()))
	if err != nil {
		t.Fatal(err)
	}
	if since.Before(before.Add(-2*time.Millisecond)) || since.After(after) {
		t.Fatalf("the resume printed --since %v; want the first run's start (from %v to %v) less 1ms", since, before, after)
	}
	c.ok("copy", "--from", from, "--to", c.store, "src", "--since", since.Format(time.RFC3339Nano))
	c.ok("verify", "--from", from, "--to", c.store, "src")
	c.wantTable("src", lastValues(40_000, 20_000))
}

// TestCLICopyStoreFiles: one file under two spellings is one store (a copy onto itself); a copy
// that fails before writing leaves no store file of its own; a --to in a directory that is not
// there is refused, and the directory not made.
func TestCLICopyStoreFiles(t *testing.T) {
	c := newCLI(t)
	db := filepath.Join(c.dir, "a.db")
	c.ok("create", "--store", "local://"+db, "--table", "src", "--salt", "hash:2")
	dotted := "local://" + filepath.Join(c.dir, ".") + "/./a.db"
	if _, _, err := c.run(context.Background(), "copy", "--from", "local://"+db, "--to", dotted, "src"); !errors.Is(err, migrate.ErrSameTable) {
		t.Errorf("copy onto the same file spelled otherwise: %v, want ErrSameTable", err)
	}
	fresh := filepath.Join(c.dir, "fresh.db")
	if _, _, err := c.run(context.Background(), "copy", "--from", "local://"+db, "--to", "local://"+fresh, "nope"); !errors.Is(err, client.ErrTableNotFound) {
		t.Errorf("copy of no such table: %v, want ErrTableNotFound", err)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed copy left its store file: %v", err)
	}
	missing := filepath.Join(c.dir, "no", "such", "dir")
	if _, _, err := c.run(context.Background(), "copy", "--from", "local://"+db, "--to", "local://"+filepath.Join(missing, "x.db"), "src"); !errors.Is(err, client.ErrInvalidArgument) {
		t.Errorf("copy into a directory not there: %v, want ErrInvalidArgument", err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "no")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the copy made the directories: %v", err)
	}
}
