package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

type importFlags struct {
	storeFlags
	salt       string
	key        string
	format     string
	family     string
	columns    string
	tsColumn   string
	failedPath string
	workers    int
	batchRows  int
	dryRun     bool
	create     bool
}

func runImport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "import")
	var f importFlags
	f.register(fs)
	fs.StringVar(&f.salt, "salt", "", "salting spec; required with -create, else checked against the table's (empty: adopt it)")
	fs.StringVar(&f.key, "key", "", "row key columns through the key codec, e.g. 'hostname,event,ts:int64:desc' (required)")
	fs.StringVar(&f.format, "format", "", "csv, tsv or jsonl (default: from the file name, else csv)")
	fs.StringVar(&f.family, "family", client.DefaultFamily, "column family of the imported cells")
	fs.StringVar(&f.columns, "columns", "", "comma-separated columns to store (default: all but the key columns)")
	fs.StringVar(&f.tsColumn, "ts-column", "", "column holding each row's cell timestamp in ms (default: the import's start time)")
	fs.StringVar(&f.failedPath, "failed", "", "where failed rows go, in the input's format (default: FILE.failed.EXT)")
	fs.IntVar(&f.workers, "workers", client.DefaultImportWorkers, "parallel batch writers")
	fs.IntVar(&f.batchRows, "batch", client.DefaultBatchRows, "rows per batch")
	fs.BoolVar(&f.dryRun, "dry-run", false, "only analyze how the keys would spread; write nothing")
	fs.BoolVar(&f.create, "create", false, "create the table first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: brine import --table T --key COLS [flags] FILE (- for stdin)")
	}
	if f.key == "" {
		return errors.New("--key is required")
	}
	schema, err := keys.ParseSchema(f.key)
	if err != nil {
		return fmt.Errorf("--key: %w", err)
	}
	path := fs.Arg(0)
	format, err := parseFormat(f.format, path)
	if err != nil {
		return err
	}
	in, size, closeIn, err := openInput(env, path)
	if err != nil {
		return err
	}
	defer closeIn()
	var consumed int64
	header, recs, err := readRecords(countingReader{in, &consumed}, format)
	if err != nil {
		return err
	}
	if err := checkColumns(header, schema, f.tsColumn); err != nil {
		return err
	}
	conv := rowConverter{schema: schema, family: f.family, tsColumn: f.tsColumn}
	if f.columns != "" {
		conv.columns = strings.Split(f.columns, ",")
	}

	if f.dryRun {
		return dryRun(env, recs, conv, f.salt)
	}

	c, t, err := f.openOrCreate(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()

	failedPath := f.failedPath
	if failedPath == "" {
		failedPath = failedName(path, format)
	}
	report, err := os.Create(failedPath)
	if err != nil {
		return fmt.Errorf("failure report: %w", err)
	}
	fw := newFailureWriter(report, format, header)
	errLog, err := os.Create(failedPath + ".errors")
	if err != nil {
		report.Close()
		return fmt.Errorf("failure report: %w", err)
	}
	var reportErr error

	prog := newProgress(env.stderr, size, &consumed)
	stats, err := t.Import(ctx, conv.rows(recs), client.ImportOptions{
		Workers:   f.workers,
		BatchRows: f.batchRows,
		OnFailure: func(fr client.FailedRow) {
			rec, _ := fr.Row.Source.(record)
			if werr := fw.write(rec); werr != nil && reportErr == nil {
				reportErr = werr
			}
			fmt.Fprintln(errLog, describeFailure(rec.line, fr.Err))
		},
		Progress: prog.update,
	})
	prog.finish()
	if ferr := fw.flush(); ferr != nil && reportErr == nil {
		reportErr = ferr
	}
	for _, cl := range []io.Closer{report, errLog} {
		if cerr := cl.Close(); cerr != nil && reportErr == nil {
			reportErr = cerr
		}
	}
	fmt.Fprintf(env.stdout, "read %d, written %d, failed %d, retried %d, %d batches, %d bytes in %v (%.0f rows/s)\n",
		stats.Read, stats.Written, stats.Failed, stats.Retried, stats.Batches, stats.Bytes,
		stats.Elapsed.Round(time.Millisecond), stats.RowsPerSecond())
	if stats.Failed > 0 {
		fmt.Fprintf(env.stdout, "failed rows: %s (errors: %s.errors); re-import with the same flags\n", failedPath, failedPath)
	} else {
		_ = os.Remove(failedPath)
		_ = os.Remove(failedPath + ".errors")
	}
	if reportErr != nil {
		return fmt.Errorf("writing the failure report %s: %w", failedPath, reportErr)
	}
	return err
}

