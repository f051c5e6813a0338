package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCLIImportStoredSchema: an import into a table that stores its key schema takes that schema
// without --key; one with neither is refused, saying what to give.
func TestCLIImportStoredSchema(t *testing.T) {
	c := newCLI(t)
	c.ok("create", "--store", c.store, "--table", "m", "--salt", "hash:4", "--key", typedKey)
	in := c.file("rows.csv", "host,ts,v\nweb1,1767225600000,a\ndb,1767225600000,b\n")
	out := c.ok("import", "--store", c.store, "--table", "m", in)
	if r := parseImportReport(t, out); r != (importReport{Read: 2, Written: 2}) {
		t.Fatalf("import without --key: %+v", r)
	}
	c.wantTable("m", map[string]string{"web1,1767225600000": "a", "db,1767225600000": "b"})
	if out := c.ok("import", "--store", c.store, "--table", "m", "--dry-run", in); !strings.Contains(out, "2 rows would be written") {
		t.Fatalf("dry run without --key:\n%s", out)
	}
	c.ok("create", "--store", c.store, "--table", "plain", "--salt", "hash:4")
	if _, _, err := c.run(t.Context(), "import", "--store", c.store, "--table", "plain", in); err == nil || !strings.Contains(err.Error(), "--key") {
		t.Fatalf("import into a table without a key schema, without --key: %v", err)
	}
}

// TestCLIImportPeriods: brine import writes a period table's rows to their periods, with
// the failure report of any import (a row outside every period fails alone) and its duplicate rule.
func TestCLIImportPeriods(t *testing.T) {
	c := newCLI(t)
	c.ok("periods", "declare", "ev", "--store", c.store, "--period", "month", "--time-field", "1", "--salt", "hash:4", "--key", typedKey)
	c.ok("periods", "create-ahead", "ev", "--store", c.store, "--now", "2026-01-01T00:00:00Z", "--ahead", "2")
	ms := func(m time.Month, d int) int64 { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC).UnixMilli() }
	in := c.file("ev.csv", fmt.Sprintf("host,ts,v\na,%d,1\nb,%d,2\nc,%d,3\nlate,%d,4\nb,%d,5\n", ms(1, 5), ms(2, 5), ms(3, 5), ms(6, 5), ms(2, 5)))
	out, _, err := c.run(t.Context(), "import", "--store", c.store, "--table", "ev", in)
	if err == nil {
		t.Fatal("import with a row outside every period: no error")
	}
	if r := parseImportReport(t, out); r != (importReport{Read: 5, Written: 4, Failed: 1, Duplicates: 1}) {
		t.Fatalf("import into a period table: %+v\n%s", r, out)
	}
	report, rerr := os.ReadFile(in + ".failed.csv")
	if rerr != nil || string(report) != fmt.Sprintf("host,ts,v\nlate,%d,4\n", ms(6, 5)) {
		t.Fatalf("failure report %q, %v", report, rerr)
	}
	rows := parseRows(t, c.ok("scan", "--store", c.store, "--table", "ev"))
	want := []string{fmt.Sprintf("a,%d", ms(1, 5)), fmt.Sprintf("b,%d", ms(2, 5)), fmt.Sprintf("c,%d", ms(3, 5))}
	if got := rowKeys(rows); !slices.Equal(got, want) {
		t.Fatalf("scan after the import: %q, want %q", got, want)
	}
	if v, _ := rows[1].value("d:v"); v != "5" {
		t.Errorf("the repeated key holds %q, want the last occurrence's 5", v)
	}
}

// TestCLIErrorsShowPrintedKeys: errors name keys as get and scan print them, not in their encoded
// form (tag bytes), in put, get and delete's errors and in an import's error log.
func TestCLIErrorsShowPrintedKeys(t *testing.T) {
	c := newCLI(t)
	c.ok("periods", "declare", "ev", "--store", c.store, "--period", "month", "--time-field", "1", "--salt", "hash:4", "--key", typedKey)
	for _, verb := range []string{"put", "get", "delete"} {
		args := []string{verb, "--store", c.store, "--table", "ev", "h1,1"}
		if verb == "put" {
			args = append(args, "d:v=x")
		}
		_, _, err := c.run(t.Context(), args...)
		if err == nil || !strings.Contains(err.Error(), "key h1,1: time 1970-01-01T00:00:00.001Z:") || strings.Contains(err.Error(), `\x`) {
			t.Errorf("%s of a key outside every period: %v, want the key as h1,1", verb, err)
		}
	}
	c.ok("create", "--store", c.store, "--table", "o", "--salt", "hash:4", "--key", "id")
	if _, _, err := c.run(t.Context(), "get", "--store", c.store, "--table", "o", "O1"); err == nil || err.Error() != `get O1: brine: row not found` {
		t.Errorf("get of a missing row: %v", err)
	}
	in := c.file("dup.csv", "id,v\nO 1,a\nO 1,b\n")
	if _, _, err := c.run(t.Context(), "import", "--store", c.store, "--table", "o", "--on-duplicate", "error", in); err == nil {
		t.Fatal("import of a repeated key with --on-duplicate error: no error")
	}
	log, err := os.ReadFile(in + ".failed.csv.errors")
	if want := "line 3: input row 1 (key 'O 1'): brine: duplicate key in the import (1 earlier row(s) had it)\n"; err != nil || string(log) != want {
		t.Errorf("error log %q, want %q", log, want)
	}
}
