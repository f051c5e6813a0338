package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/records"
)

// The import path's reliability tests: the reader, the row converter and the failure report, fuzzed
// and on hand-made bad input.

const fuzzKeySpec = "id,n:int64"

var formats = []records.Format{records.CSV, records.TSV, records.JSONL}

// failedRecords reads input as an import does and returns every record that fails, with its error,
// checking on the way that each error names its line and that every row that converts has a key
// that decodes back to its key columns.
func failedRecords(t *testing.T, input []byte, format records.Format, conv rowConverter) (header []string, failed []records.Record, errs []error, ok bool) {
	t.Helper()
	header, recs, err := records.Read(bytes.NewReader(input), format)
	if err != nil {
		return nil, nil, nil, false // a bad header stops the import before any row is read
	}
	if checkColumns(header, conv.schema, conv.tsColumn) != nil {
		return nil, nil, nil, false
	}
	for rec, err := range recs {
		if err == nil {
			var row client.ImportRow
			if row, err = conv.row(rec); err == nil {
				vals, derr := conv.schema.Decode(row.Key)
				want, perr := conv.schema.ParseValues(rec.Fields["id"], rec.Fields["n"])
				if derr != nil || perr != nil || fmt.Sprint(vals) != fmt.Sprint(want) {
					t.Fatalf("line %d: key %q decodes to %v (%v), the record holds %v (%v)", rec.Line, row.Key, vals, derr, want, perr)
				}
				if src, _ := row.Source.(records.Record); src.Line != rec.Line {
					t.Fatalf("line %d: the row's Source is line %d", rec.Line, src.Line)
				}
				continue
			}
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("line %d", rec.Line)) {
			t.Fatalf("the error of line %d does not name it: %v", rec.Line, err)
		}
		failed = append(failed, rec)
		errs = append(errs, err)
	}
	return header, failed, errs, true
}

// reportRoundTrip writes failed records as the failure report does and reads the report back.
func reportRoundTrip(t *testing.T, format records.Format, header []string, failed []records.Record) []records.Record {
	t.Helper()
	var buf bytes.Buffer
	fw := records.NewFailureWriter(&buf, format, header)
	for _, rec := range failed {
		if err := fw.Write(rec); err != nil {
			t.Fatalf("failure report: write line %d: %v", rec.Line, err)
		}
	}
	if err := fw.Flush(); err != nil {
		t.Fatalf("failure report: flush: %v", err)
	}
	h2, recs, err := records.Read(&buf, format)
	if err != nil {
		t.Fatalf("the failure report %q does not read back: %v", buf.String(), err)
	}
	if format != records.JSONL && !slices.Equal(h2, header) {
		t.Fatalf("the failure report's header is %q, the input's %q", h2, header)
	}
	var again []records.Record
	for rec := range recs {
		again = append(again, rec)
	}
	return again
}

// sameRecord compares what a records.Record holds, not where it was.
func sameRecord(a, b records.Record) bool {
	return maps.Equal(a.Fields, b.Fields) && slices.Equal(a.Raw, b.Raw) && bytes.Equal(bytes.TrimSuffix(a.Input, []byte("\n")), bytes.TrimSuffix(b.Input, []byte("\n")))
}

func checkReport(t *testing.T, format records.Format, header []string, failed []records.Record) {
	t.Helper()
	if len(failed) == 0 {
		return
	}
	again := reportRoundTrip(t, format, header, failed)
	if len(again) != len(failed) {
		t.Fatalf("%d records failed, the failure report reads back as %d: failed rows were lost from the report (first failed line %d, raw %q)",
			len(failed), len(again), failed[0].Line, failed[0].Raw)
	}
	for i := range failed {
		if !sameRecord(failed[i], again[i]) {
			t.Fatalf("failed line %d reads back from the report changed:\n was  %q %q %q\n now  %q %q %q",
				failed[i].Line, failed[i].Raw, failed[i].Fields, failed[i].Input, again[i].Raw, again[i].Fields, again[i].Input)
		}
	}
}

