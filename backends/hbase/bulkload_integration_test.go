//go:build integration

package hbase

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/internal/hfile"
	"github.com/brine-kv/brine/internal/hbasetest"
)

// writeStoreFile writes cells (sorted here, as HBase sorts them) as a store file of family d in dir.
func writeStoreFile(t *testing.T, dir, name string, cells []hfile.Cell) string {
	t.Helper()
	return writeStoreFileOpts(t, dir, name, cells, hfile.Options{BlockSize: 4 << 10})
}

// writeStoreFileOpts is writeStoreFile with the writer's options (Family is set here).
func writeStoreFileOpts(t *testing.T, dir, name string, cells []hfile.Cell, opts hfile.Options) string {
	t.Helper()
	slices.SortFunc(cells, hfile.Compare)
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	opts.Family = []byte("d")
	w, err := hfile.NewWriter(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if err := w.Append(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBulkLoadStoreFiles hands store files of brine's own writer to a real region server and reads
// every cell back, versions and timestamps kept; a file whose rows span two regions is refused,
// and nothing of it shows.
func TestBulkLoadStoreFiles(t *testing.T) {
	ctx := t.Context()
	b := openBulkBackend(t)
	table := bulkImportTable(t, b, []string{"d"}, "4", "8", "c")
	dir := hbasetest.Staging(t)

	// 2,000 rows with 1 to 3 versions each, in three files of three shapes, each into its region:
	// rows "1..." in ["", "4"), "5..." in ["4", "8"), "9..." in ["8", "c").
	files := []struct {
		name string
		lead string // the rows' first byte
		opts hfile.Options
	}{
		{"blocks of 4 KiB", "1", hfile.Options{BlockSize: 4 << 10}},
		{"a multi-level index", "5", hfile.Options{BlockSize: 1 << 10, IndexBlockSize: 256}},
		{"gzip blocks", "9", hfile.Options{Compression: hfile.CompressionGzip}},
	}
	var want []backends.Row
	for _, f := range files {
		var cells []hfile.Cell
		for i := range 2000 {
			key := fmt.Appendf(nil, "%s/%05d", f.lead, i)
			row := backends.Row{Key: key}
			for v := range 1 + i%3 {
				ts := int64(1_700_000_000_000 + 10*i - v)
				val := fmt.Appendf(nil, "value %d version %d", i, v)
				cells = append(cells, hfile.Cell{Row: key, Family: []byte("d"), Qualifier: []byte("q"), Timestamp: ts, Value: val})
				row.Cells = append(row.Cells, backends.Cell{Family: "d", Qualifier: "q", Value: val, Timestamp: ts})
			}
			want = append(want, row)
		}
		path := writeStoreFileOpts(t, dir, "file-"+f.lead, cells, f.opts)
		if levels := indexLevels(t, path); f.opts.IndexBlockSize > 0 && levels < 2 {
			t.Fatalf("%s: the file has %d index levels, want 2 or more", f.name, levels)
		}
		if err := b.loadStoreFiles(ctx, table, []byte(f.lead), []storeFile{{family: "d", path: "file://" + path}}, true); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
	}
	checkBulkTable(t, b, table, want)

	// Rows "a..." and "d...": regions ["8", "c") and ["c", ∞). The server refuses the whole file.
	span := writeStoreFile(t, dir, "span", []hfile.Cell{
		{Row: []byte("a/1"), Family: []byte("d"), Qualifier: []byte("q"), Timestamp: 1, Value: []byte("x")},
		{Row: []byte("d/1"), Family: []byte("d"), Qualifier: []byte("q"), Timestamp: 1, Value: []byte("y")},
	})
	if err := b.loadStoreFiles(ctx, table, []byte("a"), []storeFile{{family: "d", path: "file://" + span}}, true); err == nil {
		t.Fatal("a file spanning two regions was loaded")
	}
	checkBulkTable(t, b, table, want) // nothing of the refused file shows
}

// TestBulkLoadSeqNum pins how a loaded cell and a put of the same row, column and timestamp made
// before the load order: with assign_seq_num the loaded file's cells are newer than every edit the
// region holds and win; without, the file keeps sequence id 0 and the put wins.
func TestBulkLoadSeqNum(t *testing.T) {
	ctx := t.Context()
	b := openBulkBackend(t)
	table := bulkImportTable(t, b, []string{"d"}, "4", "8", "c")
	dir := hbasetest.Staging(t)
	const ts = 1_700_000_000_000
	for _, tc := range []struct {
		name   string
		assign bool
		want   string
	}{
		{"assigned", true, "loaded"},
		{"not assigned", false, "put"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := []byte("1/" + tc.name)
			if rowErrs, err := b.Apply(ctx, table, []backends.Mutation{{Key: key, Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("put"), Timestamp: ts}}}}); err != nil || rowErrs != nil {
				t.Fatal(err, rowErrs)
			}
			path := writeStoreFile(t, dir, "seq-"+fmt.Sprint(tc.assign), []hfile.Cell{{Row: key, Family: []byte("d"), Qualifier: []byte("q"), Timestamp: ts, Value: []byte("loaded")}})
			if err := b.loadStoreFiles(ctx, table, key, []storeFile{{family: "d", path: "file://" + path}}, tc.assign); err != nil {
				t.Fatal(err)
			}
			rows, err := b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{MaxVersions: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows[0].Cells) != 1 || string(rows[0].Cells[0].Value) != tc.want {
				t.Fatalf("read %v, want one cell %q at %d", rows[0].Cells, tc.want, int64(ts))
			}
		})
	}
}

// indexLevels is the number of data index levels of the store file at path.
func indexLevels(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	r, err := hfile.Open(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return r.Trailer.NumDataIndexLevels
}