// openOrCreate opens (or, with -create, creates) the import's target table.
func (f *importFlags) openOrCreate(ctx context.Context, env *cliEnv) (*client.Client, *client.Table, error) {
	if !f.create {
		return f.openTable(ctx, env, f.salt)
	}
	if f.table == "" {
		return nil, nil, errors.New("--table is required")
	}
	if f.salt == "" {
		return nil, nil, errors.New("--salt is required with -create")
	}
	s, err := salting.ParseSpec(f.salt)
	if err != nil {
		return nil, nil, err
	}
	b, err := openStore(ctx, env, f.store)
	if err != nil {
		return nil, nil, err
	}
	c := client.New(b, client.WithLogger(env.logger))
	t, err := c.CreateTable(ctx, f.table, client.TableConfig{Salter: s, Families: []string{f.family}})
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, t, nil
}

func openInput(env *cliEnv, path string) (r io.Reader, size int64, closeFn func(), err error) {
	if path == "-" {
		return env.stdin, -1, func() {}, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	size = -1
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	return fh, size, func() { fh.Close() }, nil
}

func failedName(path string, format inputFormat) string {
	if path == "-" {
		return "stdin.failed." + string(format)
	}
	return path + ".failed." + string(format)
}

// checkColumns fails before anything is read when a key column cannot be in the input.
func checkColumns(header []string, schema *keys.Schema, tsColumn string) error {
	if header == nil {
		return nil // JSON Lines: columns are checked row by row
	}
	for _, fld := range schema.Fields() {
		if !slices.Contains(header, fld.Name) {
			return fmt.Errorf("key column %q is not in the header %v", fld.Name, header)
		}
	}
	if tsColumn != "" && !slices.Contains(header, tsColumn) {
		return fmt.Errorf("timestamp column %q is not in the header %v", tsColumn, header)
	}
	return nil
}

// rowConverter turns input records into rows: the key from the key columns through the codec, one
// cell per stored column.
type rowConverter struct {
	schema   *keys.Schema
	family   string
	columns  []string
	tsColumn string
}

func (rc rowConverter) key(rec record) ([]byte, error) {
	fields := rc.schema.Fields()
	text := make([]string, len(fields))
	for i, fld := range fields {
		v, ok := rec.fields[fld.Name]
		if !ok {
			return nil, lineErr(rec.line, fmt.Errorf("key column %q missing", fld.Name))
		}
		text[i] = v
	}
	vals, err := rc.schema.ParseValues(text...)
	if err != nil {
		return nil, lineErr(rec.line, err)
	}
	k, err := rc.schema.Encode(vals...)
	if err != nil {
		return nil, lineErr(rec.line, err)
	}
	return k, nil
}

func (rc rowConverter) row(rec record) (client.ImportRow, error) {
	row := client.ImportRow{Source: rec}
	k, err := rc.key(rec)
	if err != nil {
		return row, err
	}
	row.Key = k
	var ts int64
	if rc.tsColumn != "" {
		ts, err = strconv.ParseInt(rec.fields[rc.tsColumn], 10, 64)
		if err != nil || ts <= 0 {
			return row, lineErr(rec.line, fmt.Errorf("timestamp column %q: want positive milliseconds, got %q", rc.tsColumn, rec.fields[rc.tsColumn]))
		}
	}
	cols := rc.columns
	if cols == nil {
		for name := range rec.fields {
			if !rc.isKeyColumn(name) {
				cols = append(cols, name)
			}
		}
		slices.Sort(cols)
	}
	for _, name := range cols {
		v, ok := rec.fields[name]
		if !ok {
			continue
		}
		row.Cells = append(row.Cells, client.Cell{Family: rc.family, Qualifier: name, Value: []byte(v), Timestamp: ts})
	}
	if len(row.Cells) == 0 {
		return row, lineErr(rec.line, errors.New("no value columns to store"))
	}
	return row, nil
}

func (rc rowConverter) isKeyColumn(name string) bool {
	for _, f := range rc.schema.Fields() {
		if f.Name == name {
			return true
		}
	}
	return name == rc.tsColumn
}

// rows converts a record stream into import rows; records that fail to parse or convert are passed on
// with their error so the import reports them in place.
func (rc rowConverter) rows(recs iter.Seq2[record, error]) iter.Seq2[client.ImportRow, error] {
	return func(yield func(client.ImportRow, error) bool) {
		for rec, err := range recs {
			if err != nil {
				if !yield(client.ImportRow{Source: rec}, err) {
					return
				}
				continue
			}
			if !yield(rc.row(rec)) {
				return
			}
		}
	}
}

func dryRun(env *cliEnv, recs iter.Seq2[record, error], conv rowConverter, spec string) error {
	if spec == "" {
		spec = "hash:16"
	}
	s, err := salting.ParseSpec(spec)
	if err != nil {
		return err
	}
	var ks [][]byte
	bad := 0
	for rec, err := range recs {
		if err == nil {
			var k []byte
			if k, err = conv.key(rec); err == nil {
				ks = append(ks, k)
				continue
			}
		}
		bad++
		if bad <= 10 {
			fmt.Fprintln(env.stderr, "skipped:", err)
		}
	}
	if len(ks) == 0 {
		return fmt.Errorf("no valid keys (%d bad rows)", bad)
	}
	a, err := analyzeKeys(ks, s, 0)
	if err != nil {
		return err
	}
	a.print(env.stdout)
	fmt.Fprintf(env.stdout, "\ndry run: %d rows would be written, %d rejected; nothing was written\n", len(ks), bad)
	return nil
}

// progress shows an import's advance: a bar with rate and ETA on a terminal, a log line every few
// seconds otherwise (so CI logs stay readable).
type progress struct {
	w        io.Writer
	size     int64
	consumed *int64
	tty      bool
	lastLog  time.Time
	shown    atomic.Bool
}

func newProgress(w io.Writer, size int64, consumed *int64) *progress {
	p := &progress{w: w, size: size, consumed: consumed, lastLog: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(s client.ImportStats) {
	frac := -1.0
	if p.size > 0 {
		// The reader runs ahead of the writers by at most the pending batches; close enough for an ETA.
		frac = min(1, float64(atomic.LoadInt64(p.consumed))/float64(p.size))
	}
	if p.tty {
		p.shown.Store(true)
		line := fmt.Sprintf("%d rows, %.0f rows/s, %d failed", s.Written, s.RowsPerSecond(), s.Failed)
		if frac >= 0 {
			bar := int(frac * 30)
			eta := "?"
			if frac > 0 {
				eta = (time.Duration(float64(s.Elapsed) * (1 - frac) / frac)).Round(time.Second).String()
			}
			line = fmt.Sprintf("[%s%s] %3.0f%% %s, ETA %s", strings.Repeat("#", bar), strings.Repeat(".", 30-bar), 100*frac, line, eta)
		}
		fmt.Fprintf(p.w, "\r%-100s", line)
		return
	}
	if time.Since(p.lastLog) >= 5*time.Second {
		p.lastLog = time.Now()
		fmt.Fprintf(p.w, "import: %d written, %d failed, %.0f rows/s\n", s.Written, s.Failed, s.RowsPerSecond())
	}
}

func (p *progress) finish() {
	if p.shown.Load() {
		fmt.Fprintln(p.w)
	}
}
