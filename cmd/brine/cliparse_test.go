package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Tests read the CLI's output through these parsers and assert on the fields, never on substrings:
// scan and get print each cell's millisecond timestamp, and import its elapsed time and rate, which
// can hold any digits.

// cliCell is one cell as get and scan print it: FAMILY:QUALIFIER=VALUE@TS.
type cliCell struct {
	Family, Qualifier, Value string
	TS                       int64
}

// cliRow is one line of get or scan output: the printed key and its cells.
type cliRow struct {
	Key   string
	Cells []cliCell
}

// value returns the value of the cell family:qualifier, and whether the row has it.
func (r cliRow) value(col string) (string, bool) {
	for _, c := range r.Cells {
		if c.Family+":"+c.Qualifier == col {
			return c.Value, true
		}
	}
	return "", false
}

// cols lists the row's cells as family:qualifier=value, timestamps left out.
func (r cliRow) cols() []string {
	out := make([]string, len(r.Cells))
	for i, c := range r.Cells {
		out[i] = c.Family + ":" + c.Qualifier + "=" + c.Value
	}
	return out
}

// untimed prints parsed rows as get and scan do, without the cells' timestamps.
func untimed(rows []cliRow) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r.Key)
		for _, c := range r.cols() {
			b.WriteString("  " + c)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// parseRows parses get or scan output (one row per line: the key, then two spaces before each cell).
func parseRows(t testing.TB, out string) []cliRow {
	t.Helper()
	rows, err := parseRowsText(out)
	if err != nil {
		t.Fatalf("%v in output:\n%s", err, out)
	}
	return rows
}

func parseRowsText(out string) ([]cliRow, error) {
	var rows []cliRow
	for line := range strings.SplitSeq(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		parts := strings.Split(line, "  ")
		row := cliRow{Key: parts[0]}
		for _, p := range parts[1:] {
			at := strings.LastIndexByte(p, '@')
			col, val, ok := strings.Cut(p[:max(at, 0)], "=")
			fam, qual, ok2 := strings.Cut(col, ":")
			ts, err := strconv.ParseInt(p[at+1:], 10, 64)
			if at < 0 || !ok || !ok2 || err != nil {
				return nil, fmt.Errorf("cell %q: want FAMILY:QUALIFIER=VALUE@TS", p)
			}
			if strings.HasPrefix(val, `"`) {
				if val, err = strconv.Unquote(val); err != nil {
					return nil, fmt.Errorf("cell %q: value: %w", p, err)
				}
			}
			row.Cells = append(row.Cells, cliCell{Family: fam, Qualifier: qual, Value: val, TS: ts})
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// rowKeys returns the keys of parsed rows, in order.
func rowKeys(rows []cliRow) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Key
	}
	return out
}

// importReport is import's summary line, parsed.
type importReport struct {
	Read, Written, Failed, Duplicates int64
}

var importReportRE = regexp.MustCompile(`(?m)^read (\d+), written (\d+), failed (\d+), duplicate keys (\d+), retried \d+, \d+ batches, \d+ bytes in \S+ \(\d+ rows/s\)$`)

// parseImportReport finds import's summary line in its stdout.
func parseImportReport(t testing.TB, out string) importReport {
	t.Helper()
	m := importReportRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no import summary line in:\n%s", out)
	}
	n := make([]int64, 4)
	for i := range n {
		n[i], _ = strconv.ParseInt(m[i+1], 10, 64)
	}
	return importReport{Read: n[0], Written: n[1], Failed: n[2], Duplicates: n[3]}
}

func TestParseRows(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want []cliRow
		bad  bool
	}{
		{out: "", want: nil},
		{out: "k1  d:v=x@1795701002545\n", want: []cliRow{{Key: "k1", Cells: []cliCell{{"d", "v", "x", 1795701002545}}}}},
		{out: "web1,5  d:a=1@2  e:b=\"two words@\"@3\nk2\n", want: []cliRow{
			{Key: "web1,5", Cells: []cliCell{{"d", "a", "1", 2}, {"e", "b", "two words@", 3}}}, {Key: "k2"}}},
		{out: "k1  d:v=x\n", bad: true},
		{out: "k1  novalue@5\n", bad: true},
	} {
		got, err := parseRowsText(tc.out)
		if tc.bad != (err != nil) {
			t.Errorf("%q: error %v, want error: %v", tc.out, err, tc.bad)
			continue
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q: %+v, want %+v", tc.out, got, tc.want)
		}
	}
}
