package main

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/periods"
	"github.com/brine-kv/brine/records"
)

// exportTSColumn is the column an export gives each row's cell timestamp (ms), which
// `brine import --ts-column _ts` stores the cells with again.
const exportTSColumn = "_ts"

// The export formats: jsonl and csv write rows as `brine import` reads them (the key's fields by
// the schema's names, a column per qualifier, the timestamp in _ts), so an export imports back; cells
// writes every cell losslessly (base64 values, raw keys) for rows import cannot express.
var exportFormats = []string{"jsonl", "csv", "cells"}

// exportPeriod streams one period's rows to DIR/TABLE.FORMAT (written under a temporary name and
// renamed once synced, so a file with the final name is always whole) and prints its row count and
// SHA-256.
func exportPeriod(ctx context.Context, env *cliEnv, p *periods.Table, info periods.Info, dir, format string, kf keyFormat) error {
	t, err := p.PeriodTable(info.Table)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ext := format
	if format == "cells" {
		ext = "cells.jsonl"
	}
	path := filepath.Join(dir, info.Table+"."+ext)
	f, err := os.CreateTemp(dir, info.Table+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename there is nothing left to remove
	defer f.Close()
	sum := sha256.New()
	w := io.MultiWriter(f, sum)
	var put func(row client.Row) error
	switch format {
	case "cells":
		put = records.CellsWriter(w, kf.format)
	default:
		if kf.schema == nil {
			return fmt.Errorf("--format %s writes keys by the table's key schema, and %s stores none: use --format cells", format, p.Name())
		}
		put = rowsWriter(w, format, kf)
	}
	rows := 0
	for row, err := range t.Scan(ctx, client.Range{}) {
		if err != nil {
			return err
		}
		if err := put(row); err != nil {
			return fmt.Errorf("row %s: %w", kf.format(row.Key), err)
		}
		rows++
	}
	if err := put(client.Row{}); err != nil { // flush
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "exported %s to %s: %d rows, sha256 %s\n", info.Table, path, rows, hex.EncodeToString(sum.Sum(nil)))
	return nil
}

// rowsWriter writes rows in an import format; a zero Row flushes. A row it cannot write so that
// import reads it back equal fails the export, naming --format cells.
func rowsWriter(w io.Writer, format string, kf keyFormat) func(client.Row) error {
	fields := kf.schema.Fields()
	var header []string // CSV: the first row's columns, which every row must have
	cw := csv.NewWriter(w)
	enc := json.NewEncoder(w)
	return func(row client.Row) error {
		if row.Key == nil {
			cw.Flush()
			return cw.Error()
		}
		texts, err := kf.schema.Texts(row.Key)
		if err != nil {
			return fmt.Errorf("%w (use --format cells)", err)
		}
		cols := make(map[string]string, len(fields)+len(row.Cells)+1)
		for i, fld := range fields {
			cols[fld.Name] = texts[i]
		}
		var ts int64
		for i, c := range row.Cells {
			_, clash := cols[c.Qualifier]
			switch {
			case c.Family != row.Cells[0].Family:
				return fmt.Errorf("cells in families %s and %s: an import writes one (use --format cells)", row.Cells[0].Family, c.Family)
			case clash || c.Qualifier == exportTSColumn:
				return fmt.Errorf("qualifier %q is also a key field or %s (use --format cells)", c.Qualifier, exportTSColumn)
			case i > 0 && c.Timestamp != ts:
				return fmt.Errorf("cells with different timestamps: an import stamps a row's cells alike (use --format cells)")
			case !utf8.Valid(c.Value):
				return fmt.Errorf("%s:%s is not UTF-8 text (use --format cells)", c.Family, c.Qualifier)
			}
			ts = c.Timestamp
			cols[c.Qualifier] = string(c.Value)
		}
		cols[exportTSColumn] = strconv.FormatInt(ts, 10)
		if format == "jsonl" {
			return enc.Encode(cols)
		}
		names := make([]string, 0, len(cols))
		for name := range cols {
			names = append(names, name)
		}
		slices.Sort(names)
		if header == nil {
			header = names
			if err := cw.Write(header); err != nil {
				return err
			}
		} else if !slices.Equal(header, names) {
			return fmt.Errorf("columns %v, the first row's are %v: a CSV row holds every column (use --format jsonl)", names, header)
		}
		rec := make([]string, len(names))
		for i, name := range names {
			rec[i] = cols[name]
		}
		return cw.Write(rec)
	}
}
