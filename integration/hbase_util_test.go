//go:build integration

package integration

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// fam is the column family of every test table.
const fam = "d"

// hbaseEnv is one test's connection to the real HBase: the brine driver, a brine client over it, and
// the driver's raw gohbase client for reference reads and writes.
type hbaseEnv struct {
	backend *hbase.Backend
	client  *client.Client
	raw     gohbase.Client
}

func openHBase(t *testing.T) *hbaseEnv {
	t.Helper()
	return openHBaseAt(t, hbasetest.ZK(t))
}

// openHBaseAt is openHBase for the cluster at zk.
func openHBaseAt(t *testing.T, zk string) *hbaseEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := hbase.Open(ctx, hbase.Config{ZKQuorum: zk, Options: hbase.Options{Logger: testkit.Logger(t, slog.LevelWarn)}})
	if err != nil {
		t.Fatalf("hbase.Open(%s): %v", zk, err)
	}
	c := client.New(b, client.WithLogger(testkit.Logger(t, slog.LevelWarn)))
	t.Cleanup(func() { _ = c.Close() })
	return &hbaseEnv{backend: b, client: c, raw: b.Client()}
}

// dropTable deletes table when the test ends.
func (e *hbaseEnv) dropTable(t *testing.T, name string) {
	testkit.DeleteAtEnd(t, name, e.backend.DeleteTable)
}

// salted creates a brine table with spec through client.CreateTable (pre-split at bucket bounds).
func (e *hbaseEnv) salted(t *testing.T, spec string, regions int) *client.Table {
	t.Helper()
	s := testkit.Salter(t, spec)
	name := hbasetest.Table("brine_integ")
	tbl, err := e.client.CreateTable(testkit.Context(t, 2*time.Minute), name, client.TableConfig{Salter: s, Regions: regions})
	if err != nil {
		t.Fatalf("CreateTable(%s, %s): %v", name, spec, err)
	}
	e.dropTable(t, name)
	return tbl
}

// unsalted creates a plain HBase table (no stored spec) pre-split at splits: the reference.
func (e *hbaseEnv) unsalted(t *testing.T, splits [][]byte) string {
	t.Helper()
	name := hbasetest.Table("brine_integ_ref")
	err := e.backend.CreateTable(testkit.Context(t, 2*time.Minute), name, backends.TableOptions{Families: []string{fam}, SplitKeys: splits})
	if err != nil {
		t.Fatalf("CreateTable(%s): %v", name, err)
	}
	e.dropTable(t, name)
	return name
}

// row is what tests compare: a key and its cells as "family:qualifier=value" in column order.
type row struct {
	Key   string
	Cells []string
}

func (r row) String() string { return fmt.Sprintf("%q%q", r.Key, r.Cells) }

// testCells are the cells every test writes for key: two columns derived from the key.
func testCells(key []byte) map[string][]byte {
	return map[string][]byte{"q": append([]byte("v:"), key...), "n": fmt.Appendf(nil, "%d", len(key))}
}

func brineMutation(key []byte) client.Mutation {
	var cells []client.Cell
	for q, v := range testCells(key) {
		cells = append(cells, client.Cell{Family: fam, Qualifier: q, Value: v})
	}
	return client.Mutation{Key: key, Cells: cells}
}

// writeBrine writes testCells for every key through the brine table.
func writeBrine(t *testing.T, tbl *client.Table, keys [][]byte) {
	t.Helper()
	muts := make([]client.Mutation, len(keys))
	for i, k := range keys {
		muts[i] = brineMutation(k)
	}
	rowErrs, err := tbl.Apply(testkit.Context(t, 2*time.Minute), muts)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for i, e := range rowErrs {
		if e != nil {
			t.Fatalf("Apply row %d: %v", i, e)
		}
	}
}

