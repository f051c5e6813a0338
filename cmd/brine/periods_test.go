package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestCLIPeriods runs a year of monthly periods through the CLI: declare, create a year ahead, write
// two rows a month, scan across all of them and across two, then expire nine with an export, whose
// row counts and checksums are checked against the files.
func TestCLIPeriods(t *testing.T) {
	for _, store := range []string{"local", "tablestore"} {
		t.Run(store, func(t *testing.T) {
			c := newCLI(t)
			if store == "tablestore" {
				c.useTablestore(t)
			}
			checkCLIPeriods(t, c)
		})
	}
}

func checkCLIPeriods(t *testing.T, c *cli) {
	ctx := context.Background()
	tab := c.tab("orders")
	c.ok("periods", "declare", tab, "--store", c.store, "--period", "month", "--time-field", "1",
		"--salt", "hash:4", "--retain", "keep=3", "--key", "host,ts:int64")
	out := c.ok("periods", "create-ahead", tab, "--store", c.store, "--now", "2026-01-01T00:00:00Z", "--ahead", "11")
	if n := strings.Count(out, "created "); n != 12 {
		t.Fatalf("create-ahead created %d periods, want 12:\n%s", n, out)
	}
	var want []string
	for m := time.January; m <= time.December; m++ {
		for _, day := range []int{1, 28} {
			ts := time.Date(2026, m, day, 12, 0, 0, 0, time.UTC).UnixMilli()
			key := "h1," + strconv.FormatInt(ts, 10)
			c.ok("put", "--store", c.store, "--table", tab, key, "d:v="+key)
			want = append(want, key)
		}
	}
	// Outside every period: refused with the sentinel's text, nothing written.
	late := "h1," + strconv.FormatInt(time.Date(2027, 1, 5, 0, 0, 0, 0, time.UTC).UnixMilli(), 10)
	if _, _, err := c.run(ctx, "put", "--store", c.store, "--table", tab, late, "d:v=x"); err == nil || !strings.Contains(err.Error(), "no live period") {
		t.Fatalf("put outside every period: %v", err)
	}
	out = c.ok("scan", "--store", c.store, "--table", tab, "--keys-only")
	if got := strings.Fields(out); !slices.Equal(got, want) {
		t.Fatalf("scan across the year: %q, want %q", got, want)
	}
	mar, may := time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC).UnixMilli(), time.Date(2026, 4, 15, 0, 0, 0, 0, time.UTC).UnixMilli()
	out = c.ok("scan", "--store", c.store, "--table", tab, "--keys-only", "--reverse",
		"--start", fmt.Sprintf("h1,%d", mar), "--end", fmt.Sprintf("h1,%d", may))
	if got := strings.Fields(out); !slices.Equal(got, []string{want[6], want[5]}) {
		t.Fatalf("scan mid-March to mid-April, reversed: %q, want %q", got, []string{want[6], want[5]})
	}

	out = c.ok("periods", "list", tab, "--store", c.store, "--now", "2026-12-15T00:00:00Z")
	if n := strings.Count(out, "\texpired\n"); n != 9 {
		t.Fatalf("list shows %d expired periods, want 9:\n%s", n, out)
	}
	before := parseRows(t, c.ok("scan", "--store", c.store, "--table", tab))
	dir := filepath.Join(t.TempDir(), "archive", "2026") // made by the export
	out = c.ok("periods", "expire", tab, "--store", c.store, "--now", "2026-12-15T00:00:00Z", "--export", dir, "--format", "jsonl")
	exported := regexp.MustCompile(`(?m)^exported (\S+) to (\S+): (\d+) rows, sha256 ([0-9a-f]{64})$`).FindAllStringSubmatch(out, -1)
	if len(exported) != 9 || len(regexp.MustCompile(`(?m)^dropped `).FindAllString(out, -1)) != 9 {
		t.Fatalf("expire exported %d periods and dropped some, want 9 each:\n%s", len(exported), out)
	}
	// The export is rows as import reads them: imported back (into a plain table with the same key
	// schema), they equal what the periods held, timestamps too.
	back := c.tab("back")
	c.ok("create", "--store", c.store, "--table", back, "--salt", "hash:4", "--key", "host,ts:int64")
	for _, m := range exported {
		data, err := os.ReadFile(m[2])
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != m[4] || filepath.Dir(m[2]) != dir {
			t.Errorf("%s: printed sha256 %s, file has %x", m[2], m[4], sum)
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if strconv.Itoa(len(lines)) != m[3] {
			t.Errorf("%s: printed %s rows, file has %d", m[2], m[3], len(lines))
		}
		var line map[string]string
		if err := json.Unmarshal([]byte(lines[0]), &line); err != nil || line["host"] != "h1" || line["v"] != "h1,"+line["ts"] {
			t.Errorf("%s: line %q: %v", m[2], lines[0], err)
		}
		if r := parseImportReport(t, c.ok("import", "--store", c.store, "--table", back, "--ts-column", "_ts", m[2])); r.Written != 2 || r.Failed != 0 {
			t.Errorf("import of %s: %+v", m[2], r)
		}
	}
	if got := parseRows(t, c.ok("scan", "--store", c.store, "--table", back)); fmt.Sprint(got) != fmt.Sprint(before[:18]) {
		t.Errorf("exported rows imported back:\n%v\nwant January to September's\n%v", got, before[:18])
	}
	out = c.ok("scan", "--store", c.store, "--table", tab, "--keys-only")
	if got := strings.Fields(out); !slices.Equal(got, want[18:]) {
		t.Fatalf("scan after expire: %q, want %q", got, want[18:])
	}
	out = c.ok("tables", "--store", c.store)
	if strings.Contains(out, tab+"_2026_09") || !strings.Contains(out, tab+"_2026_10") {
		t.Errorf("tables after expire:\n%s", out)
	}
	// A month later: January 2027 (with its own spec and family settings) pushes October out; CSV.
	out = c.ok("periods", "create-ahead", tab, "--store", c.store, "--now", "2027-01-01T00:00:00Z", "--ahead", "0",
		"--salt", "hash:8", "--ttl", "2160h", "--compression", "GZ")
	if !strings.Contains(out, "created "+tab+"_2027_01\t2027-01-01T00:00:00Z\t2027-02-01T00:00:00Z\thash:8") {
		t.Errorf("create-ahead for January:\n%s", out)
	}
	// November cools down: no reserved throughput (Tablestore only; the other stores say so).
	_, _, err := c.run(ctx, "periods", "tune", tab, tab+"_2026_11", "--store", c.store, "--read-cu", "0", "--write-cu", "0", "--ttl", "2160h")
	if tunable := strings.HasPrefix(c.store, "tablestore"); tunable != (err == nil) || (err != nil && !strings.Contains(err.Error(), "cannot tune")) {
		t.Errorf("periods tune on %s: %v", c.store, err)
	}
	out = c.ok("periods", "expire", tab, "--store", c.store, "--now", "2027-01-15T00:00:00Z", "--export", dir, "--format", "csv")
	if !strings.Contains(out, "exported "+tab+"_2026_10 to "+filepath.Join(dir, tab+"_2026_10.csv")+": 2 rows") {
		t.Errorf("csv expire:\n%s", out)
	}
	// A row of 1970 has no period: the import reports it, as Put refuses it.
	early := c.file("in.csv", "host,ts,v\nh1,1,x\n")
	if _, _, err := c.run(ctx, "import", "--store", c.store, "--table", tab, early); err == nil {
		t.Error("import of a row outside every period: no error")
	}
	if log, err := os.ReadFile(early + ".failed.csv.errors"); err != nil || !strings.Contains(string(log), "no live period") {
		t.Errorf("import of a row outside every period: error log %q, %v", log, err)
	}
	// drop takes the periods with the period table.
	c.ok("drop", "--store", c.store, tab)
	if out := c.ok("tables", "--store", c.store); strings.Contains(out, tab) {
		t.Errorf("tables after drop:\n%s", out)
	}
}

