package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
)

// indexFlag is --index on get and scan: read by an index instead of the row key; --columns picks
// the columns printed (only covered ones: answered from the index alone).
type indexFlag struct {
	name    string
	columns string
}

func (f *indexFlag) register(fs *flag.FlagSet, scan bool) {
	fs.StringVar(&f.name, "index", "", "read by this index: key arguments are the index's values, comma-separated, one per part (a key field part typed by the key schema, a column part as text)")
	if scan {
		fs.StringVar(&f.columns, "columns", "", "with --index: print only these columns, FAMILY:QUALIFIER,... (only covered ones: answered from the index alone)")
	}
}

// index returns the named index of the command's table.
func (f *indexFlag) index(tc *tableCommand) (*client.Index, error) {
	it, ok := tc.t.(*client.Table) // not a period table
	if !ok || len(it.Indexes()) == 0 {
		return nil, fmt.Errorf("table %s has no indexes", tc.table)
	}
	return it.Index(f.name)
}

// indexValues encodes comma-separated values (CSV quoting) for the leading parts of ix, as
// Index.Prefix takes them: a key field part by the table's key schema, a column part as its text.
func indexValues(ix *client.Index, schema *keys.Schema, s string) ([]byte, error) {
	text, err := csv.NewReader(strings.NewReader(s)).Read()
	if err != nil {
		return nil, fmt.Errorf("index %s values %q: want comma-separated values: %w", ix.Name(), s, err)
	}
	parts := ix.Config().Parts
	if len(text) > len(parts) {
		return nil, fmt.Errorf("index %s values %q: %d values, the index has %d parts", ix.Name(), s, len(text), len(parts))
	}
	vals := make([][]byte, len(text))
	for i, t := range text {
		p := parts[i]
		if p.Column.Family != "" {
			vals[i] = []byte(t)
			continue
		}
		if schema == nil || p.KeyField >= schema.Len() {
			return nil, fmt.Errorf("index %s part %d is key field %d: the table has no key schema with that field", ix.Name(), i, p.KeyField)
		}
		field, err := keys.NewSchema(schema.Fields()[p.KeyField])
		if err != nil {
			return nil, err
		}
		v, err := field.ParseValues(t)
		if err != nil {
			return nil, fmt.Errorf("index %s value %d: %w", ix.Name(), i, err)
		}
		if vals[i], err = field.Encode(v...); err != nil {
			return nil, fmt.Errorf("index %s value %d: %w", ix.Name(), i, err)
		}
	}
	return ix.Prefix(vals...)
}

// get prints the main row whose unique index key is values.
func (f *indexFlag) get(ctx context.Context, tc *tableCommand, values string, out rowOutput) error {
	ix, err := f.index(tc)
	if err != nil {
		return err
	}
	if !ix.Config().Unique {
		return fmt.Errorf("index %s is not unique: 'brine scan --index %s --prefix VALUES' lists its rows", ix.Name(), ix.Name())
	}
	k, err := indexValues(ix, tc.kf.schema, values)
	if err != nil {
		return err
	}
	row, err := ix.Get(ctx, k)
	if err != nil {
		return err
	}
	if err := out.put(row); err != nil {
		return err
	}
	return out.flush()
}

// indexScan is what scan --index reads: the range flags in the index's values.
type indexScan struct {
	start, end, prefix, after, filter string
	limit                             int
	reverse                           bool
	out                               rowOutput
}

// scan prints the main rows whose index keys lie in the range, in index order. The cursor it
// prints for the next page is the last entry's index key, in hex.
func (f *indexFlag) scan(ctx context.Context, env *cliEnv, tc *tableCommand, s indexScan) error {
	ix, err := f.index(tc)
	if err != nil {
		return err
	}
	var r client.Range
	switch {
	case s.prefix != "":
		p, err := indexValues(ix, tc.kf.schema, s.prefix)
		if err != nil {
			return err
		}
		r = client.PrefixRange(p)
	default:
		if s.start != "" {
			if r.Start, err = indexValues(ix, tc.kf.schema, s.start); err != nil {
				return fmt.Errorf("--start: %w", err)
			}
		}
		if s.end != "" {
			if r.End, err = indexValues(ix, tc.kf.schema, s.end); err != nil {
				return fmt.Errorf("--end: %w", err)
			}
		}
	}
	var opts []client.ReadOption
	var sf *scanFilter // as scan without --index plans it: numbers and times compared as such
	if s.filter != "" {
		flt, err := parseFilter(s.filter)
		if err != nil {
			return err
		}
		sf = newScanFilter(flt, tc.kf, tc.t.KeySchema())
		opts = append(opts, sf.options()...)
	}
	if f.columns != "" {
		var cols []client.Column
		for c := range strings.SplitSeq(f.columns, ",") {
			fam, q, ok := strings.Cut(c, ":")
			if !ok || fam == "" || q == "" {
				return fmt.Errorf("--columns: %q is not FAMILY:QUALIFIER", c)
			}
			cols = append(cols, client.Column{Family: fam, Qualifier: q})
		}
		opts = append(opts, client.Columns(cols...))
	}
	if s.limit > 0 && (sf == nil || !sf.local) {
		opts = append(opts, client.Limit(s.limit+1)) // one more: does a next page hold rows?
	}
	if s.reverse {
		opts = append(opts, client.Reverse())
	}
	query := queryID(tc.table, ix.Name(), r, s.reverse)
	if s.after != "" {
		k, err := parseCursor(s.after, query)
		if err != nil {
			return err
		}
		opts = append(opts, client.ResumeAfter(k))
	}
	began := time.Now()
	var n int
	var last []byte
	more := false
	for ir, err := range ix.Scan(ctx, r, opts...) {
		if err != nil {
			return err
		}
		if sf != nil {
			var ok bool
			if ir.Row, ok = sf.apply(ir.Row); !ok {
				continue
			}
		}
		if s.limit > 0 && n == s.limit {
			more = true
			break
		}
		n++
		last = ir.IndexKey
		if err := s.out.put(ir.Row); err != nil {
			return err
		}
	}
	if err := s.out.flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.stderr, "%d rows in %v", n, time.Since(began).Round(time.Microsecond))
	switch {
	case more:
		fmt.Fprintf(env.stderr, "; next page: --after %s", hex.EncodeToString(append(query[:], last...)))
	case s.limit > 0:
		fmt.Fprint(env.stderr, "; last page")
	}
	fmt.Fprintln(env.stderr)
	return nil
}

// queryID names a query by index (table, index, range, direction) in the cursors it prints, so that
// a cursor pasted into another query is refused instead of answering with another query's page.
func queryID(table, index string, r client.Range, reverse bool) [4]byte {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(table), []byte(index), r.Start, r.End} {
		h.Write(binary.AppendUvarint(nil, uint64(len(part))))
		h.Write(part)
	}
	if reverse {
		h.Write([]byte{1})
	}
	return [4]byte(h.Sum(nil))
}

// parseCursor reads an --after cursor of a query by index: the query's id, then the index key.
func parseCursor(text string, query [4]byte) ([]byte, error) {
	b, err := hex.DecodeString(text)
	if err != nil || len(b) <= len(query) {
		return nil, fmt.Errorf("--after %q: with --index, give the cursor a previous page of the same query printed (hex)", text)
	}
	if [4]byte(b) != query {
		return nil, fmt.Errorf("--after: this cursor is from another query (another table, index, range or direction): page with the query that printed it, or leave out --after to start this one")
	}
	return b[len(query):], nil
}