// writeRaw writes testCells for every key straight through gohbase, keys unchanged.
func writeRaw(t *testing.T, raw gohbase.Client, table string, keys [][]byte) {
	t.Helper()
	ctx := testkit.Context(t, 2*time.Minute)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(64)
	for _, k := range keys {
		g.Go(func() error {
			put, err := hrpc.NewPut(gctx, []byte(table), k, map[string]map[string][]byte{fam: testCells(k)})
			if err != nil {
				return err
			}
			if _, err := raw.Put(put); err != nil {
				return fmt.Errorf("put %q: %w", k, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("raw writes to %s: %v", table, err)
	}
}

func resultRow(r *hrpc.Result) row {
	var out row
	if len(r.Cells) > 0 {
		out.Key = string(r.Cells[0].Row)
	}
	for _, c := range r.Cells {
		out.Cells = append(out.Cells, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
	}
	slices.Sort(out.Cells)
	return out
}

func brineRow(r client.Row) row {
	out := row{Key: string(r.Key)}
	for _, c := range r.Cells {
		out.Cells = append(out.Cells, fmt.Sprintf("%s:%s=%s", c.Family, c.Qualifier, c.Value))
	}
	slices.Sort(out.Cells)
	return out
}

// rawScan reads [start, stop) of table straight through gohbase: the reference, or the physical
// content of a salted table.
func rawScan(t *testing.T, raw gohbase.Client, table string, start, stop []byte) []row {
	t.Helper()
	rows, err := rawScanErr(testkit.Context(t, time.Minute), raw, table, start, stop)
	if err != nil {
		t.Fatalf("raw scan %s [%q, %q): %v", table, start, stop, err)
	}
	return rows
}

func rawScanErr(ctx context.Context, raw gohbase.Client, table string, start, stop []byte) ([]row, error) {
	sc, err := hrpc.NewScanRange(ctx, []byte(table), start, stop, hrpc.NumberOfRows(1000))
	if err != nil {
		return nil, err
	}
	return drain(raw.Scan(sc))
}

// drain reads a gohbase scanner to its end, or its first error, and closes it.
func drain(sc hrpc.Scanner) ([]row, error) {
	results, err := testkit.CollectErr(testkit.Seq(sc.Next, sc.Close))
	var rows []row
	for _, r := range results {
		rows = append(rows, resultRow(r))
	}
	return rows, err
}

// collect runs a brine scan to its end, or its first error, and returns its rows as tests compare them.
func collect(seq iter.Seq2[client.Row, error]) ([]row, error) {
	got, err := testkit.CollectErr(seq)
	var rows []row
	for _, r := range got {
		rows = append(rows, brineRow(r))
	}
	return rows, err
}

// diffRows describes the first difference between got and want ("" if equal).
func diffRows(got, want []row) string {
	for i := range min(len(got), len(want)) {
		if got[i].String() != want[i].String() {
			return fmt.Sprintf("row %d: got %v, want %v (got %d rows, want %d)", i, got[i], want[i], len(got), len(want))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("got %d rows, want %d", len(got), len(want))
	}
	return ""
}

func reversed(rows []row) []row {
	out := slices.Clone(rows)
	slices.Reverse(out)
	return out
}

func limited(rows []row, n int) []row {
	if n > 0 && len(rows) > n {
		return rows[:n]
	}
	return rows
}

// countingBackend counts the physical range scans the client sends, to see bucket pruning.
type countingBackend struct {
	backends.Backend
	mu    sync.Mutex
	scans int
}

func (c *countingBackend) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	c.mu.Lock()
	c.scans++
	c.mu.Unlock()
	return c.Backend.Scan(ctx, table, r, opts)
}

func (c *countingBackend) reset() (scans int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	scans, c.scans = c.scans, 0
	return scans
}

// Close leaves the wrapped backend to its owner.
func (c *countingBackend) Close() error { return nil }

// expectRow is the row testCells writes for key, as scans return it.
func expectRow(key []byte) row {
	out := row{Key: string(key)}
	for q, v := range testCells(key) {
		out.Cells = append(out.Cells, fmt.Sprintf("%s:%s=%s", fam, q, v))
	}
	slices.Sort(out.Cells)
	return out
}
