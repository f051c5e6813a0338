package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// The CLI's tests call run as main does, with the output captured.

type cli struct {
	t              *testing.T
	dir, store     string
	tablePrefix    string // on a shared server: makes the tests' table names unique
	stdout, stderr bytes.Buffer
	env            *cliEnv
}

func newCLI(t *testing.T) *cli {
	c := &cli{t: t, dir: t.TempDir()}
	c.store = "local://" + filepath.Join(c.dir, "db") + "?nosync=1"
	c.env = &cliEnv{stdin: strings.NewReader(""), stdout: &c.stdout, stderr: &c.stderr, getenv: func(string) string { return "" },
		logger: slog.New(slog.NewTextHandler(&c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	return c
}

// useTablestore points the CLI at a local Tablestore server (the SDK over HTTP) instead of the
// embedded store.
func (c *cli) useTablestore(t *testing.T) {
	srv := tablestoretest.Start(t)
	vars := map[string]string{tablestore.EnvAccessKeyID: srv.AccessKeyID(), tablestore.EnvAccessKeySecret: srv.AccessKeySecret()}
	c.env.getenv = func(k string) string { return vars[k] }
	c.store = "tablestore+http://" + srv.Instance() + "@" + strings.TrimPrefix(srv.Endpoint(), "http://")
}

// tab is the name a test's table has on the CLI's store; on a shared server the table is dropped
// when the test ends.
func (c *cli) tab(name string) string {
	if c.tablePrefix == "" {
		return name
	}
	full := c.tablePrefix + "_" + name
	c.t.Cleanup(func() { _, _, _ = c.run(context.Background(), "drop", "--store", c.store, full) })
	return full
}

// run runs one command and returns its error, with stdout and stderr of that command alone.
func (c *cli) run(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	c.stdout.Reset()
	c.stderr.Reset()
	err = run(ctx, c.env, args)
	return c.stdout.String(), c.stderr.String(), err
}

// ok runs a command that must succeed and returns its stdout.
func (c *cli) ok(args ...string) string {
	c.t.Helper()
	out, errOut, err := c.run(context.Background(), args...)
	if err != nil {
		c.t.Fatalf("brine %q: %v\nstdout: %s\nstderr: %s", args, err, out, errOut)
	}
	return out
}

func (c *cli) file(name, content string) string {
	c.t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// shellWords splits a printed command line as a POSIX shell would for the quoting shellQuote uses.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quoted && ch == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(ch)
		case ch == '\'':
			quoted, inWord = true, true
		case ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// printedCommand finds the `brine ...` command a run printed after "prefix" and returns its
// arguments, without "brine".
func printedCommand(t *testing.T, out, prefix string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(out, prefix)
	if !ok {
		t.Fatalf("no %q in the output:\n%s", prefix, out)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	words := shellWords(t, line)
	if len(words) < 2 || words[0] != "brine" {
		t.Fatalf("printed command %q is not a brine command", line)
	}
	return words[1:]
}

// cancelAfter is an input that cancels ctx once n bytes have been read from it.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
	}
	k, err := c.r.Read(p[:min(len(p), max(c.n, 1))])
	c.n -= k
	return k, err
}

func csvRows(n, distinct int) string {
	var b strings.Builder
	b.WriteString("host,ts,v\n")
	for i := range n {
		fmt.Fprintf(&b, "h%d,%d,value %d\n", i%distinct%7, 1767225600000+int64(i%distinct), i)
	}
	return b.String()
}

// wantTable scans the table through the CLI and checks it holds exactly want (key -> value of v).
func (c *cli) wantTable(table string, want map[string]string) {
	c.t.Helper()
	got := map[string]string{}
	for _, r := range parseRows(c.t, c.ok("scan", "--store", c.store, "--table", table)) {
		if _, dup := got[r.Key]; dup {
			c.t.Fatalf("key %s scanned twice", r.Key)
		}
		got[r.Key], _ = r.value("d:v")
	}
	if len(got) != len(want) {
		c.t.Fatalf("table %s holds %d rows, want %d", table, len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			c.t.Fatalf("row %s holds %q, want %q", k, got[k], v)
		}
	}
}

// lastValues is what the table must hold after importing csvRows(n, distinct) with the last
// occurrence winning: typed keys as the CLI prints them.
func lastValues(n, distinct int) map[string]string {
	want := map[string]string{}
	for i := range n {
		want[fmt.Sprintf("h%d,%d", i%distinct%7, 1767225600000+int64(i%distinct))] = fmt.Sprintf("value %d", i)
	}
	return want
}

func wantExit(t *testing.T, err error, code int) {
	t.Helper()
	var ee *exitError
	ok := errors.As(err, &ee)
	if !ok || ee.code != code {
		t.Fatalf("error %v; want exit code %d", err, code)
	}
}
