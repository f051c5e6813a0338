//go:build integration

package hbase

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/hbasetest"
)

const bulkVersions = 5

// bulkImportTable creates a table keeping bulkVersions versions of families, pre-split at splits.
func bulkImportTable(t *testing.T, b *Backend, families []string, splits ...string) string {
	t.Helper()
	table := hbasetest.Table("brine_bulkimp")
	opts := backends.TableOptions{Families: families, MaxVersions: bulkVersions}
	for _, s := range splits {
		opts.SplitKeys = append(opts.SplitKeys, []byte(s))
	}
	if err := b.CreateTable(t.Context(), table, opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.DeleteTable(context.Background(), table) })
	return table
}

func openBulkBackend(t *testing.T) *Backend {
	t.Helper()
	b, err := Open(t.Context(), Config{ZKQuorum: hbasetest.ZK(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// bulkInput is a deterministic input of n rows over keys "<hex digit>/<number>" (so over regions
// split at hex digits), in families of fams: 1 to 3 versions per column, some stamped by the
// row, some left to the import's Timestamp; every 10th row repeats an earlier key (its cells of
// the same timestamps then replace the earlier ones).
func bulkInput(seed uint64, n int, fams []string) []backends.Mutation {
	rng := rand.New(rand.NewPCG(seed, 7))
	var rows []backends.Mutation
	for i := range n {
		id := i
		if i%10 == 9 {
			id = rng.IntN(i)
		}
		key := fmt.Appendf(nil, "%x/%06d", id%16, id)
		m := backends.Mutation{Key: key}
		for q := range 1 + rng.IntN(3) {
			fam := fams[rng.IntN(len(fams))]
			for v := range 1 + rng.IntN(3) {
				ts := int64(1_600_000_000_000 + 1000*id + 10*q + v)
				if v == 0 && rng.IntN(4) == 0 {
					ts = 0 // the import's timestamp
				}
				val := fmt.Appendf(nil, "row %d col %d version %d %s", i, q, v, make([]byte, rng.IntN(100)))
				m.Cells = append(m.Cells, backends.Cell{Family: fam, Qualifier: fmt.Sprintf("q%d", q), Value: val, Timestamp: ts})
			}
		}
		rows = append(rows, m)
	}
	return rows
}

func seqOf(rows []backends.Mutation) iter.Seq2[backends.Mutation, error] {
	return func(yield func(backends.Mutation, error) bool) {
		for _, m := range rows {
			if !yield(m, nil) {
				return
			}
		}
	}
}

// bulkModel is what the table holds after puts of rows (cells without a timestamp stamped ts):
// per row, per column, the bulkVersions newest versions, the last write of a timestamp winning.
func bulkModel(rows []backends.Mutation, ts int64) []backends.Row {
	type col struct{ key, fam, qual string }
	cells := map[col]map[int64][]byte{}
	for _, m := range rows {
		for _, c := range m.Cells {
			k := col{string(m.Key), c.Family, c.Qualifier}
			if cells[k] == nil {
				cells[k] = map[int64][]byte{}
			}
			at := c.Timestamp
			if at == 0 {
				at = ts
			}
			cells[k][at] = c.Value
		}
	}
	byRow := map[string][]backends.Cell{}
	for k, versions := range cells {
		stamps := slices.Sorted(func(yield func(int64) bool) {
			for at := range versions {
				if !yield(at) {
					return
				}
			}
		})
		slices.Reverse(stamps)
		for _, at := range stamps[:min(len(stamps), bulkVersions)] {
			byRow[k.key] = append(byRow[k.key], backends.Cell{Family: k.fam, Qualifier: k.qual, Value: versions[at], Timestamp: at})
		}
	}
	var out []backends.Row
	for key, cs := range byRow {
		slices.SortFunc(cs, func(a, b backends.Cell) int {
			return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Qualifier, b.Qualifier), cmp.Compare(b.Timestamp, a.Timestamp))
		})
		out = append(out, backends.Row{Key: []byte(key), Cells: cs})
	}
	slices.SortFunc(out, func(a, b backends.Row) int { return cmp.Compare(string(a.Key), string(b.Key)) })
	return out
}

// checkTable compares a full scan of table, every version, with want, cell by cell.
func checkBulkTable(t *testing.T, b *Backend, table string, want []backends.Row) {
	t.Helper()
	var got []backends.Row
	for row, err := range b.Scan(t.Context(), table, backends.Range{}, backends.ScanOptions{ReadOptions: backends.ReadOptions{MaxVersions: bulkVersions + 2}}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, row)
	}
	for i := range min(len(got), len(want)) {
		if string(got[i].Key) != string(want[i].Key) || !slices.EqualFunc(got[i].Cells, want[i].Cells, sameCell) {
			t.Fatalf("row %d: got %q %v\nwant %q %v", i, got[i].Key, got[i].Cells, want[i].Key, want[i].Cells)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("scanned %d rows, want %d", len(got), len(want))
	}
}

// checkClean fails unless the work directory is gone and the staging directory empty.
func checkClean(t *testing.T, staging string) {
	t.Helper()
	left, err := os.ReadDir(staging)
	if err != nil || len(left) != 0 {
		t.Fatalf("staging directory %s after the import: %v %v", staging, left, err)
	}
}

// TestBulkImport loads 12,000 rows in two families into a table of 16 regions, with MemoryBytes
// small enough that every region spills runs that are merged: the table then holds every
// version of the input, cell by cell; the refused rows were reported with their index, and
// nothing of them shows.
func TestBulkImport(t *testing.T) {
	b := openBulkBackend(t)
	fams := []string{"a", "b"}
	table := bulkImportTable(t, b, fams, "1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f")
	staging := hbasetest.Staging(t)
	rows := bulkInput(1, 12000, fams)
	bad := map[int64]backends.Mutation{
		100:  {Key: []byte("bad/delete"), Delete: true},
		2000: {Key: []byte("bad/family"), Cells: []backends.Cell{{Family: "z", Qualifier: "q", Value: []byte("x")}}},
		5000: {Key: nil, Cells: []backends.Cell{{Family: "a", Qualifier: "q", Value: []byte("x")}}},
		7000: {Key: []byte("bad/negative"), Cells: []backends.Cell{{Family: "a", Qualifier: "q", Value: []byte("x"), Timestamp: -1}}},
		9000: {Key: []byte("bad/empty")},
	}
	var input []backends.Mutation
	for _, m := range rows {
		if bm, ok := bad[int64(len(input))]; ok {
			input = append(input, bm)
		}
		input = append(input, m)
	}
	// The region client exists before the snapshot: what is left after the import is the import's.
	if _, err := b.Read(t.Context(), table, [][]byte{[]byte("0")}, backends.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	before := goleak.IgnoreCurrent()
	got := map[int64]error{}
	ts := time.UnixMilli(1_700_000_000_000)
	const memory = 256 << 10
	stats, err := b.BulkImport(t.Context(), table, seqOf(input), backends.BulkOptions{
		Staging: staging, MemoryBytes: memory, Timestamp: ts,
		OnFailure: func(f backends.BulkFailure) {
			if !errors.Is(f.Err, backends.ErrInvalidArgument) && !errors.Is(f.Err, backends.ErrInvalidKey) {
				t.Errorf("row %d refused with %v, want ErrInvalidArgument", f.Index, f.Err)
			}
			got[f.Index] = f.Err
		},
	})
	if !errors.Is(err, backends.ErrRowsFailed) {
		t.Fatalf("BulkImport: %v, want ErrRowsFailed", err)
	}
	if _, err := hbasetest.FindLeaks(before); err != nil {
		t.Fatal(err)
	}
	t.Logf("stats %+v", stats)
	for i := range bad {
		if got[i] == nil {
			t.Errorf("row %d not reported", i)
		}
	}
	if len(got) != len(bad) || stats.Failed != int64(len(bad)) || stats.Rows != int64(len(rows)) {
		t.Fatalf("%d rows reported, %d failed, %d rows; want %d and %d", len(got), stats.Failed, stats.Rows, len(bad), len(rows))
	}
	if stats.Runs < 16 || stats.Regions != 16 || stats.Files != 32 {
		t.Fatalf("runs %d, regions %d, files %d: want runs spilled for each of 16 regions, one file per region and family", stats.Runs, stats.Regions, stats.Files)
	}
	// The bound: one row past MemoryBytes at most.
	if stats.PeakBuffered > memory+4<<10 {
		t.Fatalf("peak buffered %d bytes, MemoryBytes %d", stats.PeakBuffered, memory)
	}
	checkBulkTable(t, b, table, bulkModel(rows, ts.UnixMilli()))
	checkClean(t, staging)
}

// TestBulkImportOptions: a missing staging directory, a missing table; an input that fails
// loads nothing and leaves nothing behind.
func TestBulkImportOptions(t *testing.T) {
	b := openBulkBackend(t)
	table := bulkImportTable(t, b, []string{"d"}, "8")
	staging := hbasetest.Staging(t)
	rows := seqOf(bulkInput(2, 10, []string{"d"}))
	if _, err := b.BulkImport(t.Context(), table, rows, backends.BulkOptions{}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("no staging: %v", err)
	}
	if _, err := b.BulkImport(t.Context(), table, rows, backends.BulkOptions{Staging: staging + "/none"}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Fatalf("missing staging: %v", err)
	}
	if _, err := b.BulkImport(t.Context(), table+"_none", rows, backends.BulkOptions{Staging: staging}); !errors.Is(err, backends.ErrTableNotFound) {
		t.Fatalf("missing table: %v", err)
	}
	boom := errors.New("boom")
	failing := func(yield func(backends.Mutation, error) bool) {
		for m := range seqOf(bulkInput(2, 10, []string{"d"})) {
			if !yield(m, nil) {
				return
			}
		}
		yield(backends.Mutation{}, boom)
	}
	if _, err := b.BulkImport(t.Context(), table, failing, backends.BulkOptions{Staging: staging}); !errors.Is(err, boom) {
		t.Fatalf("failing input: %v", err)
	}
	checkBulkTable(t, b, table, nil)
	checkClean(t, staging)
}

// TestBulkImportSplit splits two regions after the files are written and before they are
// loaded: the refused files are cut at the new boundaries and loaded, and the table ends exact.
func TestBulkImportSplit(t *testing.T) {
	b := openBulkBackend(t)
	admin, err := hbasetest.FindAdmin(hbasetest.ZK(t))
	if err != nil {
		t.Fatal(err)
	}
	fams := []string{"a", "b"}
	table := bulkImportTable(t, b, fams, "4", "8", "c")
	staging := hbasetest.Staging(t)
	rows := bulkInput(3, 4000, fams)
	ts := time.UnixMilli(1_700_000_000_000)
	b.bulkHooks.written = func(ctx context.Context) error {
		for _, key := range []string{"2", "a/0005"} {
			if err := admin.Split(ctx, table, []byte(key)); err != nil {
				return err
			}
		}
		return nil
	}
	stats, err := b.BulkImport(t.Context(), table, seqOf(rows), backends.BulkOptions{
		Staging: staging, Timestamp: ts,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats %+v", stats)
	if stats.Splits != 2 || stats.Regions != 6 {
		t.Fatalf("%d files cut, %d loads; want 2 and 6", stats.Splits, stats.Regions)
	}
	checkBulkTable(t, b, table, bulkModel(rows, ts.UnixMilli()))
	checkClean(t, staging)
}

func sameCell(a, b backends.Cell) bool {
	return a.Family == b.Family && a.Qualifier == b.Qualifier && a.Timestamp == b.Timestamp && string(a.Value) == string(b.Value)
}
