package main

import (
	"context"
	"errors"
	"flag"
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
	"github.com/brine-kv/brine/records"
	"github.com/brine-kv/brine/salting"
)

type importFlags struct {
	storeFlags
	salt        string
	key         string
	format      string
	family      string
	columns     string
	tsColumn    string
	failedPath  string
	onDuplicate string
	workers     int
	batchRows   int
	dryRun      bool
	create      bool
	exclusive   bool
	resume      bool
	bulk        bulkFlags
	metrics     metricsFlags
}

func runImport(ctx context.Context, env *cliEnv, args []string) (err error) {
	fs := newFlagSet(env, "import")
	var f importFlags
	f.register(fs)
	f.metrics.register(fs)
	f.bulk.register(fs)
	fs.StringVar(&f.salt, "salt", "", "salting spec; required with -create, else checked against the table's (empty: adopt it)")
	fs.StringVar(&f.key, "key", "", "row key columns through the key codec, e.g. 'hostname,event,ts:int64:desc' (default: the table's stored schema; required with --create)")
	fs.StringVar(&f.format, "format", "", "csv, tsv, jsonl, or cells as scan --format cells writes them (default: from the file name, else csv)")
	fs.StringVar(&f.family, "family", client.DefaultFamily, "column family of the imported cells")
	fs.StringVar(&f.columns, "columns", "", "comma-separated columns to store (default: all but the key columns)")
	fs.StringVar(&f.tsColumn, "ts-column", "", "column holding each row's cell timestamp in ms (default: the import's start time)")
	fs.StringVar(&f.failedPath, "failed", "", "where failed rows go, in the input's format (default: FILE.failed.EXT)")
	fs.StringVar(&f.onDuplicate, "on-duplicate", "last", "a key seen before in the input: last (the last occurrence wins) or error (refuse the row)")
	fs.IntVar(&f.workers, "workers", client.DefaultImportWorkers, "parallel batch writers")
	fs.IntVar(&f.batchRows, "batch", client.DefaultBatchRows, "rows per batch")
	fs.BoolVar(&f.dryRun, "dry-run", false, "only analyze how the keys would spread; write nothing")
	fs.BoolVar(&f.create, "create", false, "create the table first (an existing table with the same salt is used as it is)")
	ex, re := registerExclusive(fs)
	pos, err := f.parse(env, fs, args)
	if err != nil {
		return err
	}
	f.exclusive, f.resume = *ex, *re
	if len(pos) != 1 {
		return errors.New("usage: brine import --table T [--key COLS] [--bulk --staging DIR] [flags] FILE (- for stdin)")
	}
	if err := f.bulk.check(f.store, f.exclusive, f.resume); err != nil {
		return err
	}
	if f.workers <= 0 || f.batchRows <= 0 {
		return fmt.Errorf("--workers and --batch must be positive (got %d, %d)", f.workers, f.batchRows)
	}
	policy, err := client.ParseDuplicatePolicy(f.onDuplicate)
	if err != nil {
		return fmt.Errorf("--on-duplicate: %w", err)
	}
	schema, err := f.keySchema(ctx, env)
	if err != nil {
		return err
	}
	path := pos[0]
	format, err := records.ParseFormat(f.format, path)
	if err != nil {
		return err
	}
	if format == records.Cells && (f.tsColumn != "" || f.columns != "" || f.family != client.DefaultFamily) {
		return errors.New("--format cells holds each cell's family, qualifier and timestamp: --family, --columns and --ts-column do not apply")
	}
	in, size, closeIn, err := openInput(env, path)
	if err != nil {
		return err
	}
	defer closeIn()
	if env.watchInput != nil {
		in = env.watchInput(in)
	}
	var consumed int64
	header, recs, err := records.Read(countingReader{in, &consumed}, format)
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
		return dryRun(env, recs, conv, f.salt, policy)
	}

	mr, err := f.metrics.start(env, f.store)
	if err != nil {
		return err
	}
	before := env.clientOptions
	env.clientOptions = append(slices.Clip(before), mr.opts...)
	defer func() {
		env.clientOptions = before
		if serr := mr.stop(context.Background()); serr != nil && err == nil {
			err = serr
		}
	}()
	c, t, err := f.openOrCreate(ctx, env, schema)
	if err != nil {
		return err
	}
	defer c.Close()
	importRows := t.Import
	if f.exclusive || f.resume {
		x, err := f.fence(ctx, env, t)
		if err != nil {
			return err
		}
		importRows = x.Import
		defer func() {
			if rerr := releaseFence(ctx, env, x); err == nil {
				err = rerr
			}
		}()
	}

	failedPath := f.failedPath
	if failedPath == "" {
		failedPath = failedName(path, format)
	}
	report, err := os.Create(failedPath)
	if err != nil {
		return fmt.Errorf("failure report: %w", err)
	}
	fw := records.NewFailureWriter(report, format, header)
	errLog, err := os.Create(failedPath + ".errors")
	if err != nil {
		report.Close()
		return fmt.Errorf("failure report: %w", err)
	}
	var reportErr error
	keep := func(werr error) {
		if werr != nil && reportErr == nil {
			reportErr = werr
		}
	}

	// The records are pulled, not ranged over, so that after an interrupt the rows the import never
	// read can still be taken from the same reader and put in the report.
	next, stopRecs := iter.Pull2(recs)
	defer stopRecs()
	var lastLine int64
	pulled := func(yield func(records.Record, error) bool) {
		for {
			rec, err, ok := next()
			if !ok {
				return
			}
			lastLine = rec.Line
			if !yield(rec, err) {
				return
			}
		}
	}

	prog := newProgress(env.stderr, size, &consumed)
	stats, err := importRows(ctx, conv.rows(pulled), client.ImportOptions{
		Workers:     f.workers,
		BatchRows:   f.batchRows,
		OnDuplicate: policy,
		OnFailure: func(fr client.FailedRow) {
			rec, _ := fr.Row.Source.(records.Record)
			keep(fw.Write(rec))
			fmt.Fprintln(errLog, records.DescribeFailure(rec.Line, keyFormat{schema: schema}.keyErr(fr.Row.Key, fr.Err)))
		},
		Progress: prog.update,
		Bulk:     f.bulk.options(),
	})
	prog.finish()
	interrupted := ctx.Err() != nil
	// A bulk load that stopped as a whole reports no rows one by one: the same command resumes it.
	stopped := f.bulk.bulk && err != nil && !errors.Is(err, client.ErrRowsFailed) && !errors.Is(err, client.ErrUnsupported)
	var unread int64
	if interrupted && path != "-" && !stopped {
		// The rest of a file is read to the end (no store is touched) and added to the report, so the
		// report alone holds every row that is not known to be stored: one command resumes.
		for {
			rec, _, ok := next()
			if !ok {
				break
			}
			unread++
			keep(fw.Write(rec))
		}
	}
	keep(fw.Flush())
	for _, cl := range []io.Closer{report, errLog} {
		keep(cl.Close())
	}
	fmt.Fprintf(env.stdout, "read %d, written %d, failed %d, duplicate keys %d, retried %d, %d batches, %d bytes in %v (%.0f rows/s)\n",
		stats.Read, stats.Written, stats.Failed, stats.Duplicates, stats.Retried, stats.Batches, stats.Bytes,
		stats.Elapsed.Round(time.Millisecond), stats.RowsPerSecond())
	if stats.Duplicates > 0 && policy == client.DuplicateLast {
		fmt.Fprintf(env.stdout, "%d rows repeated an earlier row's key: the last occurrence of each key is stored (--on-duplicate error refuses them)\n", stats.Duplicates)
	}
	if reportErr != nil {
		return fmt.Errorf("writing the failure report %s: %w", failedPath, reportErr)
	}
	resume := f.resumeCommand(fs, failedPath)
	if stats.Duplicates > 0 && stats.Failed > 0 && policy == client.DuplicateLast {
		// The report holds failed rows in the order they failed, and not the occurrences of their keys
		// that were written: imported alone it could bring back an earlier value.
		fmt.Fprintf(env.stdout, "note: the input repeats keys and rows failed; for the last occurrence of every key to win, re-import the whole input (re-importing is idempotent) rather than the report alone\n")
	}
	switch {
	case stopped:
		fmt.Fprintf(env.stdout, "bulk load stopped (what was loaded stays); %s keeps its work: run the same command again, with the same input, to finish it\n", f.bulk.staging)
		if interrupted {
			return &exitError{code: exitInterrupted, err: fmt.Errorf("bulk import interrupted: %w", err)}
		}
		return err
	case interrupted && path == "-":
		fmt.Fprintf(env.stdout, "interrupted at line %d; the rest of stdin was not read: feed it again from the record after line %d (with the header line for CSV/TSV)\n", lastLine, lastLine)
		if stats.Failed > 0 {
			fmt.Fprintf(env.stdout, "%d rows not confirmed are in %s; resume them with:\n  %s\n", stats.Failed, failedPath, resume)
		}
		return &exitError{code: exitInterrupted, err: fmt.Errorf("import interrupted: %w", ctx.Err())}
	case interrupted:
		fmt.Fprintf(env.stdout, "interrupted at line %d; %d rows not read\n", lastLine, unread)
		fmt.Fprintf(env.stdout, "the %d rows not read and the %d not confirmed are in %s; resume with:\n  %s\n", unread, stats.Failed, failedPath, resume)
		return &exitError{code: exitInterrupted, err: fmt.Errorf("import interrupted: %w", ctx.Err())}
	case stats.Failed > 0:
		fmt.Fprintf(env.stdout, "failed rows: %s (errors: %s.errors); once fixed, import them with:\n  %s\n", failedPath, failedPath, resume)
	default:
		_ = os.Remove(failedPath)
		_ = os.Remove(failedPath + ".errors")
	}
	if err == nil && stats.Read == 0 {
		return fmt.Errorf("%s holds no rows", path)
	}
	return err
}

