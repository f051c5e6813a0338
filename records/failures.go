package records

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"io"
)

// FailureWriter writes failed records exactly as they were read, so the report is an input of the
// same format (a CSV/TSV report starts with the input's header line) and can be imported again as it is.
type FailureWriter struct {
	format Format
	w      *bufio.Writer
	header []byte
	wrote  bool
	last   []byte // the input's unterminated last record, written by flush
}

// NewFailureWriter writes the failed records of an input of format, whose header Read returned, to w.
func NewFailureWriter(w io.Writer, format Format, header []string) *FailureWriter {
	fw := &FailureWriter{format: format, w: bufio.NewWriter(w)}
	if format.HasHeader() && len(header) > 0 {
		// Replaced by the header's own bytes when the first record brings them.
		var b bytes.Buffer
		cw := csv.NewWriter(&b)
		if format == TSV {
			cw.Comma = '\t'
		}
		_ = cw.Write(header)
		cw.Flush()
		fw.header = b.Bytes()
	}
	return fw
}

// Write writes rec, after the header line first.
func (fw *FailureWriter) Write(rec Record) error {
	if fw.format.HasHeader() && !fw.wrote {
		if rec.Header != nil {
			fw.header = rec.Header
		}
		if err := fw.writeLine(fw.header); err != nil {
			return err
		}
		fw.wrote = true
	}
	if fw.format.HasHeader() && !bytes.HasSuffix(rec.Input, []byte("\n")) && len(rec.Input) > 0 {
		// The input's last record, cut by the end of the file: a line end added to it could land
		// inside an open quote and change it, so it goes last in the report, as it was in the input.
		fw.last = rec.Input
		return nil
	}
	return fw.writeLine(rec.Input)
}

// writeLine writes b and, if b does not end one, a line end.
func (fw *FailureWriter) writeLine(b []byte) error {
	if _, err := fw.w.Write(b); err != nil {
		return err
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return fw.w.WriteByte('\n')
	}
	return nil
}

// Flush writes what is buffered, the input's unterminated last record last.
func (fw *FailureWriter) Flush() error {
	if fw.last != nil {
		if _, err := fw.w.Write(fw.last); err != nil {
			return err
		}
		fw.last = nil
	}
	return fw.w.Flush()
}
