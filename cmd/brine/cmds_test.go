package main

import (
	"bytes"
	"context"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/testkit"
)

// TestCLITypedKeys: rows imported with a typed key schema are read back by typed values: get, scan
// ranges and prefixes, put and delete, with keys printed as typed values too, without repeating the
// schema (it is stored with the table), and with --key given explicitly.
func TestCLITypedKeys(t *testing.T) {
	c := newCLI(t)
	in := c.file("in.csv", "host,ts,v\nweb1,1767225600000,a\nweb1,1767225660000,b\nweb12,1767225600000,c\ndb,1767225600000,d\n")
	c.ok("import", "--store", c.store, "--table", "m", "--create", "--salt", "hash:4", "--key", typedKey, in)
	st := []string{"--store", c.store, "--table", "m"}
	for _, tc := range []struct {
		args []string
		want string // stdout, exactly, without timestamps
	}{
		{[]string{"get", "web1,1767225600000"}, "web1,1767225600000  d:v=a\n"},
		{[]string{"get", "--key", typedKey, "web1,1767225660000"}, "web1,1767225660000  d:v=b\n"},
		{[]string{"scan", "--start", "web1,1767225600001"}, "web1,1767225660000  d:v=b\nweb12,1767225600000  d:v=c\n"},
		{[]string{"scan", "--start", "db,0", "--end", "web1,1767225660000"}, "db,1767225600000  d:v=d\nweb1,1767225600000  d:v=a\n"},
		{[]string{"scan", "--prefix", "web1", "--keys-only"}, "web1,1767225600000\nweb1,1767225660000\n"},
		{[]string{"scan", "--prefix", "web1", "--reverse", "--keys-only"}, "web1,1767225660000\nweb1,1767225600000\n"},
	} {
		out := c.ok(append(tc.args, st...)...) // flags after the arguments, too
		if got := untimed(parseRows(t, out)); got != tc.want {
			t.Errorf("brine %q:\n%s\nwant\n%s", tc.args, got, tc.want)
		}
	}
	c.ok(append([]string{"put", "db,5", "d:v=new"}, st...)...)
	if got := untimed(parseRows(t, c.ok(append([]string{"get", "db,5"}, st...)...))); got != "db,5  d:v=new\n" {
		t.Errorf("get after put: %q", got)
	}
	c.ok(append([]string{"delete", "db,5"}, st...)...)
	if _, _, err := c.run(context.Background(), append([]string{"get", "db,5"}, st...)...); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("get after delete: %v", err)
	}
	// Values that do not fit the schema are refused before anything is sent.
	for _, args := range [][]string{{"get", "web1"}, {"get", "web1,noon"}, {"scan", "--start", "web1,x"}} {
		if _, _, err := c.run(context.Background(), append(args, st...)...); err == nil {
			t.Errorf("brine %q: no error", args)
		}
	}
}

// TestCLIScanPagesRoundTrip pages through tables whose keys are typed, binary and text with --limit,
// pasting each printed "next page" cursor back: the pages together are every row once.
func TestCLIScanPagesRoundTrip(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "bin", "--salt", "hash:4")
	binKeys := []string{"00", "0001", "00ff", "22", "2261", "ff00", "41 42", "60", "5c"} // hex; 22 is '"', 41 42 is "AB"
	for i, k := range binKeys {
		c.ok("put", "--store", c.store, "--table", "bin", "--hex", strings.ReplaceAll(k, " ", ""), "d:v=x"+string(rune('a'+i)))
	}
	c.ok("create", "--store", c.store, "--table", "txt", "--salt", "hash:4")
	for _, k := range []string{"a", "a b", `"q"`, "b`c", "z"} {
		c.ok("put", "--store", c.store, "--table", "txt", "--", k, "d:v=1")
	}
	for _, tc := range []struct {
		table string
		rows  int
		extra []string
	}{{"bin", len(binKeys), nil}, {"txt", 5, nil}, {"bin", len(binKeys), []string{"--reverse"}}, {"bin", len(binKeys), []string{"--hex"}}} {
		seen := map[string]bool{}
		args := append([]string{"scan", "--store", c.store, "--table", tc.table, "--limit", "2", "--keys-only"}, tc.extra...)
		next := args
		for page := 0; ; page++ {
			if page > tc.rows {
				t.Fatalf("%s %v: more pages than rows: the cursor does not advance", tc.table, tc.extra)
			}
			out, errOut, err := c.run(context.Background(), next...)
			if err != nil {
				t.Fatalf("%q: %v\n%s", next, err, errOut)
			}
			for _, k := range strings.Split(strings.TrimSpace(out), "\n") {
				if k == "" {
					continue
				}
				if seen[k] {
					t.Fatalf("%s %v: key %s on two pages", tc.table, tc.extra, k)
				}
				seen[k] = true
			}
			_, hint, ok := strings.Cut(errOut, "next page: ")
			if !ok {
				break
			}
			next = append(append([]string(nil), args...), shellWords(t, strings.TrimSpace(hint))...)
		}
		if len(seen) != tc.rows {
			t.Fatalf("%s %v: %d rows over all pages, want %d: %v", tc.table, tc.extra, len(seen), tc.rows, seen)
		}
	}
}