// resumeCommand is the command that imports the failure report into the same table: the flags given,
// without the ones that only made sense the first time (--create, --failed).
func (f *importFlags) resumeCommand(fs *flag.FlagSet, report string) string {
	return commandLine(fs, "brine import", []string{"create", "failed", "dry-run"}, report)
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

func failedName(path string, format records.Format) string {
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

func (rc rowConverter) key(rec records.Record) ([]byte, error) {
	if rec.Mutation != nil {
		return rec.Mutation.Key, nil
	}
	fields := rc.schema.Fields()
	text := make([]string, len(fields))
	for i, fld := range fields {
		v, ok := rec.Fields[fld.Name]
		if !ok {
			return nil, records.LineErr(rec.Line, fmt.Errorf("key column %q missing", fld.Name))
		}
		text[i] = v
	}
	vals, err := rc.schema.ParseValues(text...)
	if err != nil {
		return nil, records.LineErr(rec.Line, err)
	}
	k, err := rc.schema.Encode(vals...)
	if err != nil {
		return nil, records.LineErr(rec.Line, err)
	}
	return k, nil
}

func (rc rowConverter) row(rec records.Record) (client.ImportRow, error) {
	row := client.ImportRow{Source: rec}
	if rec.Mutation != nil { // the cells format: key and cells as scanned
		row.Mutation = *rec.Mutation
		return row, nil
	}
	k, err := rc.key(rec)
	if err != nil {
		return row, err
	}
	row.Key = k
	var ts int64
	if rc.tsColumn != "" {
		ts, err = strconv.ParseInt(rec.Fields[rc.tsColumn], 10, 64)
		if err != nil || ts <= 0 {
			return row, records.LineErr(rec.Line, fmt.Errorf("timestamp column %q: want positive milliseconds, got %q", rc.tsColumn, rec.Fields[rc.tsColumn]))
		}
	}
	cols := rc.columns
	if cols == nil {
		for name := range rec.Fields {
			if !rc.isKeyColumn(name) {
				cols = append(cols, name)
			}
		}
		slices.Sort(cols)
	}
	for _, name := range cols {
		v, ok := rec.Fields[name]
		if !ok {
			continue
		}
		row.Cells = append(row.Cells, client.Cell{Family: rc.family, Qualifier: name, Value: []byte(v), Timestamp: ts})
	}
	if len(row.Cells) == 0 {
		return row, records.LineErr(rec.Line, errors.New("no value columns to store"))
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

// rows converts a records.Record stream into import rows; records that fail to parse or convert are passed on
// with their error so the import reports them in place.
func (rc rowConverter) rows(recs iter.Seq2[records.Record, error]) iter.Seq2[client.ImportRow, error] {
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

func dryRun(env *cliEnv, recs iter.Seq2[records.Record, error], conv rowConverter, spec string, policy client.DuplicatePolicy) error {
	if spec == "" {
		spec = "hash:16"
	}
	s, err := salting.ParseSpec(spec)
	if err != nil {
		return err
	}
	var ks [][]byte
	seen := map[string]bool{}
	bad, dups := 0, 0
	for rec, err := range recs {
		if err == nil {
			var k []byte
			if k, err = conv.key(rec); err == nil {
				if seen[string(k)] {
					dups++
					if policy == client.DuplicateError {
						err = records.LineErr(rec.Line, fmt.Errorf("key %s: %w", printable(k), client.ErrDuplicateKey))
					}
				}
				seen[string(k)] = true
			}
			if err == nil {
				ks = append(ks, k)
				continue
			}
		}
		bad++
		if bad <= 10 {
			fmt.Fprintln(env.stderr, "rejected:", err)
		}
	}
	if len(ks) > 0 {
		a, err := analyzeKeys(ks, s, 0)
		if err != nil {
			return err
		}
		a.print(env.stdout)
	}
	fmt.Fprintf(env.stdout, "\ndry run: %d rows would be written, %d rejected, %d repeat an earlier row's key; nothing was written\n", len(ks), bad, dups)
	if dups > 0 && policy == client.DuplicateLast {
		fmt.Fprintln(env.stdout, "the last occurrence of a repeated key would be stored (--on-duplicate error refuses repeats)")
	}
	if bad > 0 {
		// Non-zero, so a script that checks the input first stops before the real import.
		return fmt.Errorf("dry run: %d rows would be rejected", bad)
	}
	return nil
}

// countingReader counts bytes read, for progress and ETA on inputs of known size; the progress
// reporter reads the count from another goroutine.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	atomic.AddInt64(c.n, int64(n))
	return n, err
}
