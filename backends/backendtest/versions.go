package backendtest

import (
	"errors"
	"fmt"

	"github.com/brine-kv/brine/backends"
)

var versionTests = []test{
	{"KeptAndRead", testVersionsKeptAndRead},
	{"OneVersionByDefault", testOneVersionByDefault},
	{"TimeRangeMissesRow", testTimeRangeMissesRow},
	{"DeleteOneVersion", testDeleteOneVersion},
}

// testVersionsKeptAndRead: a table keeps MaxVersions versions of each column; a read returns the
// newest by default, up to MaxVersions of them newest first when asked, and a time range applies
// before the version count. Reads and scans agree.
func testVersionsKeptAndRead(e *env) {
	name := e.createTable(backends.TableOptions{MaxVersions: 3})
	for i := 1; i <= 4; i++ {
		e.apply(name, put("r", cell("d", "a", fmt.Sprintf("v%d", i), e.ts+int64(i))))
	}
	// One put carrying two versions of a column keeps both.
	e.apply(name, put("r", cell("x", "b", "old", e.ts+1), cell("x", "b", "new", e.ts+2)), put("s", cell("d", "a", "s", e.ts)))
	v := func(i int) backends.Cell { return cell("d", "a", fmt.Sprintf("v%d", i), e.ts+int64(i)) }
	xNew, xOld := cell("x", "b", "new", e.ts+2), cell("x", "b", "old", e.ts+1)
	tests := []struct {
		name string
		opts backends.ReadOptions
		want []backends.Cell
	}{
		{"default: the newest", backends.ReadOptions{}, []backends.Cell{v(4), xNew}},
		{"two versions", backends.ReadOptions{MaxVersions: 2}, []backends.Cell{v(4), v(3), xNew, xOld}},
		{"more than kept", backends.ReadOptions{MaxVersions: 10}, []backends.Cell{v(4), v(3), v(2), xNew, xOld}},
		{"time range", backends.ReadOptions{MaxVersions: 10, TimeRange: backends.TimeRange{From: e.ts + 2, To: e.ts + 4}}, []backends.Cell{v(3), v(2), xNew}},
		{"time range, newest in it", backends.ReadOptions{TimeRange: backends.TimeRange{From: e.ts + 1, To: e.ts + 4}}, []backends.Cell{v(3), xNew}},
		{"open-ended time range", backends.ReadOptions{MaxVersions: 10, TimeRange: backends.TimeRange{From: e.ts + 3}}, []backends.Cell{v(4), v(3)}},
		{"columns and versions", backends.ReadOptions{MaxVersions: 2, Columns: []backends.Column{col("x", "")}}, []backends.Cell{xNew, xOld}},
	}
	for _, tt := range tests {
		rows, err := e.b.Read(e.ctx, name, keys("r"), tt.opts)
		if err != nil || len(rows) != 1 {
			e.Fatalf("%s: Read: %d rows, %v", tt.name, len(rows), err)
		}
		if !cellsEqual(rows[0].Cells, tt.want) {
			e.Errorf("%s: Read = %s, want %s", tt.name, fmtCells(rows[0].Cells), fmtCells(tt.want))
		}
		got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{End: []byte("s")}, backends.ScanOptions{ReadOptions: tt.opts}))
		if err != nil || len(got) != 1 || !cellsEqual(got[0].Cells, tt.want) {
			e.Errorf("%s: Scan = %s (%v), want one row with %s", tt.name, fmtKeys(got), err, fmtCells(tt.want))
		}
	}
	// A delete removes every version.
	e.apply(name, del("r", col("d", "a")))
	rows, err := e.b.Read(e.ctx, name, keys("r"), backends.ReadOptions{MaxVersions: 10})
	if err != nil || !cellsEqual(rows[0].Cells, []backends.Cell{xNew, xOld}) {
		e.Fatalf("after deleting d:a, Read of all versions = %v, %v; want only x:b's", rows, err)
	}
}

// testOneVersionByDefault: a table created without MaxVersions keeps one version.
func testOneVersionByDefault(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r", cell("d", "a", "old", e.ts+1)))
	e.apply(name, put("r", cell("d", "a", "new", e.ts+2)))
	rows, err := e.b.Read(e.ctx, name, keys("r"), backends.ReadOptions{MaxVersions: 5})
	if err != nil || !cellsEqual(rows[0].Cells, []backends.Cell{cell("d", "a", "new", e.ts+2)}) {
		e.Fatalf("Read of 5 versions from a one-version table = %v, %v; want the newest only", rows, err)
	}
}

