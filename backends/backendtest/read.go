package backendtest

import (
	"context"
	"errors"
	"fmt"

	"github.com/brine-kv/brine/backends"
)

var readTests = []test{
	{"PresentAndMissing", testReadPresentAndMissing},
	{"Columns", testReadColumns},
	{"ManyKeys", testReadManyKeys},
	{"NoKeys", testReadNoKeys},
	{"EmptyKey", testReadEmptyKey},
	{"CancelledContext", testReadCancelled},
}

func testReadPresentAndMissing(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("a", cell("d", "q", "va", e.ts)), put("c", cell("x", "q", "vc", e.ts)))
	// Order follows the keys given, duplicates included; missing rows keep their key and have no cells.
	rows := e.read(name, keys("c", "missing", "a", "c", "a\x00", "b"))
	want := [][]backends.Cell{
		{cell("x", "q", "vc", e.ts)}, nil, {cell("d", "q", "va", e.ts)}, {cell("x", "q", "vc", e.ts)}, nil, nil,
	}
	for i, r := range rows {
		e.wantCells(fmt.Sprintf("rows[%d] (%q)", i, r.Key), r.Cells, want[i])
	}
}

func testReadColumns(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r",
		cell("d", "a", "da", e.ts), cell("d", "b", "db", e.ts), cell("d", "c", "dc", e.ts),
		cell("x", "a", "xa", e.ts), cell("x", "b", "xb", e.ts),
	), put("donly", cell("d", "a", "da", e.ts)))
	da, db, dc := cell("d", "a", "da", e.ts), cell("d", "b", "db", e.ts), cell("d", "c", "dc", e.ts)
	xa, xb := cell("x", "a", "xa", e.ts), cell("x", "b", "xb", e.ts)
	tests := []struct {
		name string
		cols []backends.Column
		want []backends.Cell
	}{
		{"all", nil, []backends.Cell{da, db, dc, xa, xb}},
		{"family", []backends.Column{col("x", "")}, []backends.Cell{xa, xb}},
		{"column", []backends.Column{col("d", "b")}, []backends.Cell{db}},
		{"columns out of order", []backends.Column{col("x", "a"), col("d", "c"), col("d", "a")}, []backends.Cell{da, dc, xa}},
		{"family and a column of another", []backends.Column{col("d", ""), col("x", "b")}, []backends.Cell{da, db, dc, xb}},
		{"family and a column in it", []backends.Column{col("x", "a"), col("x", "")}, []backends.Cell{xa, xb}},
		{"same column twice", []backends.Column{col("d", "a"), col("d", "a")}, []backends.Cell{da}},
		{"column not in the row", []backends.Column{col("d", "zz")}, nil},
		{"same qualifier, other family", []backends.Column{col("x", "c")}, nil},
	}
	for _, tt := range tests {
		got := e.readOne(name, []byte("r"), tt.cols...)
		if !cellsEqual(got.Cells, tt.want) {
			e.Errorf("%s: Read with Columns %v = %s, want %s", tt.name, tt.cols, fmtCells(got.Cells), fmtCells(tt.want))
		}
	}
	if r := e.readOne(name, []byte("donly"), col("x", "")); len(r.Cells) != 0 {
		e.Fatalf("row without family x, read with Columns x = %s, want no cells", fmtCells(r.Cells))
	}
}

func testReadManyKeys(e *env) {
	name := e.createTable(backends.TableOptions{})
	const n = 250 // above Tablestore's 100 rows per BatchGetRow
	var muts []backends.Mutation
	var ks [][]byte
	for i := range n {
		k := fmt.Sprintf("k%04d", i)
		ks = append(ks, []byte(k), []byte(k+"-missing"))
		muts = append(muts, put(k, cell("d", "v", k, e.ts)))
	}
	e.apply(name, muts...)
	for i, r := range e.read(name, ks) {
		var want []backends.Cell
		if i%2 == 0 {
			want = []backends.Cell{cell("d", "v", string(r.Key), e.ts)}
		}
		e.wantCells(fmt.Sprintf("rows[%d] (%q)", i, r.Key), r.Cells, want)
	}
}

func testReadNoKeys(e *env) {
	name := e.createTable(backends.TableOptions{})
	rows, err := e.b.Read(e.ctx, name, nil, backends.ReadOptions{})
	if err != nil || len(rows) != 0 {
		e.Fatalf("Read of no keys = %d rows, %v; want none, nil", len(rows), err)
	}
}

func testReadEmptyKey(e *env) {
	name := e.createTable(backends.TableOptions{})
	for _, ks := range [][][]byte{{nil}, {[]byte("a"), {}}} {
		if _, err := e.b.Read(e.ctx, name, ks, backends.ReadOptions{}); !errors.Is(err, backends.ErrInvalidKey) {
			e.Fatalf("Read(%q): %v, want ErrInvalidKey", ks, err)
		}
	}
}

func testReadCancelled(e *env) {
	name := e.createTable(backends.TableOptions{})
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if _, err := e.b.Read(ctx, name, keys("a"), backends.ReadOptions{}); !errors.Is(err, context.Canceled) {
		e.Fatalf("Read with a cancelled context: %v, want context.Canceled", err)
	}
}
