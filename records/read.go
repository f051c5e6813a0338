// Package records reads and writes the record formats of brine's import and export: CSV and TSV
// (a header line naming the columns, then one row per line), JSON Lines (one object per line), and
// cells (scan --format cells: a row's key bytes and every cell with its family, qualifier, timestamp
// and value, so any bytes and versions survive). A record that cannot be read is yielded with its
// error, naming its line, and the reader goes on; FailureWriter writes failed records back byte for
// byte, so a failure report is an input of the same format, to be fixed and imported again.
package records

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
	"unicode/utf8"

	"github.com/brine-kv/brine/client"
)

// Format is one of the record formats; failed records are written back in the same format, so a
// failure report can be imported again as it is.
type Format string

// The formats.
const (
	CSV   Format = "csv"
	TSV   Format = "tsv"
	JSONL Format = "jsonl"
	// Cells is scan --format cells read back: one JSON object a line, the key's bytes (raw, base64)
	// and every cell with its family, qualifier, timestamp and value (base64), so cells of several
	// families and timestamps, and any bytes, import as they were scanned.
	Cells Format = "cells"
)

// ParseFormat is the format named name, or, for an empty name, the one path's extension says (.tsv,
// .jsonl, .ndjson, .json; else CSV).
func ParseFormat(name, path string) (Format, error) {
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
	switch f := Format(strings.ToLower(name)); f {
	case CSV, TSV, JSONL, Cells:
		return f, nil
	}
	return "", fmt.Errorf("unknown format %q (want csv, tsv, jsonl or cells)", name)
}

// HasHeader says whether the format is CSV or TSV, whose first line names the columns; the others
// are lines of JSON.
func (f Format) HasHeader() bool { return f == CSV || f == TSV }

// Record is one input row: named string fields, plus what is needed to write it back verbatim.
type Record struct {
	Header []byte            // CSV/TSV: the input's header line as read (shared by all records)
	Line   int64             // 1-based line (CSV: record) number in the input
	Fields map[string]string // column name -> value
	Raw    []string          // CSV/TSV: the record's fields as parsed
	Input  []byte            // the record's bytes exactly as read (CSV/TSV: with its line end; JSONL: trimmed)
	// Mutation is the row of a cells-format record: its key and cells as they were scanned.
	Mutation *client.Mutation
}

// Read streams the records of r, and returns the header of a CSV or TSV input. A record that cannot
// be parsed is yielded with its error, a LineError (and whatever of it could be kept), so the import
// reports it and goes on with the next one.
func Read(r io.Reader, format Format) (header []string, records iter.Seq2[Record, error], err error) {
	switch format {
	case JSONL:
		return nil, readJSONL(r), nil
	case Cells:
		return nil, readCells(r), nil
	}
	// The failure report must hold a failed record byte for byte as it was read (an unparsable one
	// too, and quoted line ends unchanged), so the reader keeps what csv.Reader consumed and each
	// record takes its slice, by InputOffset, of that.
	tap := &inputTap{r: r}
	cr := csv.NewReader(tap)
	if format == TSV {
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
	return header, func(yield func(Record, error) bool) {
		for n := int64(2); ; n++ {
			fields, err := cr.Read()
			if err == io.EOF {
				return
			}
			rec := Record{Line: n, Raw: fields, Input: tap.take(cr.InputOffset()), Header: headerInput}
			if len(fields) > 0 { // FieldPos panics when Read returned no record (a parse error)
				if line, _ := cr.FieldPos(0); line > 0 {
					rec.Line = int64(line)
				}
			}
			if err != nil {
				// csv.Reader recovers at the next line for field-level errors; a broken stream ends.
				if !yield(rec, LineErr(rec.Line, err)) {
					return
				}
				var pe *csv.ParseError
				if !asParseError(err, &pe) {
					return
				}
				continue
			}
			if len(fields) != len(header) {
				if !yield(rec, LineErr(rec.Line, fmt.Errorf("%d fields, header has %d", len(fields), len(header)))) {
					return
				}
				continue
			}
			rec.Fields = make(map[string]string, len(header))
			for i, h := range header {
				rec.Fields[h] = fields[i]
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
func readLines(r io.Reader, parse func(rec *Record, line []byte) error) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		for n := int64(1); ; n++ {
			line, err := br.ReadBytes('\n')
			if len(line) == 0 && err != nil {
				if err != io.EOF {
					yield(Record{Line: n}, LineErr(n, err))
				}
				return
			}
			trimmed := bytes.TrimSpace(line)
			if len(trimmed) == 0 {
				continue
			}
			rec := Record{Line: n, Input: append([]byte(nil), trimmed...)}
			perr := parse(&rec, trimmed)
			if perr != nil {
				perr = LineErr(n, perr)
			}
			if !yield(rec, perr) || err != nil {
				return
			}
		}
	}
}

func readJSONL(r io.Reader) iter.Seq2[Record, error] {
	return readLines(r, parseJSONLine)
}

// parseJSONLine reads one JSONL line into rec's fields.
func parseJSONLine(rec *Record, line []byte) error {
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
	rec.Fields = make(map[string]string, len(obj))
	var ferr error
	for k, v := range obj {
		s, err := jsonScalar(v)
		if err != nil && ferr == nil {
			ferr = fmt.Errorf("field %q: %w", k, err)
		}
		rec.Fields[k] = s
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

// LineError names the input line of a record that could not be read or converted, so that the error
// log can say where the record is without repeating what the layers between add.
type LineError struct {
	Line int64
	Err  error
}

// LineErr is err on the record of line.
func LineErr(line int64, err error) error { return &LineError{Line: line, Err: err} }

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// DescribeFailure is the error log's line for a failed record: the record's own error (a LineError)
// when it has one, else err, prefixed with the line.
func DescribeFailure(line int64, err error) string {
	var le *LineError
	if errors.As(err, &le) {
		return le.Error()
	}
	return fmt.Sprintf("line %d: %v", line, err)
}
