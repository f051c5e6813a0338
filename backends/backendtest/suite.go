// Package backendtest is the conformance suite for backends.Backend and its optional interfaces, and
// the one statement of the row contract: every driver (memory, local, hbase, tablestore, and the
// faulty wrapper) runs the same tests, so that code written against one store behaves the same on the
// others. Every method of backends.Backend is tested on every driver, none skipped; the tests of an
// optional interface (backends.RegionLister, backends.Tuner) are skipped exactly on a driver that does
// not implement it, and they are the only tests skipped.
//
// A driver's test calls RunWithOptions with its key limit and a constructor:
//
//	func TestConformance(t *testing.T) {
//		backendtest.RunWithOptions(t, backendtest.Options{MaxKeyLen: memory.MaxKeyLen}, func(t *testing.T) backends.Backend {
//			b := memory.New()
//			t.Cleanup(func() { b.Close() })
//			return b
//		})
//	}
//
// The constructor is called once per subtest and must register the backend's Close with t.Cleanup.
// Every test that writes creates its own table with a unique name (Options.TablePrefix, the subtest
// name and random digits) and deletes it when done; the scan tests share one read-only table. Names
// use [A-Za-z0-9_] only, valid on HBase and Tablestore alike.
//
// The expectations are HBase's: a table keeps TableOptions.MaxVersions versions of each column (one
// by default) and a read returns the newest (more when ReadOptions asks, within its time range); a
// write older than every kept version is dropped (an equal timestamp replaces); cells come sorted by
// family, qualifier, then newest first; a scan skips rows with no cell left by its column filter or
// time range (versions.go). The suite uses families "d" and "x", simple qualifiers, keys up to a
// few hundred bytes, values up to 64 KiB and timestamps within a day of now (Tablestore's default
// version deviation), so that it runs against real servers. It states every rule of the contract once
// (contract.go holds the rules where stores once differed: whole-family deletes, puts without cells,
// unknown families, deletes of cells stamped in the future; linear.go checks that concurrent puts,
// check-and-mutates and reads of a row, stamped by the store, are linearizable) and stays off only
// what the contract leaves open: a write stamped at or before the newest version a delete removed
// (HBase keeps it hidden, the other stores show it), versions beyond MaxVersions that a time-range
// read may still see on HBase until a compaction, and a Put and a Delete of the same row in one Apply.
package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
)

// Options describe what a backend can do, where the contract leaves it open.
type Options struct {
	// MaxKeyLen is the longest key the backend accepts; required, every store has one. A key of
	// MaxKeyLen bytes must be written and read back (by range too), and one byte more rejected with
	// backends.ErrInvalidKey (per row in Apply, for the whole call in Read).
	MaxKeyLen int
	// SplitKeysAreRegions says that, on a backend implementing backends.RegionLister, Regions returns
	// exactly the empty key followed by the SplitKeys the table was created with (HBase, memory,
	// local). Without it Regions is only checked to be sorted and to start with the empty key.
	SplitKeysAreRegions bool
	// TablePrefix starts every table name the suite creates; default "brinetest".
	TablePrefix string
	// ClockSkew is how far the store's clock may be from this process's, for cells written with
	// timestamp 0; default one minute.
	ClockSkew time.Duration
	// Serial runs the subtests one at a time; by default they run in parallel.
	Serial bool
	// Timeout bounds each subtest; default two minutes.
	Timeout time.Duration
}