var fuzzSeeds = []struct {
	format records.Format
	input  string
}{
	{records.CSV, "id,n,v\na,1,x\nb,2\nc,3,y,extra\nd,notint,z\ne,5,\"quoted, with comma\"\n"},
	{records.CSV, "\ufeffid,n,v\r\n\"multi\nline\",1,x\r\n,2,empty id\r\n"},
	{records.CSV, "id,n,v\nok,1,x\n\"bad\"quote,2,y\nok2,3,z\n"},
	{records.TSV, "id\tn\tv\na\t1\tx\"y\nb\t2\n\"c\t3\tz\n"},
	{records.TSV, "id\tn\tv\n a\t-9223372036854775808\t\"q\"\n"},
	{records.JSONL, "{\"id\":\"a\",\"n\":1,\"v\":\"x\"}\nnot json\n{\"id\":\"b\"}\n[1,2]\n{\"id\":\"c\",\"n\":\"x\"}\n\n{\"id\":\"d\",\"n\":2,\"v\":{\"nested\":true}}"},
	{records.JSONL, "{\"id\":\"e\",\"n\":1e3}\n{\"id\":null,\"n\":0}\n  {\"id\":\"f\",\"n\":1} trailing\n"},
	// Found by fuzzing: each loses or changes a failed record in the report (see the report).
	{records.CSV, "id,n,0\n\"\""},               // a records.Record of one empty field is written as an empty line
	{records.CSV, "id,n\n0,0,\""},               // a records.Record cut by a parse error is written as its parsed part
	{records.CSV, "id,n,v\n\"a\r\r\nb\",x,y\n"}, // \r\r\n in a quoted field comes back as \n
}

// FuzzImportRecords: any CSV, TSV or JSON Lines input goes through the reader and the row converter
// without a panic; every failing record gets an error naming its line; every converted row has a key
// that decodes to its key columns; and the failure report holds every failed record such that reading
// it back gives the same records (so failed rows can be fixed and imported again).
func FuzzImportRecords(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(uint8(slices.Index(formats, s.format)), []byte(s.input))
	}
	f.Fuzz(func(t *testing.T, sel uint8, input []byte) {
		format := formats[int(sel)%len(formats)]
		conv := rowConverter{schema: testkit.Schema(t, fuzzKeySpec), family: "d"}
		header, failed, _, ok := failedRecords(t, input, format, conv)
		if ok {
			checkReport(t, format, header, failed)
		}
	})
}

// importFile runs the import path of `brine import` (reader, converter, Table.Import, failure report)
// on a memory table and returns the table, the failure report and the errors logged per line.
func importFile(t *testing.T, format records.Format, input string) (*client.Table, string, []string) {
	t.Helper()
	ctx := context.Background()
	schema := testkit.Schema(t, fuzzKeySpec)
	header, recs, err := records.Read(strings.NewReader(input), format)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkColumns(header, schema, ""); err != nil {
		t.Fatal(err)
	}
	s := testkit.Salter(t, "hash:4")
	c := client.New(memory.New())
	t.Cleanup(func() { c.Close() })
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: s})
	if err != nil {
		t.Fatal(err)
	}
	var report bytes.Buffer
	fw := records.NewFailureWriter(&report, format, header)
	var logged []string
	conv := rowConverter{schema: schema, family: client.DefaultFamily}
	_, err = tbl.Import(ctx, conv.rows(recs), client.ImportOptions{BatchRows: 2, OnFailure: func(fr client.FailedRow) {
		rec, _ := fr.Row.Source.(records.Record)
		if werr := fw.Write(rec); werr != nil {
			t.Errorf("failure report: %v", werr)
		}
		logged = append(logged, fmt.Sprintf("line %d: %v", rec.Line, fr.Err))
	}})
	if err != nil && !strings.Contains(err.Error(), "rows failed") {
		t.Fatal(err)
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	return tbl, report.String(), logged
}

// wantRows checks that the rows with these (id, n) keys were stored with value v.
func wantRows(t *testing.T, tbl *client.Table, rows map[string]string) {
	t.Helper()
	schema := testkit.Schema(t, fuzzKeySpec)
	for idn, v := range rows {
		id, n, _ := strings.Cut(idn, "/")
		vals, err := schema.ParseValues(id, n)
		if err != nil {
			t.Fatal(err)
		}
		k, err := schema.Encode(vals...)
		if err != nil {
			t.Fatal(err)
		}
		row, err := tbl.Get(context.Background(), k)
		if err != nil || len(row.Cells) != 1 || string(row.Cells[0].Value) != v {
			t.Errorf("row %s: %+v, %v; want v=%q", idn, row.Cells, err, v)
		}
	}
}