// TestCLIRefusesBadCommandLines: conflicting flags, negative limits, inverted ranges, stray
// arguments and unknown stores are refused with a message, and read commands create no store file.
func TestCLIRefusesBadCommandLines(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "t", "--salt", "hash:4")
	missing := filepath.Join(c.dir, "typo.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"scan", "--table", "t", "--prefix", "a", "--start", "b"}, "exclude each other"},
		{[]string{"scan", "--table", "t", "--limit", "-1"}, "--limit -1"},
		{[]string{"scan", "--table", "t", "--start", "b", "--end", "a"}, "is after --end"},
		{[]string{"scan", "--table", "t", "stray"}, "no positional arguments"},
		{[]string{"get", "--table", "t", "k1", "k2"}, "usage: brine get"},
		{[]string{"get", "--table", "t", "--hex", "--key", "a", "k"}, "exclude each other"},
		{[]string{"get", "--table", "t", "--hex", "zz"}, "not hex"},
		{[]string{"get", "--table", "t", `"unterminated`}, "not a quoted string"},
		{[]string{"put", "--table", "t", "k", "novalue"}, "FAMILY:QUALIFIER=VALUE"},
		{[]string{"put", "--table", "t", "k", "d:v=1", "--ts", "-5"}, "--ts -5"},
		{[]string{"describe", "--table", "t", "other"}, "usage: brine describe"},
		{[]string{"drop", "nope"}, "not found"},
		{[]string{"get", "--store", "local://" + missing, "--table", "t", "k"}, "does not create a store"},
		{[]string{"scan", "--store", "local://" + missing, "--table", "t"}, "does not create a store"},
		{[]string{"tables", "--store", "local://" + missing}, "does not create a store"},
	} {
		args := tc.args
		if !strings.Contains(strings.Join(args, " "), "--store") {
			args = append(args, "--store", c.store)
		}
		out, errOut, err := c.run(context.Background(), args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("brine %q: %v; want an error saying %q\nstdout: %s\nstderr: %s", tc.args, err, tc.want, out, errOut)
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("a read command created %s (%v)", missing, err)
	}
}

// TestCLITablesDescribeDrop: tables lists what create and import made, describe shows the spec, the
// key schema and (where the store says) regions per bucket, drop removes the table.
func TestCLITablesDescribeDrop(t *testing.T) {
	t.Run("local", func(t *testing.T) { checkTablesDescribeDrop(t, newCLI(t), true) })
	t.Run("tablestore", func(t *testing.T) {
		c := newCLI(t)
		c.useTablestore(t)
		checkTablesDescribeDrop(t, c, false)
	})
}