// RunWithOptions runs the conformance suite. newBackend is called once per subtest; it must return a
// ready backend and register its Close with t.Cleanup.
func RunWithOptions(t *testing.T, opts Options, newBackend func(t *testing.T) backends.Backend) {
	if opts.MaxKeyLen <= 0 {
		t.Fatal("backendtest: Options.MaxKeyLen is required: every store has a key limit, and the suite tests it")
	}
	if opts.TablePrefix == "" {
		opts.TablePrefix = "brinetest"
	}
	if opts.ClockSkew <= 0 {
		opts.ClockSkew = time.Minute
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	s := &suite{opts: opts, newBackend: newBackend}
	t.Run("Tables", func(t *testing.T) { s.run(t, tableTests) })
	t.Run("Apply", func(t *testing.T) { s.run(t, applyTests) })
	t.Run("Read", func(t *testing.T) { s.run(t, readTests) })
	t.Run("Scan", s.testScan)
	t.Run("MissingTable", func(t *testing.T) { s.run(t, missingTableTests) })
	t.Run("Contract", func(t *testing.T) { s.run(t, contractTests) })
	t.Run("Versions", func(t *testing.T) { s.run(t, versionTests) })
	t.Run("Atomic", func(t *testing.T) { s.run(t, atomicTests) })
	t.Run("BatchAtomic", func(t *testing.T) { s.run(t, batchAtomicTests) })
	t.Run("Filter", func(t *testing.T) { s.run(t, filterTests) })
	t.Run("MetaRewrite", func(t *testing.T) { s.run(t, metaRewriteTests) })
	t.Run("Linearizable", func(t *testing.T) { s.run(t, linearTests) })
	t.Run("Regions", func(t *testing.T) { s.run(t, regionTests) })
	t.Run("Tune", func(t *testing.T) { s.run(t, tunerTests) })
}

type suite struct {
	opts       Options
	newBackend func(t *testing.T) backends.Backend
}

// test is one subtest: a name and a body that gets a fresh env.
type test struct {
	name string
	fn   func(e *env)
}

func (s *suite) run(t *testing.T, tests []test) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !s.opts.Serial {
				t.Parallel()
			}
			tt.fn(s.env(t))
		})
	}
}

// env is what a subtest works with.
type env struct {
	*testing.T
	s   *suite
	b   backends.Backend
	ctx context.Context
	// ts is a base timestamp an hour ago, in milliseconds: explicit versions are ts+n.
	ts int64
}

func (s *suite) env(t *testing.T) *env {
	ctx, cancel := context.WithTimeout(t.Context(), s.opts.Timeout)
	t.Cleanup(cancel)
	return &env{T: t, s: s, b: s.newBackend(t), ctx: ctx, ts: time.Now().Add(-time.Hour).UnixMilli()}
}

// tableName returns a fresh name for this subtest.
func (e *env) tableName() string {
	name := e.Name()
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
	if len(name) > 40 {
		name = name[:40]
	}
	return fmt.Sprintf("%s_%s_%08x", e.s.opts.TablePrefix, name, rand.Uint32())
}

// createTable creates a table with families d and x (plus opts) and deletes it at cleanup.
func (e *env) createTable(opts backends.TableOptions) string {
	e.Helper()
	name := e.tableName()
	if opts.Families == nil {
		opts.Families = []string{"d", "x"}
	}
	if err := e.b.CreateTable(e.ctx, name, opts); err != nil {
		e.Fatalf("CreateTable(%q): %v", name, err)
	}
	e.dropAtCleanup(name)
	return name
}

func (e *env) dropAtCleanup(name string) {
	b, t := e.b, e.T
	t.Cleanup(func() {
		// t.Context is already cancelled here.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := b.DeleteTable(ctx, name); err != nil && !errors.Is(err, backends.ErrTableNotFound) {
			t.Errorf("cleanup: DeleteTable(%q): %v", name, err)
		}
	})
}

// apply applies muts and fails the test on any error.
func (e *env) apply(table string, muts ...backends.Mutation) {
	e.Helper()
	rowErrs, err := e.b.Apply(e.ctx, table, muts)
	if err != nil {
		e.Fatalf("Apply: %v", err)
	}
	if rowErrs != nil {
		e.Fatalf("Apply: rowErrs = %v, want nil when every row succeeds", rowErrs)
	}
}

func (e *env) read(table string, keys [][]byte, cols ...backends.Column) []backends.Row {
	e.Helper()
	rows, err := e.b.Read(e.ctx, table, keys, backends.ReadOptions{Columns: cols})
	if err != nil {
		e.Fatalf("Read: %v", err)
	}
	if len(rows) != len(keys) {
		e.Fatalf("Read of %d keys returned %d rows", len(keys), len(rows))
	}
	for i, r := range rows {
		if !bytes.Equal(r.Key, keys[i]) {
			e.Fatalf("Read: rows[%d].Key = %q, want %q", i, r.Key, keys[i])
		}
	}
	return rows
}