// TestCLIPeriodsRefusesBadInput: each bad command line fails with a message naming the problem, and
// leaves the store as it was.
func TestCLIPeriodsRefusesBadInput(t *testing.T) {
	c := newCLI(t)
	c.ok("periods", "declare", "p", "--store", c.store, "--period", "day", "--key", "ts:int64,id", "--salt", "hash:2")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"periods"}, "usage: brine periods"},
		{[]string{"periods", "rotate", "p"}, `unknown periods subcommand "rotate"`},
		{[]string{"periods", "declare", "q", "--period", "year"}, `period "year"`},
		{[]string{"periods", "declare", "q", "--retain", "keep=-2"}, "--retain"},
		{[]string{"periods", "declare", "q", "--key", "host,ts:int64", "--time-field", "0"}, "field 0 of key"},
		{[]string{"periods", "declare", "q", "--salt", "hash:0"}, "--salt"},
		{[]string{"periods", "list"}, "usage: brine periods"},
		{[]string{"periods", "list", "p", "--now", "yesterday"}, "--now"},
		{[]string{"periods", "create-ahead", "p", "--ahead", "-1"}, "--ahead -1"},
		{[]string{"periods", "create-ahead", "p", "--read-cu", "5"}, "cannot tune"},
		{[]string{"periods", "create-ahead", "p", "--ttl", "1500ms"}, "TTL"},
		{[]string{"periods", "tune", "p"}, "usage: brine periods"},
		{[]string{"periods", "tune", "p", "p_2030_01_01", "--read-cu", "1"}, "table not found"},
		{[]string{"periods", "expire", "p", "--format", "xml"}, `--format "xml"`},
		{[]string{"periods", "list", "nothing"}, "table not found"},
	} {
		args := append(tc.args, "--store", c.store)
		if len(tc.args) == 1 {
			args = tc.args
		}
		_, _, err := c.run(context.Background(), args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("brine %q: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	if out := c.ok("periods", "list", "p", "--store", c.store); out != "" {
		t.Errorf("periods after the refused commands:\n%s", out)
	}
	if out := c.ok("tables", "--store", c.store); strings.TrimSpace(out) != "p\tsalt none, key ts:int64,id" {
		t.Errorf("tables after the refused commands:\n%s", out)
	}
}
