package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/brine-kv/brine/client"
)

// inputFormat reads one of the import formats and writes failed records back in the same format, so a
// failure report can be imported again as it is.
type inputFormat string

const (
	formatCSV   inputFormat = "csv"
	formatTSV   inputFormat = "tsv"
	formatJSONL inputFormat = "jsonl"
)

func parseFormat(name, path string) (inputFormat, error) {
	if name == "" {
		switch {
		case strings.HasSuffix(path, ".tsv"):
			name = "tsv"
		case strings.HasSuffix(path, ".jsonl"), strings.HasSuffix(path, ".ndjson"), strings.HasSuffix(path, ".json"):
			name = "jsonl"
		default:
			name = "csv"
		}
	}
	switch f := inputFormat(strings.ToLower(name)); f {
	case formatCSV, formatTSV, formatJSONL, formatCells:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want csv, tsv, jsonl or cells)", name)
}

// hasHeader says whether the format is CSV or TSV, whose first line names the columns; the others
// are lines of JSON.
func (f inputFormat) hasHeader() bool { return f == formatCSV || f == formatTSV }

// record is one input row: named string fields, plus what is needed to write it back verbatim.
type record struct {
	header []byte            // CSV/TSV: the input's header line as read (shared by all records)
	line   int64             // 1-based line (CSV: record) number in the input
	fields map[string]string // column name -> value
	raw    []string          // CSV/TSV: the record's fields as parsed
	input  []byte            // the record's bytes exactly as read (CSV/TSV: with its line end; JSONL: trimmed)
	// mutation is the row of a cells-format record: its key and cells as they were scanned.
	mutation *client.Mutation
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

// readRecords streams the records of r. A record that cannot be parsed is yielded with its error (and
// whatever of it could be kept), so the import reports it and goes on with the next one.
func readRecords(r io.Reader, format inputFormat) (header []string, records iter.Seq2[record, error], err error) {
	switch format {
	case formatJSONL:
		return nil, readJSONL(r), nil
	case formatCells:
		return nil, readCells(r), nil
	}
	// The failure report must hold a failed record byte for byte as it was read (an unparsable one
	// too, and quoted line ends unchanged), so the reader keeps what csv.Reader consumed and each
	// record takes its slice, by InputOffset, of that.
	tap := &inputTap{r: r}
	cr := csv.NewReader(tap)
	if format == formatTSV {
		cr.Comma = '\t'
		cr.LazyQuotes = true
	}
	cr.ReuseRecord = false
	cr.FieldsPerRecord = -1 // checked here, so a short row fails alone with a clear message
	header, err = cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, fmt.Errorf("the input is empty: %s input starts with a header line naming its columns, then one row per line", strings.ToUpper(string(format)))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading header: %w", err)
	}
	headerInput := tap.take(cr.InputOffset())
	if len(header) > 0 {
		header[0] = strings.TrimPrefix(header[0], "\ufeff")
	}
	seen := make(map[string]bool, len(header))
	for _, h := range header {
		if h == "" || seen[h] {
			return nil, nil, fmt.Errorf("header: empty or duplicate column name %q", h)
		}
		seen[h] = true
	}
	return header, func(yield func(record, error) bool) {
		for n := int64(2); ; n++ {
			fields, err := cr.Read()
			if err == io.EOF {
				return
			}
			rec := record{line: n, raw: fields, input: tap.take(cr.InputOffset()), header: headerInput}
			if len(fields) > 0 { // FieldPos panics when Read returned no record (a parse error)
				if line, _ := cr.FieldPos(0); line > 0 {
					rec.line = int64(line)
				}
			}
			if err != nil {
				// csv.Reader recovers at the next line for field-level errors; a broken stream ends.
				if !yield(rec, lineErr(rec.line, err)) {
					return
				}
				var pe *csv.ParseError
				if !asParseError(err, &pe) {
					return
				}
				continue
			}
			if len(fields) != len(header) {
				if !yield(rec, lineErr(rec.line, fmt.Errorf("%d fields, header has %d", len(fields), len(header)))) {
					return
				}
				continue
			}
			rec.fields = make(map[string]string, len(header))
			for i, h := range header {
				rec.fields[h] = fields[i]
			}
			if !yield(rec, nil) {
				return
			}
		}
	}, nil
}

func asParseError(err error, pe **csv.ParseError) bool {
	p, ok := err.(*csv.ParseError)
	if ok {
		*pe = p
	}
	return ok
}

