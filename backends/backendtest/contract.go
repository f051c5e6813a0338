package backendtest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
)

// contractTests are the row rules where stores once differed: each is stated once here and
// every driver runs it.
var contractTests = []test{
	{"DeleteFamily", testDeleteFamily},
	{"PutWithoutCells", testPutWithoutCells},
	{"UnknownFamily", testUnknownFamily},
	{"DeleteFutureStamped", testDeleteFutureStamped},
	{"WriteAfterDeleteOfPastStamps", testWriteAfterDeleteOfPastStamps},
}

// testDeleteFamily: a Column with an empty Qualifier names the whole family, in a delete as in a read.
func testDeleteFamily(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name,
		put("r", cell("d", "a", "da", e.ts), cell("d", "b", "db", e.ts+1), cell("x", "a", "xa", e.ts)),
		put("s", cell("d", "a", "da", e.ts), cell("x", "a", "xa", e.ts), cell("x", "b", "xb", e.ts)),
		put("other", cell("d", "a", "keep", e.ts)),
	)
	e.apply(name, del("r", col("d", "")), del("s", col("x", ""), col("d", "a")), del("missing", col("d", "")))
	rows := e.read(name, keys("r", "s", "other"))
	e.wantCells("r after deleting family d", rows[0].Cells, []backends.Cell{cell("x", "a", "xa", e.ts)})
	e.wantCells("s after deleting family x and d:a", rows[1].Cells, nil)
	e.wantCells("other row", rows[2].Cells, []backends.Cell{cell("d", "a", "keep", e.ts)})
	got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil {
		e.Fatalf("Scan: %v", err)
	}
	e.wantRows("scan after the family deletes", got, []backends.Row{
		{Key: []byte("other"), Cells: []backends.Cell{cell("d", "a", "keep", e.ts)}},
		{Key: []byte("r"), Cells: []backends.Cell{cell("x", "a", "xa", e.ts)}},
	})
	// The family is empty, not gone: it takes writes again.
	e.apply(name, put("r", cell("d", "c", "dc", e.ts+2)))
	e.wantCells("r rewritten in family d", e.readOne(name, []byte("r")).Cells,
		[]backends.Cell{cell("d", "c", "dc", e.ts+2), cell("x", "a", "xa", e.ts)})
}

// testPutWithoutCells: a put with no cells is bad input on every store, refused for its row alone.
func testPutWithoutCells(e *env) {
	name := e.createTable(backends.TableOptions{})
	rowErrs, err := e.b.Apply(e.ctx, name, []backends.Mutation{
		{Key: []byte("empty")},
		{Key: []byte("empty2"), Cells: []backends.Cell{}},
		put("ok", cell("d", "a", "v", e.ts)),
	})
	if err != nil {
		e.Fatalf("Apply: %v; want per-row errors", err)
	}
	if len(rowErrs) != 3 || !errors.Is(rowErrs[0], backends.ErrInvalidArgument) ||
		!errors.Is(rowErrs[1], backends.ErrInvalidArgument) || rowErrs[2] != nil {
		e.Fatalf("rowErrs = %v, want [ErrInvalidArgument ErrInvalidArgument nil]", rowErrs)
	}
	e.wantCells("row beside the puts without cells", e.readOne(name, []byte("ok")).Cells, []backends.Cell{cell("d", "a", "v", e.ts)})
}