func checkTablesDescribeDrop(t *testing.T, c *cli, regions bool) {
	a, b := c.tab("a"), c.tab("b")
	c.ok("create", "--store", c.store, "--table", a, "--salt", "hash:8", "--regions", "2")
	c.ok("create", "--store", c.store, "--table", b, "--salt", "mod:4:field=k0", "--key", "n:int64,host")
	listed := func() []string {
		var mine []string
		for _, line := range strings.Split(c.ok("tables", "--store", c.store), "\n") {
			if strings.HasPrefix(line, a+"\t") || strings.HasPrefix(line, b+"\t") {
				mine = append(mine, line)
			}
		}
		return mine
	}
	if got := strings.Join(listed(), "\n"); got != a+"\tsalt hash:8\n"+b+"\tsalt mod:4:field=k0, key n:int64,host" {
		t.Errorf("tables:\n%s", got)
	}
	out := c.ok("describe", "--store", c.store, a)
	want := []string{"salt    hash:8 (8 buckets)", "key     no schema stored"}
	if regions {
		want = append(want, "regions 2", "bucket 0: 1 region(s)", "bucket 7: 1 region(s)")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("describe %s: no %q in\n%s", a, w, out)
		}
	}
	if out := c.ok("describe", "--store", c.store, "--table", b); !strings.Contains(out, "key     n:int64,host") {
		t.Errorf("describe %s:\n%s", b, out)
	}
	if out := c.ok("drop", "--store", c.store, a); out != "dropped "+a+"\n" {
		t.Errorf("drop: %q", out)
	}
	if got := listed(); len(got) != 1 || !strings.HasPrefix(got[0], b+"\t") {
		t.Errorf("tables after drop: %q", got)
	}
}

// TestRegionsPerBucket: a bucket split over regions counts each of them; buckets sharing one count 1.
func TestRegionsPerBucket(t *testing.T) {
	s := testkit.Salter(t, "hash:4")
	for _, tc := range []struct {
		starts [][]byte
		want   []int
	}{
		{[][]byte{{}}, []int{1, 1, 1, 1}},
		{[][]byte{{}, {1}, {2}, {3}}, []int{1, 1, 1, 1}},
		{[][]byte{{}, {1}, {1, 0x80}, {2}, {3}}, []int{1, 2, 1, 1}},
		{[][]byte{{}, {0, 5}, {0, 9}}, []int{3, 1, 1, 1}},
	} {
		got, err := regionsPerBucket(s, tc.starts)
		if err != nil || !bytes.Equal(intsToBytes(got), intsToBytes(tc.want)) {
			t.Errorf("regions %q: %v, %v; want %v", tc.starts, got, err, tc.want)
		}
	}
}

func intsToBytes(v []int) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}

// TestCLIHelpAndErrors: help names the real default store and the new verbs; a Java stack trace in
// an error is cut to its message; an HBase URL with no ZooKeeper listening fails at once.
func TestCLIHelpAndErrors(t *testing.T) {
	c := newCLI(t)
	_, errOut, err := c.run(context.Background(), "help")
	if err != nil || !strings.Contains(errOut, "(default "+defaultStore+")") {
		t.Errorf("help: %v\n%s", err, errOut)
	}
	for _, verb := range []string{"tables", "describe", "drop", "delete"} {
		if !strings.Contains(errOut, "  "+verb+" ") {
			t.Errorf("help does not list %s", verb)
		}
	}

	javaErr := "hbase: put \"t\": HBase Java exception org.apache.hadoop.hbase.DoNotRetryIOException: bad thing\n" +
		"\tat org.apache.hadoop.hbase.regionserver.HRegion.put(HRegion.java:1)\n\tat java.base/java.lang.Thread.run(Thread.java:1)\n\t... 3 more"
	short := errorText(errString(javaErr), false)
	if short != "hbase: put \"t\": HBase Java exception org.apache.hadoop.hbase.DoNotRetryIOException: bad thing\n(stack trace left out; -v shows it)" {
		t.Errorf("errorText: %q", short)
	}
	if errorText(errString(javaErr), true) != javaErr {
		t.Error("errorText -v changed the message")
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connections are refused
	began := time.Now()
	_, _, err = c.run(context.Background(), "tables", "--store", "hbase://"+addr)
	if err == nil || !strings.Contains(err.Error(), "no ZooKeeper answers") || time.Since(began) > 5*time.Second {
		t.Errorf("hbase://%s: %v after %v; want a refusal at once", addr, err, time.Since(began))
	}
}

// TestExitCode: the process's exit code for what run returned.
func TestExitCode(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want int
	}{
		{context.Background(), nil, 0},
		{context.Background(), flag.ErrHelp, 0},
		{context.Background(), errString("bad flag"), 1},
		{context.Background(), &exitError{code: exitInterrupted, err: errString("interrupted")}, 130},
		{cancelled, errString("scan: context canceled"), 130},
	} {
		if got := exitCode(tc.ctx, tc.err); got != tc.want {
			t.Errorf("exitCode(%v): %d, want %d", tc.err, got, tc.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