// readLines yields a record for each non-blank line of r (its bytes trimmed, its 1-based number)
// as parse fills it, with parse's error for a line that fails alone; a read error ends the input.
func readLines(r io.Reader, parse func(rec *record, line []byte) error) iter.Seq2[record, error] {
	return func(yield func(record, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		for n := int64(1); ; n++ {
			line, err := br.ReadBytes('\n')
			if len(line) == 0 && err != nil {
				if err != io.EOF {
					yield(record{line: n}, lineErr(n, err))
				}
				return
			}
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) == 0 {
				continue
			}
			rec := record{line: n, input: append([]byte(nil), trimmed...)}
			perr := parse(&rec, trimmed)
			if perr != nil {
				perr = lineErr(n, perr)
			}
			if !yield(rec, perr) || err != nil {
				return
			}
		}
	}
}

func readJSONL(r io.Reader) iter.Seq2[record, error] {
	return readLines(r, parseJSONLine)
}

// parseJSONLine reads one JSONL line into rec's fields.
func parseJSONLine(rec *record, line []byte) error {
	// encoding/json would quietly turn invalid UTF-8 into U+FFFD, storing something that is not what
	// the input says.
	if !utf8.Valid(line) {
		return errors.New("invalid UTF-8")
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	rec.fields = make(map[string]string, len(obj))
	var ferr error
	for k, v := range obj {
		s, err := jsonScalar(v)
		if err != nil && ferr == nil {
			ferr = fmt.Errorf("field %q: %w", k, err)
		}
		rec.fields[k] = s
	}
	return ferr
}

// jsonScalar turns a JSON value into the string a cell stores; nested values keep their JSON text.
func jsonScalar(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		if !utf8.ValidString(x) {
			return "", fmt.Errorf("invalid UTF-8")
		}
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	default:
		b, err := json.Marshal(x)
		return string(b), err
	}
}

// inputTap remembers the bytes a csv.Reader has pulled from r until take hands them out by offset.
// It holds at most the reader's read-ahead plus one record.
type inputTap struct {
	r    io.Reader
	buf  []byte
	base int64 // input offset of buf[0]
}

func (t *inputTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.buf = append(t.buf, p[:n]...)
	return n, err
}

// take returns the input from the previous take up to offset end, and forgets it.
func (t *inputTap) take(end int64) []byte {
	n := int(end - t.base)
	if n <= 0 {
		return nil
	}
	n = min(n, len(t.buf))
	out := append([]byte(nil), t.buf[:n]...)
	t.buf = append(t.buf[:0], t.buf[n:]...)
	t.base += int64(n)
	return out
}

// failureWriter writes failed records exactly as they were read, so the report is an input of the
// same format (a CSV/TSV report starts with the input's header line) and can be imported again as it is.
type failureWriter struct {
	format inputFormat
	w      *bufio.Writer
	header []byte
	wrote  bool
	last   []byte // the input's unterminated last record, written by flush
}

func newFailureWriter(w io.Writer, format inputFormat, header []string) *failureWriter {
	fw := &failureWriter{format: format, w: bufio.NewWriter(w)}
	if format.hasHeader() && len(header) > 0 {
		// Replaced by the header's own bytes when the first record brings them.
		var b bytes.Buffer
		cw := csv.NewWriter(&b)
		if format == formatTSV {
			cw.Comma = '\t'
		}
		_ = cw.Write(header)
		cw.Flush()
		fw.header = b.Bytes()
	}
	return fw
}

func (fw *failureWriter) write(rec record) error {
	if fw.format.hasHeader() && !fw.wrote {
		if rec.header != nil {
			fw.header = rec.header
		}
		if err := fw.writeLine(fw.header); err != nil {
			return err
		}
		fw.wrote = true
	}
	if fw.format.hasHeader() && !bytes.HasSuffix(rec.input, []byte("\n")) && len(rec.input) > 0 {
		// The input's last record, cut by the end of the file: a line end added to it could land
		// inside an open quote and change it, so it goes last in the report, as it was in the input.
		fw.last = rec.input
		return nil
	}
	return fw.writeLine(rec.input)
}

// writeLine writes b and, if b does not end one, a line end.
func (fw *failureWriter) writeLine(b []byte) error {
	if _, err := fw.w.Write(b); err != nil {
		return err
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return fw.w.WriteByte('\n')
	}
	return nil
}

func (fw *failureWriter) flush() error {
	if fw.last != nil {
		if _, err := fw.w.Write(fw.last); err != nil {
			return err
		}
		fw.last = nil
	}
	return fw.w.Flush()
}

// lineError names the input line of a record that could not be read or converted, so that the error
// log can say where the record is without repeating what the layers between add.
type lineError struct {
	line int64
	err  error
}

func lineErr(line int64, err error) error { return &lineError{line: line, err: err} }

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.line, e.err) }
func (e *lineError) Unwrap() error { return e.err }

// describeFailure is the error log's line for a failed record: the record's own error when it has
// one, else the write error, prefixed with the line.
func describeFailure(line int64, err error) string {
	var le *lineError
	if errors.As(err, &le) {
		return le.Error()
	}
	return fmt.Sprintf("line %d: %v", line, err)
}