// TestImportBadRowsFailAlone: rows with too few or too many columns, an empty or non-numeric key
// field, in CSV, TSV and JSON Lines, each fail with an error naming their line, go to the failure
// report (which reads back to exactly them), and the rows around them are stored.
func TestImportBadRowsFailAlone(t *testing.T) {
	cases := []struct {
		format records.Format
		input  string
		bad    []int // lines that must fail
	}{
		{records.CSV, "id,n,v\na,1,x\nb,2\nc,3,y\nd,4,w,extra\ne,5,z\nf,five,q\ng,7,r\n", []int{3, 5, 7}},
		{records.TSV, "id\tn\tv\na\t1\tx\nb\t2\nc\t3\ty\nd\t4\tw\textra\ne\t5\tz\nf\tfive\tq\ng\t7\tr\n", []int{3, 5, 7}},
		{records.JSONL, `{"id":"a","n":1,"v":"x"}` + "\n" + `{"id":"b","v":"no n"}` + "\n" + `{"id":"c","n":3,"v":"y"}` + "\n" +
			`{"id":"d","n":4,` + "\n" + `{"id":"e","n":5,"v":"z"}` + "\n" + `{"id":"f","n":"five","v":"q"}` + "\n" + `{"id":"g","n":7,"v":"r"}` + "\n", []int{2, 4, 6}},
	}
	for _, tc := range cases {
		t.Run(string(tc.format), func(t *testing.T) {
			tbl, report, logged := importFile(t, tc.format, tc.input)
			if len(logged) != len(tc.bad) {
				t.Fatalf("failures logged: %q; want lines %v", logged, tc.bad)
			}
			for i, line := range tc.bad {
				if !strings.HasPrefix(logged[i], fmt.Sprintf("line %d: ", line)) || !strings.Contains(logged[i][6:], fmt.Sprintf("line %d", line)) {
					t.Errorf("failure %d: %q; want it to name line %d", i, logged[i], line)
				}
			}
			wantRows(t, tbl, map[string]string{"a/1": "x", "c/3": "y", "e/5": "z", "g/7": "r"})
			header, recs, err := records.Read(strings.NewReader(tc.input), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			var failed []records.Record
			for rec := range recs {
				if slices.Contains(tc.bad, int(rec.Line)) {
					failed = append(failed, rec)
				}
			}
			again := reportRoundTrip(t, tc.format, header, failed)
			if len(again) != len(failed) {
				t.Fatalf("report %q holds %d records, %d failed", report, len(again), len(failed))
			}
			for i := range failed {
				if !sameRecord(failed[i], again[i]) {
					t.Errorf("line %d changed in the report: %q -> %q", failed[i].Line, failed[i].Raw, again[i].Raw)
				}
			}
		})
	}
}

// TestFailureReportKeepsUnparsableCSV: a CSV record the csv package cannot parse (a bare quote) is
// reported, and the failure report must still hold it, or the row is gone from the one file the user
// is told to re-import.
func TestFailureReportKeepsUnparsableCSV(t *testing.T) {
	input := "id,n,v\na,1,x\n\"bad\"quote,2,y\nc,3,z\n"
	tbl, report, logged := importFile(t, records.CSV, input)
	if len(logged) != 1 || !strings.HasPrefix(logged[0], "line 3: ") {
		t.Fatalf("failures logged: %q; want line 3", logged)
	}
	wantRows(t, tbl, map[string]string{"a/1": "x", "c/3": "z"})
	if !strings.Contains(report, `"bad"quote`) {
		t.Fatalf("the failure report lost the unparsable line 3; it holds %q", report)
	}
}

// TestBareQuoteDoesNotPanic: a CSV record the csv package cannot parse used to crash the import
// (csv.Reader.FieldPos panics after a Read that returned no record); it must fail alone, naming its
// line, with the rows around it imported.
func TestBareQuoteDoesNotPanic(t *testing.T) {
	for input, line := range map[string]int{
		"id,n,v\na,1,x\n\"bad\"quote,2,y\nc,3,z\n":   3,
		"id,n,v\na,1,x\nc,3,z\n\"unterminated,4,w\n": 4,
	} {
		tbl, _, logged := importFile(t, records.CSV, input)
		if len(logged) != 1 || !strings.HasPrefix(logged[0], fmt.Sprintf("line %d: ", line)) {
			t.Errorf("%q: failures logged %q; want one, naming line %d", input, logged, line)
		}
		wantRows(t, tbl, map[string]string{"a/1": "x", "c/3": "z"})
	}
}

// TestJSONLInvalidUTF8IsNotReplaced: a JSON Lines value with invalid UTF-8 must either fail with an
// error naming its line, or be stored byte for byte; encoding/json replaces such bytes with U+FFFD,
// which would store different data than the input without a word.
func TestJSONLInvalidUTF8IsNotReplaced(t *testing.T) {
	input := "{\"id\":\"a\",\"n\":1,\"v\":\"ok\"}\n{\"id\":\"b\",\"n\":2,\"v\":\"caf\xe9\"}\n{\"id\":\"c\\xff\",\"n\":3,\"v\":\"x\"}\n{\"id\":\"d\xff\",\"n\":4,\"v\":\"y\"}\n"
	tbl, _, logged := importFile(t, records.JSONL, input)
	wantRows(t, tbl, map[string]string{"a/1": "ok"})
	failedLine := func(n int) bool {
		return slices.ContainsFunc(logged, func(l string) bool { return strings.HasPrefix(l, fmt.Sprintf("line %d: ", n)) })
	}
	schema := testkit.Schema(t, fuzzKeySpec)
	for _, c := range []struct {
		line     int
		id, n, v string
	}{{2, "b", "2", "caf\xe9"}, {4, "d\xff", "4", "y"}} {
		if failedLine(c.line) {
			continue
		}
		vals, _ := schema.ParseValues(c.id, c.n)
		k, _ := schema.Encode(vals...)
		row, err := tbl.Get(context.Background(), k)
		if err != nil || string(row.Cells[0].Value) != c.v {
			stored := "nothing"
			if err == nil {
				stored = fmt.Sprintf("%q", row.Cells[0].Value)
			}
			t.Errorf("line %d: neither reported nor stored as given: want key %q value %q, the table has %s under that key (logged: %q)",
				c.line, c.id, c.v, stored, logged)
		}
	}
}

// TestFailureReportFile: the report file the CLI writes next to the input reads back (the on-disk
// path of the round trip, with the header written once).
func TestFailureReportFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv.failed.csv")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	header := []string{"id", "n", "v"}
	input := "id,n,v\r\na,x,1\n\"b,c\",2\n\"q\"\"uote\",3,\"line\r\nbreak\""
	h, in, err := records.Read(strings.NewReader(input), records.CSV)
	if err != nil || !slices.Equal(h, header) {
		t.Fatalf("input header %q, %v", h, err)
	}
	fw := records.NewFailureWriter(fh, records.CSV, header)
	var recs []records.Record
	for r := range in {
		recs = append(recs, r)
		if err := fw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h2, again, err := records.Read(bytes.NewReader(data), records.CSV)
	if err != nil || !slices.Equal(h2, header) {
		t.Fatalf("report header %q, %v", h2, err)
	}
	i := 0
	for rec := range again {
		if !slices.Equal(rec.Raw, recs[i].Raw) || !bytes.Equal(bytes.TrimSuffix(rec.Input, []byte("\n")), bytes.TrimSuffix(recs[i].Input, []byte("\n"))) {
			t.Errorf("record %d: %q, wrote %q", i, rec.Raw, recs[i].Raw)
		}
		i++
	}
	if i != len(recs) {
		t.Fatalf("%d records read back, %d written", i, len(recs))
	}
}

// TestCLIImportBadRows runs `brine import` itself on the embedded store with a CSV holding rows of
// wrong column counts and bad key fields: the command reports the failure, the failure report and its
// error log name exactly the bad lines, and the good rows around them are in the store.
func TestCLIImportBadRows(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	input := "id,n,v\na,1,x\nb,2\nc,3,y\nd,4,w,extra\ne,5,z\nf,five,q\ng,7,r\n"
	if err := os.WriteFile(in, []byte(input), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" },
		logger: slog.New(slog.NewTextHandler(&stderr, nil))}
	store := "local://" + filepath.Join(dir, "db")
	err := run(context.Background(), env, []string{"import", "--store", store, "--table", "t", "--create", "--salt", "hash:4", "--key", fuzzKeySpec, in})
	if err == nil || parseImportReport(t, stdout.String()).Failed != 3 {
		t.Fatalf("import: %v; stdout %q; want 3 failed rows reported", err, stdout.String())
	}
	report, rerr := os.ReadFile(in + ".failed.csv")
	errLog, lerr := os.ReadFile(in + ".failed.csv.errors")
	if rerr != nil || lerr != nil {
		t.Fatalf("failure report: %v, %v", rerr, lerr)
	}
	if string(report) != "id,n,v\nb,2\nd,4,w,extra\nf,five,q\n" {
		t.Errorf("failure report %q", report)
	}
	lines := strings.Split(strings.TrimSpace(string(errLog)), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "line 3: ") || !strings.HasPrefix(lines[1], "line 5: ") || !strings.HasPrefix(lines[2], "line 7: ") {
		t.Errorf("error log %q; want lines 3, 5 and 7", errLog)
	}
	// Read the good rows back through the CLI.
	stdout.Reset()
	if err := run(context.Background(), env, []string{"scan", "--store", store, "--table", "t"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range parseRows(t, stdout.String()) {
		v, _ := r.value("d:v")
		got = append(got, v)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"r", "x", "y", "z"}) {
		t.Errorf("scan shows the values %q, want one row each of r, x, y, z:\n%s", got, stdout.String())
	}
}

// Fake Tablestore credentials for TestCLIImportKeepsSecrets, distinctive enough for grep.
const (
	cliFakeKeyID  = "LTAIcliFakeKeyIdForBrineTests"
	cliFakeSecret = "brineCLIfakeSecret0xC0FFEEneverPrinted"
	cliFakeToken  = "brineCLIfakeStsTokenNeverPrintedEither"
)

// TestCLIImportKeepsSecrets runs `brine import` with fake Tablestore credentials in its environment,
// against the local Tablestore server (tablestore://INSTANCE@HOST) and against the embedded store,
// on input whose rows partly fail, with debug logging; it captures stdout, stderr, the log, the
// returned error, the failure report, its error log and the process's own output, and fails if a
// credential, whole or in part, appears in any of it.
func TestCLIImportKeepsSecrets(t *testing.T) {
	srv := tablestoretest.Start(t, tablestoretest.WithCredentials(cliFakeKeyID, cliFakeSecret), tablestoretest.WithSecurityToken(cliFakeToken))
	vars := map[string]string{
		tablestore.EnvEndpoint: srv.Endpoint(), tablestore.EnvInstance: srv.Instance(),
		tablestore.EnvAccessKeyID: cliFakeKeyID, tablestore.EnvAccessKeySecret: cliFakeSecret, tablestore.EnvSecurityToken: cliFakeToken,
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	var input strings.Builder
	input.WriteString("id,n,v\n")
	for i := range 60 {
		switch i % 10 {
		case 3:
			fmt.Fprintf(&input, "r%d,%d\n", i, i) // a column short
		case 7:
			fmt.Fprintf(&input, "r%d,not-a-number,x\n", i)
		default:
			fmt.Fprintf(&input, "r%d,%d,value %d\n", i, i, i)
		}
	}
	if err := os.WriteFile(in, []byte(input.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer // everything the runs show, to grep
	proc, stopCapture := captureStdio(t)
	host := strings.TrimPrefix(strings.TrimPrefix(srv.Endpoint(), "http://"), "https://")
	stores := []string{"tablestore://" + srv.Instance() + "@" + host, "local://" + filepath.Join(dir, "db")}
	ranImport := 0
	for i, store := range stores {
		var stdout, stderr bytes.Buffer
		env := &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return vars[k] },
			logger: slog.New(slog.NewTextHandler(&stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		failed := filepath.Join(dir, fmt.Sprintf("failed%d.csv", i))
		err := run(context.Background(), env, []string{"import", "--store", store, "--table", "t", "--create", "--salt", "hash:4",
			"--key", fuzzKeySpec, "--failed", failed, in})
		fmt.Fprintf(&out, "== %s\nerror: %v | %+v | %#v\nstdout: %s\nstderr: %s\n", store, err, err, err, &stdout, &stderr)
		for _, p := range []string{failed, failed + ".errors"} {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&out, "%s: %s\n", p, data)
		}
		if m := importReportRE.FindStringSubmatch(stdout.String()); m != nil && m[3] == "12" {
			ranImport++
		} else {
			t.Logf("%s: the import did not run to its failure report (%v); only its error path was checked", store, err)
		}
	}
	stopCapture()
	out.WriteString(proc.String())
	text := out.String()
	for _, secret := range []string{cliFakeSecret, cliFakeToken} {
		for _, part := range []string{secret, secret[:12], secret[len(secret)-12:]} {
			if strings.Contains(text, part) {
				t.Errorf("credential fragment %q found in the CLI's output:\n%.2000s", part, text)
			}
		}
	}
	if ranImport == 0 {
		t.Fatalf("no import reached its failure path: the test proves nothing\n%.3000s", text)
	}
}

// procOutput is what the process itself printed while captured.
type procOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (p *procOutput) String() string { p.mu.Lock(); defer p.mu.Unlock(); return p.buf.String() }

// captureStdio redirects os.Stdout and os.Stderr (a library printing on its own) until stop is called.
// The test must not run in parallel with others.
func captureStdio(t *testing.T) (*procOutput, func()) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = w, w
	p := &procOutput{}
	var copied sync.WaitGroup
	copied.Go(func() {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			p.mu.Lock()
			p.buf.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			os.Stdout, os.Stderr = oldOut, oldErr
			w.Close()
			copied.Wait()
			r.Close()
		})
	}
	t.Cleanup(stop)
	return p, stop
}