// testTimeRangeMissesRow: a row with no version in the time range has no cells in a read and is
// skipped by a scan.
func testTimeRangeMissesRow(e *env) {
	name := e.createTable(backends.TableOptions{MaxVersions: 2})
	e.apply(name, put("a", cell("d", "a", "a", e.ts)), put("b", cell("d", "a", "b", e.ts+10)), put("c", cell("d", "a", "c", e.ts)))
	opts := backends.ReadOptions{TimeRange: backends.TimeRange{From: e.ts + 5, To: e.ts + 20}}
	rows, err := e.b.Read(e.ctx, name, keys("a", "b"), opts)
	if err != nil || len(rows) != 2 || len(rows[0].Cells) != 0 || len(rows[1].Cells) != 1 {
		e.Fatalf("Read in a time range = %v, %v; want a without cells, b with one", rows, err)
	}
	got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: opts}))
	e.wantRows(fmt.Sprintf("scan in a time range (err %v)", err), got, []backends.Row{{Key: []byte("b"), Cells: []backends.Cell{cell("d", "a", "b", e.ts+10)}}})
	got, err = e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{ReadOptions: opts, Limit: 1}))
	e.wantRows(fmt.Sprintf("scan in a time range, limit 1 (err %v)", err), got, []backends.Row{{Key: []byte("b"), Cells: []backends.Cell{cell("d", "a", "b", e.ts+10)}}})
}

// testDeleteOneVersion: a delete's cell with a timestamp removes that one version of its column and
// nothing else (an older version then shows; a version not there is no change), beside deletes of
// every version in the same mutation, through Apply and CheckAndMutate alike; a write stamped after
// it shows. A family with a timestamp is refused, and nothing of its mutation is applied.
func testDeleteOneVersion(e *env) {
	name := e.createTable(backends.TableOptions{MaxVersions: 3})
	v := func(q string, i int) backends.Cell { return cell("d", q, fmt.Sprintf("%s%d", q, i), e.ts+int64(i)) }
	xc := cell("x", "c", "c", e.ts+2)
	e.apply(name, put("r", v("a", 1), v("a", 2), v("a", 3), v("b", 2), xc))
	one := func(c backends.Cell) backends.Cell {
		return backends.Cell{Family: c.Family, Qualifier: c.Qualifier, Timestamp: c.Timestamp}
	}
	all := func() []backends.Cell {
		e.Helper()
		rows, err := e.b.Read(e.ctx, name, keys("r"), backends.ReadOptions{MaxVersions: 10})
		if err != nil || len(rows) != 1 {
			e.Fatalf("Read of every version: %d rows, %v", len(rows), err)
		}
		return rows[0].Cells
	}

	e.apply(name, backends.Mutation{Key: []byte("r"), Delete: true, Cells: []backends.Cell{one(v("a", 3)), one(v("b", 1))}})
	e.wantCells("every version after deleting d:a's newest and a d:b version not there", all(), []backends.Cell{v("a", 2), v("a", 1), v("b", 2), xc})
	e.wantCells("newest after deleting d:a's newest", e.readOne(name, []byte("r")).Cells, []backends.Cell{v("a", 2), v("b", 2), xc})

	e.apply(name, backends.Mutation{Key: []byte("r"), Delete: true, Cells: []backends.Cell{one(v("a", 1)), {Family: "x", Qualifier: "c"}}})
	e.wantCells("after deleting d:a's oldest and every x:c", all(), []backends.Cell{v("a", 2), v("b", 2)})

	later := v("a", 5)
	e.apply(name, put("r", later))
	e.wantCells("a write stamped after the deleted versions", all(), []backends.Cell{later, v("a", 2), v("b", 2)})

	applied, err := e.b.CheckAndMutate(e.ctx, name, backends.Condition{Family: "d", Qualifier: "b", Value: []byte("b2")},
		backends.Mutation{Key: []byte("r"), Delete: true, Cells: []backends.Cell{one(later)}})
	if err != nil || !applied {
		e.Fatalf("CheckAndMutate deleting one version = %v, %v; want applied", applied, err)
	}
	e.wantCells("after CheckAndMutate deleted d:a's newest", all(), []backends.Cell{v("a", 2), v("b", 2)})

	var rowErrs []error
	bad := backends.Mutation{Key: []byte("r"), Delete: true, Cells: []backends.Cell{one(v("b", 2)), {Family: "d", Timestamp: e.ts + 2}}}
	rowErrs, err = e.b.Apply(e.ctx, name, []backends.Mutation{bad})
	if err == nil && len(rowErrs) == 1 {
		err = rowErrs[0]
	}
	if !errors.Is(err, backends.ErrInvalidArgument) {
		e.Errorf("Apply deleting one version of a whole family: %v (row errors %v), want ErrInvalidArgument", err, rowErrs)
	}
	e.wantCells("after the refused delete", all(), []backends.Cell{v("a", 2), v("b", 2)})
}
