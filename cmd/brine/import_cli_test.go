package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

const typedKey = "host,ts:int64"

// TestCLIImportDuplicateKeys: 3,000 rows over 1,000 keys, in small parallel batches: the import says
// how many rows repeated a key, the table holds the last occurrence of each, and importing the same
// file again leaves the same table. --on-duplicate error refuses the repeats into the failure report.
func TestCLIImportDuplicateKeys(t *testing.T) {
	t.Run("local", func(t *testing.T) { checkCLIDuplicates(t, newCLI(t)) })
	t.Run("tablestore", func(t *testing.T) {
		c := newCLI(t)
		c.useTablestore(t)
		checkCLIDuplicates(t, c)
	})
}

func checkCLIDuplicates(t *testing.T, c *cli) {
	in := c.file("dups.csv", csvRows(3000, 1000))
	for run := range 2 {
		args := []string{"import", "--store", c.store, "--table", c.tab("t"), "--create", "--salt", "hash:8", "--key", typedKey, "--batch", "7", "--workers", "8", in}
		out := c.ok(args...)
		if r := parseImportReport(t, out); r != (importReport{Read: 3000, Written: 3000, Duplicates: 2000}) || !strings.Contains(out, "last occurrence of each key is stored") {
			t.Fatalf("run %d: %s", run, out)
		}
		c.wantTable(c.tab("t"), lastValues(3000, 1000))
	}

	out, _, err := c.run(context.Background(), "import", "--store", c.store, "--table", c.tab("u"), "--create", "--salt", "hash:8",
		"--key", typedKey, "--on-duplicate", "error", "--batch", "7", in)
	if r := parseImportReport(t, out); err == nil || r != (importReport{Read: 3000, Written: 1000, Failed: 2000, Duplicates: 2000}) {
		t.Fatalf("--on-duplicate error: %v\n%s", err, out)
	}
	first := map[string]string{}
	for i := range 1000 {
		first[fmt.Sprintf("h%d,%d", i%7, 1767225600000+int64(i))] = fmt.Sprintf("value %d", i)
	}
	c.wantTable(c.tab("u"), first)
	report, _ := os.ReadFile(in + ".failed.csv")
	errLog, _ := os.ReadFile(in + ".failed.csv.errors")
	if n := strings.Count(string(report), "\n"); n != 2001 {
		t.Fatalf("the report holds %d lines, want the header and 2000 refused rows", n)
	}
	if !strings.Contains(string(errLog), "duplicate key") {
		t.Fatalf("error log does not say why: %.300s", errLog)
	}
}

// TestCLIImportInterruptResumes interrupts an import part way through its input (as SIGINT does:
// the context ends), checks the exit code 130 and the "interrupted at line N; M rows not read"
// line against the input, then runs the one command it printed and checks the table holds every row.
func TestCLIImportInterruptResumes(t *testing.T) {
	t.Run("create", func(t *testing.T) { checkCLIInterrupt(t, newCLI(t), 20_000, true) })
	t.Run("existing table", func(t *testing.T) { checkCLIInterrupt(t, newCLI(t), 8_000, false) })
	t.Run("tablestore", func(t *testing.T) {
		c := newCLI(t)
		c.useTablestore(t)
		checkCLIInterrupt(t, c, 8_000, true)
	})
}