// testUnknownFamily: a table created with Families refuses every other family, in writes, deletes,
// reads and scans, with ErrInvalidArgument and a one-line message (a server's stack trace may hang
// off the error chain, not off its text).
func testUnknownFamily(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r", cell("d", "a", "v", e.ts)))
	oneLine := func(what string, err error) {
		e.Helper()
		if !errors.Is(err, backends.ErrInvalidArgument) {
			e.Errorf("%s: %v, want ErrInvalidArgument", what, err)
		} else if msg := err.Error(); strings.Contains(msg, "\n") {
			e.Errorf("%s: error text spans lines (a stack trace?):\n%s", what, msg)
		}
	}
	rowErrs, err := e.b.Apply(e.ctx, name, []backends.Mutation{
		put("w", cell("zz", "a", "v", e.ts)),
		put("w2", cell("d", "a", "v", e.ts), cell("zz", "a", "v", e.ts)),
		del("r", col("zz", "")),
		del("r", col("zz", "a")),
		put("ok", cell("x", "a", "v", e.ts)),
	})
	if err != nil {
		e.Fatalf("Apply: %v; want per-row errors", err)
	}
	if len(rowErrs) != 5 || rowErrs[4] != nil {
		e.Fatalf("rowErrs = %v, want 5 entries, the last nil", rowErrs)
	}
	for i := range 4 {
		oneLine(fmt.Sprintf("Apply naming family zz, mutation %d", i), rowErrs[i])
	}
	rows := e.read(name, keys("w", "w2", "ok", "r"))
	for _, r := range rows[:2] {
		e.wantCells("row "+string(r.Key)+" refused for family zz", r.Cells, nil)
	}
	e.wantCells("row ok", rows[2].Cells, []backends.Cell{cell("x", "a", "v", e.ts)})
	e.wantCells("row r", rows[3].Cells, []backends.Cell{cell("d", "a", "v", e.ts)})

	for _, cols := range [][]backends.Column{{col("zz", "")}, {col("zz", "a")}, {col("d", ""), col("zz", "q")}} {
		_, err := e.b.Read(e.ctx, name, keys("r"), backends.ReadOptions{Columns: cols})
		oneLine("Read of columns "+fmtColumns(cols), err)
		got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: backends.ReadOptions{Columns: cols}}))
		if len(got) != 0 {
			e.Errorf("Scan of columns %s returned %s before its error", fmtColumns(cols), fmtKeys(got))
		}
		oneLine("Scan of columns "+fmtColumns(cols), err)
	}
}

// testDeleteFutureStamped: a delete removes every version the row holds, even versions stamped later
// than the store's clock (a client clock ahead of the server's), and does not hide writes stamped
// after the newest version it removed.
func testDeleteFutureStamped(e *env) {
	name := e.createTable(backends.TableOptions{})
	future := time.Now().Add(time.Hour).UnixMilli()
	e.apply(name,
		put("row", cell("d", "a", "f", future), cell("x", "b", "f", future-1)),
		put("col", cell("d", "a", "f", future), cell("d", "b", "past", e.ts)),
		put("fam", cell("d", "a", "f", future), cell("d", "b", "f", future+1), cell("x", "a", "past", e.ts)),
	)
	e.apply(name, del("row"), del("col", col("d", "a")), del("fam", col("d", "")))
	rows := e.read(name, keys("row", "col", "fam"))
	e.wantCells("row deleted whole", rows[0].Cells, nil)
	e.wantCells("row after deleting d:a", rows[1].Cells, []backends.Cell{cell("d", "b", "past", e.ts)})
	e.wantCells("row after deleting family d", rows[2].Cells, []backends.Cell{cell("x", "a", "past", e.ts)})

	later := future + 10
	e.apply(name, put("row", cell("d", "a", "later", later)), put("col", cell("d", "a", "later", later)), put("fam", cell("d", "a", "later", later)))
	rows = e.read(name, keys("row", "col", "fam"))
	e.wantCells("row rewritten after the delete", rows[0].Cells, []backends.Cell{cell("d", "a", "later", later)})
	e.wantCells("col rewritten after the delete", rows[1].Cells, []backends.Cell{cell("d", "a", "later", later), cell("d", "b", "past", e.ts)})
	e.wantCells("fam rewritten after the delete", rows[2].Cells, []backends.Cell{cell("d", "a", "later", later), cell("x", "a", "past", e.ts)})
}

// testWriteAfterDeleteOfPastStamps: after a delete of cells stamped in the past, a write stamped by the
// store (timestamp 0) is visible on every store.
func testWriteAfterDeleteOfPastStamps(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r", cell("d", "a", "old", e.ts), cell("x", "a", "old", e.ts)))
	e.apply(name, del("r", col("d", "a")))
	e.apply(name, del("r"))
	e.apply(name, put("r", cell("d", "a", "now", 0)))
	e.wantCells("row written after its deletes", e.readOne(name, []byte("r")).Cells, []backends.Cell{cell("d", "a", "now", anyTS)})
}

func fmtColumns(cols []backends.Column) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Family + ":" + c.Qualifier
	}
	return "[" + strings.Join(parts, " ") + "]"
}