func (e *env) readOne(table string, key []byte, cols ...backends.Column) backends.Row {
	e.Helper()
	return e.read(table, [][]byte{key}, cols...)[0]
}

// wantCells fails unless got equals want; a want Timestamp of anyTS matches any timestamp.
func (e *env) wantCells(what string, got, want []backends.Cell) {
	e.Helper()
	if !cellsEqual(got, want) {
		e.Fatalf("%s:\n got  %s\n want %s", what, fmtCells(got), fmtCells(want))
	}
}

func (e *env) wantRows(what string, got, want []backends.Row) {
	e.Helper()
	if d := diffRows(got, want); d != "" {
		e.Fatalf("%s: %s", what, d)
	}
}

// scanAll collects a scan, failing the test if anything follows an error.
func (e *env) scanAll(seq iter.Seq2[backends.Row, error]) ([]backends.Row, error) {
	e.Helper()
	var (
		rows []backends.Row
		err  error
	)
	for r, rerr := range seq {
		if err != nil {
			e.Fatalf("scan yielded (%q, %v) after the error %v; an error must be the last element", r.Key, rerr, err)
		}
		if rerr != nil {
			err = rerr
			continue
		}
		rows = append(rows, r)
	}
	return rows, err
}

// anyTS in a wanted cell matches any timestamp.
const anyTS = -1

func cell(fam, qual, val string, ts int64) backends.Cell {
	return backends.Cell{Family: fam, Qualifier: qual, Value: []byte(val), Timestamp: ts}
}

func put(key string, cells ...backends.Cell) backends.Mutation {
	return backends.Mutation{Key: []byte(key), Cells: cells}
}

func del(key string, cols ...backends.Column) backends.Mutation {
	m := backends.Mutation{Key: []byte(key), Delete: true}
	for _, c := range cols {
		m.Cells = append(m.Cells, backends.Cell{Family: c.Family, Qualifier: c.Qualifier})
	}
	return m
}

func col(fam, qual string) backends.Column { return backends.Column{Family: fam, Qualifier: qual} }

func keys(ks ...string) [][]byte {
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = []byte(k)
	}
	return out
}

func cellsEqual(got, want []backends.Cell) bool {
	return slices.EqualFunc(got, want, func(g, w backends.Cell) bool {
		return g.Family == w.Family && g.Qualifier == w.Qualifier && bytes.Equal(g.Value, w.Value) &&
			(w.Timestamp == anyTS || g.Timestamp == w.Timestamp)
	})
}

func diffRows(got, want []backends.Row) string {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			return fmt.Sprintf("got %d rows, want %d; first missing: %q (got keys %s, want %s)", len(got), len(want), want[i].Key, fmtKeys(got), fmtKeys(want))
		case i >= len(want):
			return fmt.Sprintf("got %d rows, want %d; first extra: %q (got keys %s, want %s)", len(got), len(want), got[i].Key, fmtKeys(got), fmtKeys(want))
		case !bytes.Equal(got[i].Key, want[i].Key):
			return fmt.Sprintf("row %d: key %q, want %q (got keys %s, want %s)", i, got[i].Key, want[i].Key, fmtKeys(got), fmtKeys(want))
		case !cellsEqual(got[i].Cells, want[i].Cells):
			return fmt.Sprintf("row %d (%q):\n got  %s\n want %s", i, got[i].Key, fmtCells(got[i].Cells), fmtCells(want[i].Cells))
		}
	}
	return ""
}

func fmtKeys(rows []backends.Row) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, r := range rows {
		if i == 12 {
			fmt.Fprintf(&sb, " ... %d more", len(rows)-i)
			break
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%q", r.Key)
	}
	sb.WriteByte(']')
	return sb.String()
}

func fmtCells(cells []backends.Cell) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for i, c := range cells {
		if i > 0 {
			sb.WriteByte(' ')
		}
		v := c.Value
		if len(v) > 32 {
			v = v[:32]
		}
		fmt.Fprintf(&sb, "%s:%s=%q@%d", c.Family, c.Qualifier, v, c.Timestamp)
	}
	sb.WriteByte(']')
	return sb.String()
}