func checkCLIInterrupt(t *testing.T, c *cli, rows int, create bool) {
	in := c.file("in.csv", csvRows(rows, rows))
	table := c.tab("t")
	if !create {
		c.ok("create", "--store", c.store, "--table", table, "--salt", "hash:4", "--key", typedKey)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.env.watchInput = func(r io.Reader) io.Reader { return &cancelAfter{r: r, n: 60_000, cancel: cancel} }
	args := []string{"import", "--store", c.store, "--table", table, "--salt", "hash:4", "--key", typedKey, "--batch", "50", in}
	if create {
		args = append(args, "--create")
	}
	out, _, err := c.run(ctx, args...)
	c.env.watchInput = nil
	wantExit(t, err, exitInterrupted)
	if code := exitCode(ctx, err); code != exitInterrupted {
		t.Fatalf("exit code %d, want %d", code, exitInterrupted)
	}
	var line, unread int
	at := strings.Index(out, "interrupted at line")
	if at < 0 {
		t.Fatalf("no interruption line:\n%s", out)
	}
	if _, serr := fmt.Sscanf(out[at:], "interrupted at line %d; %d rows not read", &line, &unread); serr != nil {
		t.Fatalf("interruption line (%v):\n%s", serr, out)
	}
	// One row per line after the header: the rows after line N are exactly the unread ones.
	if unread == 0 || line-1+unread != rows {
		t.Fatalf("interrupted at line %d with %d rows not read; the input has %d rows\n%s", line, unread, rows, out)
	}
	resume := printedCommand(t, out, "resume with:")
	if strings.Contains(strings.Join(resume, " "), "--create") {
		t.Fatalf("the resume command creates the table again: %q", resume)
	}
	c.ok(resume...)
	c.wantTable(table, lastValues(rows, rows))
}

// TestCLIImportInterruptStdin: an import from stdin cannot keep the unread rest; it says which line
// to feed again from, exits 130, and the rows it did not confirm are in the report.
func TestCLIImportInterruptStdin(t *testing.T) {
	c := newCLI(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c.env.stdin = &cancelAfter{r: strings.NewReader(csvRows(8000, 8000)), n: 30_000, cancel: cancel}
	t.Chdir(c.dir) // stdin's report goes to the working directory
	out, _, err := c.run(ctx, "import", "--store", c.store, "--table", "t", "--create", "--salt", "hash:4", "--key", typedKey, "-")
	wantExit(t, err, exitInterrupted)
	var line int
	if _, serr := fmt.Sscanf(out[strings.Index(out, "interrupted at line"):], "interrupted at line %d; the rest of stdin was not read", &line); serr != nil || line < 2 || line > 8001 {
		t.Fatalf("no interruption line (%v):\n%s", serr, out)
	}
}

// TestCLIImportRerunHint: an import with --create whose rows partly fail prints a command that
// imports the failure report; it runs (no "table already exists"), and so does the original command
// run again.
func TestCLIImportRerunHint(t *testing.T) {
	c := newCLI(t)
	in := c.file("in.csv", "host,ts,v\na,1,x\nb,oops,y\nc,3,z\n")
	args := []string{"import", "--store", c.store, "--table", "t", "--create", "--salt", "hash:4", "--key", typedKey, in}
	out, _, err := c.run(context.Background(), args...)
	if err == nil {
		t.Fatalf("a bad row did not fail the import:\n%s", out)
	}
	rerun := printedCommand(t, out, "import them with:")
	// The user fixes the report, then runs the printed command.
	report := rerun[len(rerun)-1]
	if err := os.WriteFile(report, []byte("host,ts,v\nb,2,y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ok(rerun...)
	c.wantTable("t", map[string]string{"a,1": "x", "b,2": "y", "c,3": "z"})
	if _, _, err := c.run(context.Background(), args...); err == nil || strings.Contains(err.Error(), "exists") {
		t.Fatalf("re-running the --create command: %v; want only the bad row's failure", err)
	}
	// A table of another salt is not taken for the one --create makes.
	_, _, err = c.run(context.Background(), "import", "--store", c.store, "--table", "t", "--create", "--salt", "hash:8", "--key", typedKey, in)
	if err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("--create over a table of another salt: %v", err)
	}
}

// TestCLIImportDuplicatesAndFailures: when the input repeats keys and rows fail, the report alone
// cannot promise that the last occurrence wins (the written occurrences are not in it): the import
// says to re-import the whole input, and doing so leaves the last occurrences.
func TestCLIImportDuplicatesAndFailures(t *testing.T) {
	c := newCLI(t)
	in := c.file("in.csv", "host,ts,v\na,1,first\nb,oops,y\na,1,second\n")
	out, _, err := c.run(context.Background(), "import", "--store", c.store, "--table", "t", "--create", "--salt", "hash:4", "--key", typedKey, in)
	if err == nil || !strings.Contains(out, "re-import the whole input") {
		t.Fatalf("%v\n%s", err, out)
	}
	fixed := c.file("in.csv", "host,ts,v\na,1,first\nb,2,y\na,1,second\n")
	c.ok("import", "--store", c.store, "--table", "t", "--key", typedKey, fixed)
	c.wantTable("t", map[string]string{"a,1": "second", "b,2": "y"})
}

// TestCLIImportRefusals: a dry run with rejected rows exits non-zero, an empty input says so, a
// missing table points at --create, and bad flags are refused before anything is written.
func TestCLIImportRefusals(t *testing.T) {
	c := newCLI(t)
	good := c.file("good.csv", "host,ts,v\na,1,x\nb,2,y\n")
	bad := c.file("bad.csv", "host,ts,v\na,1,x\nb,oops,y\n")
	empty := c.file("empty.csv", "")
	c.ok("import", "--dry-run", "--key", typedKey, good)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"dry run rejects", []string{"import", "--dry-run", "--key", typedKey, bad}, "1 rows would be rejected"},
		{"empty input", []string{"import", "--store", c.store, "--table", "t", "--create", "--salt", "hash:4", "--key", typedKey, empty}, "the input is empty"},
		{"missing table", []string{"import", "--store", c.store, "--table", "nope", "--key", typedKey, good}, "--create"},
		{"bad policy", []string{"import", "--on-duplicate", "first", "--key", typedKey, good}, "want last or error"},
		{"flags after the file", []string{"import", good, "--key", typedKey, "--on-duplicate", "first"}, "want last or error"},
		{"zero workers", []string{"import", "--workers", "0", "--key", typedKey, good}, "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := c.run(context.Background(), tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v; want an error saying %q\nstdout: %s\nstderr: %s", err, tc.want, out, errOut)
			}
		})
	}
}
