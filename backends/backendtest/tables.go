package backendtest

import (
	"errors"
	"maps"
	"slices"

	"github.com/brine-kv/brine/backends"
)

var tableTests = []test{
	{"Lifecycle", testLifecycle},
	{"MetaNil", testMetaNil},
	{"MetaIsCopied", testMetaIsCopied},
	{"TablesAreIndependent", testTablesAreIndependent},
	{"SplitKeys", testSplitKeys},
	{"List", testListTables},
}

// testListTables: Tables lists the tables created and not the ones deleted, sorted. Other programs'
// tables may be listed too (a shared server), so only the suite's own are checked.
func testListTables(e *env) {
	a := e.createTable(backends.TableOptions{})
	b := e.createTable(backends.TableOptions{})
	gone := e.createTable(backends.TableOptions{})
	if err := e.b.DeleteTable(e.ctx, gone); err != nil {
		e.Fatalf("DeleteTable: %v", err)
	}
	names, err := e.b.Tables(e.ctx)
	if err != nil {
		e.Fatalf("Tables: %v", err)
	}
	if !slices.IsSorted(names) {
		e.Errorf("Tables = %q, not sorted", names)
	}
	for _, n := range []string{a, b} {
		if !slices.Contains(names, n) {
			e.Errorf("Tables lacks %q, which was created", n)
		}
	}
	if slices.Contains(names, gone) {
		e.Errorf("Tables lists %q, which was deleted", gone)
	}
}

func testLifecycle(e *env) {
	name := e.tableName()
	e.dropAtCleanup(name)
	if _, err := e.b.TableMeta(e.ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		e.Fatalf("TableMeta before CreateTable: %v, want ErrTableNotFound", err)
	}
	meta := map[string]string{"brine.salt": "hash:16", "note": "a b=c, ünïcode", "empty": ""}
	opts := backends.TableOptions{Families: []string{"d", "x"}, Meta: meta}
	if err := e.b.CreateTable(e.ctx, name, opts); err != nil {
		e.Fatalf("CreateTable: %v", err)
	}
	if err := e.b.CreateTable(e.ctx, name, opts); !errors.Is(err, backends.ErrTableExists) {
		e.Fatalf("second CreateTable: %v, want ErrTableExists", err)
	}
	got, err := e.b.TableMeta(e.ctx, name)
	if err != nil {
		e.Fatalf("TableMeta: %v", err)
	}
	if !maps.Equal(got, meta) {
		e.Fatalf("TableMeta = %q, want %q", got, meta)
	}
	e.apply(name, put("k", cell("d", "a", "v", e.ts)))

	if err := e.b.DeleteTable(e.ctx, name); err != nil {
		e.Fatalf("DeleteTable: %v", err)
	}
	if _, err := e.b.TableMeta(e.ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		e.Fatalf("TableMeta after DeleteTable: %v, want ErrTableNotFound", err)
	}
	if err := e.b.DeleteTable(e.ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		e.Fatalf("second DeleteTable: %v, want ErrTableNotFound", err)
	}

	// Recreated, the table is empty and has the new Meta.
	if err := e.b.CreateTable(e.ctx, name, backends.TableOptions{Families: []string{"d", "x"}, Meta: map[string]string{"v": "2"}}); err != nil {
		e.Fatalf("CreateTable after DeleteTable: %v", err)
	}
	if got, err := e.b.TableMeta(e.ctx, name); err != nil || !maps.Equal(got, map[string]string{"v": "2"}) {
		e.Fatalf("TableMeta of the recreated table = %q, %v", got, err)
	}
	if r := e.readOne(name, []byte("k")); len(r.Cells) != 0 {
		e.Fatalf("recreated table still has the old row: %s", fmtCells(r.Cells))
	}
	rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil || len(rows) != 0 {
		e.Fatalf("scan of the recreated table = %s, %v; want no rows", fmtKeys(rows), err)
	}
}

func testMetaNil(e *env) {
	name := e.createTable(backends.TableOptions{})
	got, err := e.b.TableMeta(e.ctx, name)
	if err != nil {
		e.Fatalf("TableMeta: %v", err)
	}
	if len(got) != 0 {
		e.Fatalf("TableMeta of a table created without Meta = %q, want empty", got)
	}
}

func testMetaIsCopied(e *env) {
	meta := map[string]string{"k": "v"}
	name := e.createTable(backends.TableOptions{Meta: meta})
	meta["k"] = "changed by the caller after CreateTable"
	got, err := e.b.TableMeta(e.ctx, name)
	if err != nil {
		e.Fatalf("TableMeta: %v", err)
	}
	got["k"] = "changed by the caller after TableMeta"
	got["extra"] = "x"
	if again, err := e.b.TableMeta(e.ctx, name); err != nil || !maps.Equal(again, map[string]string{"k": "v"}) {
		e.Fatalf("TableMeta = %q, %v; want the Meta given to CreateTable, whatever callers did to their maps", again, err)
	}
}

func testTablesAreIndependent(e *env) {
	t1 := e.createTable(backends.TableOptions{})
	t2 := e.createTable(backends.TableOptions{})
	e.apply(t1, put("k", cell("d", "a", "one", e.ts)))
	e.apply(t2, put("k", cell("d", "a", "two", e.ts)), put("only2", cell("d", "a", "v", e.ts)))
	e.wantCells("t1 row", e.readOne(t1, []byte("k")).Cells, []backends.Cell{cell("d", "a", "one", e.ts)})
	e.wantCells("t2 row", e.readOne(t2, []byte("k")).Cells, []backends.Cell{cell("d", "a", "two", e.ts)})
	if r := e.readOne(t1, []byte("only2")); len(r.Cells) != 0 {
		e.Fatalf("a row written to one table shows in another: %s", fmtCells(r.Cells))
	}
	if err := e.b.DeleteTable(e.ctx, t2); err != nil {
		e.Fatalf("DeleteTable: %v", err)
	}
	e.wantCells("t1 row after deleting t2", e.readOne(t1, []byte("k")).Cells, []backends.Cell{cell("d", "a", "one", e.ts)})
}

func testSplitKeys(e *env) {
	splits := [][]byte{[]byte("g"), []byte("p"), {0xF0}}
	name := e.createTable(backends.TableOptions{SplitKeys: splits})
	ks := keys("a", "g", "m", "p", "pz", "\xf0", "\xff")
	var muts []backends.Mutation
	for _, k := range ks {
		muts = append(muts, backends.Mutation{Key: k, Cells: []backends.Cell{cell("d", "a", string(k), e.ts)}})
	}
	e.apply(name, muts...)
	for _, reverse := range []bool{false, true} {
		rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{Reverse: reverse}))
		if err != nil {
			e.Fatalf("scan (reverse %v): %v", reverse, err)
		}
		if len(rows) != len(ks) {
			e.Fatalf("scan (reverse %v) over split regions = %s, want %d rows", reverse, fmtKeys(rows), len(ks))
		}
	}

}
