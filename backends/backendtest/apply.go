package backendtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brine-kv/brine/backends"
)

var applyTests = []test{
	{"ExplicitTimestamps", testExplicitTimestamps},
	{"ZeroTimestamp", testZeroTimestamp},
	{"FamiliesAndQualifiers", testFamiliesAndQualifiers},
	{"PutKeepsOtherColumns", testPutKeepsOtherColumns},
	{"NewerTimestampWins", testNewerTimestampWins},
	{"DeleteColumns", testDeleteColumns},
	{"DeleteRow", testDeleteRow},
	{"DeleteMissing", testDeleteMissing},
	{"PutAfterDelete", testPutAfterDelete},
	{"PerRowErrors", testPerRowErrors},
	{"KeyLength", testKeyLength},
	{"EmptyBatch", testEmptyBatch},
	{"LargeBatch", testLargeBatch},
	{"SameRowTwiceInBatch", testSameRowTwiceInBatch},
	{"BinaryKeysAndValues", testBinaryKeysAndValues},
	{"Concurrent", testConcurrentApply},
	{"CancelledContext", testApplyCancelled},
	{"NoAliasing", testNoAliasing},
}

func testExplicitTimestamps(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name,
		put("r1", cell("d", "a", "v1", e.ts+1)),
		put("r2", cell("d", "a", "v2", e.ts+2), cell("d", "b", "w2", e.ts+3)),
	)
	rows := e.read(name, keys("r1", "r2"))
	e.wantCells("r1", rows[0].Cells, []backends.Cell{cell("d", "a", "v1", e.ts+1)})
	e.wantCells("r2", rows[1].Cells, []backends.Cell{cell("d", "a", "v2", e.ts+2), cell("d", "b", "w2", e.ts+3)})
}

func testZeroTimestamp(e *env) {
	name := e.createTable(backends.TableOptions{})
	before := time.Now().Add(-e.s.opts.ClockSkew).UnixMilli()
	e.apply(name, put("r", cell("d", "a", "now", 0)))
	after := time.Now().Add(e.s.opts.ClockSkew).UnixMilli()
	got := e.readOne(name, []byte("r")).Cells
	e.wantCells("row written with timestamp 0", got, []backends.Cell{cell("d", "a", "now", anyTS)})
	if ts := got[0].Timestamp; ts < before || ts > after {
		e.Fatalf("timestamp 0 was stored as %d, want the store's now in ms, within [%d, %d]", ts, before, after)
	}
	// A server-stamped write is newer than an explicit version from an hour ago...
	e.apply(name, put("r", cell("d", "a", "old", e.ts)))
	e.wantCells("after an older explicit write", e.readOne(name, []byte("r")).Cells, []backends.Cell{cell("d", "a", "now", got[0].Timestamp)})
	// ...and older than one an hour ahead.
	future := time.Now().Add(time.Hour).UnixMilli()
	e.apply(name, put("r", cell("d", "a", "future", future)))
	e.apply(name, put("r", cell("d", "a", "now again", 0)))
	e.wantCells("after a future explicit write", e.readOne(name, []byte("r")).Cells, []backends.Cell{cell("d", "a", "future", future)})
}

func testFamiliesAndQualifiers(e *env) {
	name := e.createTable(backends.TableOptions{})
	// Written out of order; read back sorted by family, then qualifier.
	e.apply(name, put("r",
		cell("x", "b", "xb", e.ts),
		cell("d", "z", "dz", e.ts),
		cell("x", "a", "xa", e.ts),
		cell("d", "a", "da", e.ts),
		cell("d", "B", "dB", e.ts),
		cell("d", "a1", "da1", e.ts),
	))
	want := []backends.Cell{
		cell("d", "B", "dB", e.ts), cell("d", "a", "da", e.ts), cell("d", "a1", "da1", e.ts),
		cell("d", "z", "dz", e.ts), cell("x", "a", "xa", e.ts), cell("x", "b", "xb", e.ts),
	}
	e.wantCells("row", e.readOne(name, []byte("r")).Cells, want)
	rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil {
		e.Fatalf("Scan: %v", err)
	}
	e.wantRows("scan", rows, []backends.Row{{Key: []byte("r"), Cells: want}})
}

func testPutKeepsOtherColumns(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r", cell("d", "a", "a1", e.ts), cell("x", "c", "c1", e.ts)))
	e.apply(name, put("r", cell("d", "b", "b1", e.ts)))
	e.apply(name, put("r", cell("d", "a", "a2", e.ts+1)))
	e.wantCells("row", e.readOne(name, []byte("r")).Cells, []backends.Cell{
		cell("d", "a", "a2", e.ts+1), cell("d", "b", "b1", e.ts), cell("x", "c", "c1", e.ts),
	})
}

func testNewerTimestampWins(e *env) {
	name := e.createTable(backends.TableOptions{})
	tests := []struct {
		name   string
		writes [][]backends.Cell // one Apply each, in order
		want   backends.Cell
	}{
		{"older after newer", [][]backends.Cell{{cell("d", "a", "new", e.ts+20)}, {cell("d", "a", "old", e.ts+10)}}, cell("d", "a", "new", e.ts+20)},
		{"newer after older", [][]backends.Cell{{cell("d", "a", "old", e.ts+10)}, {cell("d", "a", "new", e.ts+20)}}, cell("d", "a", "new", e.ts+20)},
		{"same timestamp: last write", [][]backends.Cell{{cell("d", "a", "first", e.ts+10)}, {cell("d", "a", "second", e.ts+10)}}, cell("d", "a", "second", e.ts+10)},
		{"one put, newer first", [][]backends.Cell{{cell("d", "a", "new", e.ts+20), cell("d", "a", "old", e.ts+10)}}, cell("d", "a", "new", e.ts+20)},
		{"one put, older first", [][]backends.Cell{{cell("d", "a", "old", e.ts+10), cell("d", "a", "new", e.ts+20)}}, cell("d", "a", "new", e.ts+20)},
	}
	for i, tt := range tests {
		key := fmt.Sprintf("row%d", i)
		for _, cells := range tt.writes {
			e.apply(name, put(key, cells...))
		}
		got := e.readOne(name, []byte(key)).Cells
		if !cellsEqual(got, []backends.Cell{tt.want}) {
			e.Errorf("%s: read %s, want %s (HBase returns the newest version)", tt.name, fmtCells(got), fmtCells([]backends.Cell{tt.want}))
		}
		rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{Start: []byte(key), End: []byte(key + "\x00")}, backends.ScanOptions{}))
		if err != nil || len(rows) != 1 || !cellsEqual(rows[0].Cells, []backends.Cell{tt.want}) {
			e.Errorf("%s: scan %s (%v), want one row with %s", tt.name, fmtKeys(rows), err, fmtCells([]backends.Cell{tt.want}))
		}
	}
}

func testDeleteColumns(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name,
		put("r", cell("d", "a", "a", e.ts), cell("d", "b", "b", e.ts), cell("x", "a", "xa", e.ts)),
		put("other", cell("d", "a", "a", e.ts)),
	)
	// Several versions of d:a: the delete removes them all.
	e.apply(name, put("r", cell("d", "a", "a2", e.ts+1)))
	e.apply(name, del("r", col("d", "a")))
	e.wantCells("after deleting d:a", e.readOne(name, []byte("r")).Cells, []backends.Cell{cell("d", "b", "b", e.ts), cell("x", "a", "xa", e.ts)})
	e.apply(name, del("r", col("d", "b"), col("x", "a"), col("d", "missing")))
	if r := e.readOne(name, []byte("r")); len(r.Cells) != 0 {
		e.Fatalf("row with every column deleted still has %s", fmtCells(r.Cells))
	}
	rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil {
		e.Fatalf("Scan: %v", err)
	}
	e.wantRows("scan after deleting every column of r", rows, []backends.Row{{Key: []byte("other"), Cells: []backends.Cell{cell("d", "a", "a", e.ts)}}})
}

func testDeleteRow(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name,
		put("a", cell("d", "a", "1", e.ts)),
		put("b", cell("d", "a", "1", e.ts), cell("x", "q", "2", e.ts+5)),
		put("c", cell("d", "a", "1", e.ts)),
	)
	e.apply(name, del("b"))
	rows := e.read(name, keys("a", "b", "c"))
	if len(rows[1].Cells) != 0 {
		e.Fatalf("deleted row still has %s", fmtCells(rows[1].Cells))
	}
	if len(rows[0].Cells) != 1 || len(rows[2].Cells) != 1 {
		e.Fatalf("deleting row b changed its neighbours: %s, %s", fmtCells(rows[0].Cells), fmtCells(rows[2].Cells))
	}
	got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil {
		e.Fatalf("Scan: %v", err)
	}
	if len(got) != 2 || string(got[0].Key) != "a" || string(got[1].Key) != "c" {
		e.Fatalf("scan after deleting b = %s, want [a c]", fmtKeys(got))
	}
}

func testDeleteMissing(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r", cell("d", "a", "v", e.ts)))
	e.apply(name, del("nothing-here"), del("nothing-here-either", col("d", "a")), del("r", col("x", "absent")))
	e.wantCells("row", e.readOne(name, []byte("r")).Cells, []backends.Cell{cell("d", "a", "v", e.ts)})
}

func testPutAfterDelete(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name, put("r", cell("d", "a", "v", e.ts)))
	e.apply(name, del("r"))
	// HBase delete markers hide versions at or below the delete's time, so the rewrite carries a
	// version after it.
	future := time.Now().Add(time.Hour).UnixMilli()
	e.apply(name, put("r", cell("d", "b", "again", future)))
	e.wantCells("row rewritten after its delete", e.readOne(name, []byte("r")).Cells, []backends.Cell{cell("d", "b", "again", future)})
}

func testPerRowErrors(e *env) {
	name := e.createTable(backends.TableOptions{})
	muts := []backends.Mutation{
		put("k0", cell("d", "a", "v0", e.ts)),
		{Key: nil, Cells: []backends.Cell{cell("d", "a", "nil key", e.ts)}},
		put("k2", cell("d", "a", "v2", e.ts)),
		{Key: []byte{}, Delete: true},
		put("k4", cell("d", "a", "v4", e.ts)),
	}
	rowErrs, err := e.b.Apply(e.ctx, name, muts)
	if err != nil {
		e.Fatalf("Apply: %v; want per-row errors only", err)
	}
	if len(rowErrs) != len(muts) {
		e.Fatalf("rowErrs = %v, want %d entries", rowErrs, len(muts))
	}
	for i, rerr := range rowErrs {
		bad := i == 1 || i == 3
		if bad && !errors.Is(rerr, backends.ErrInvalidKey) {
			e.Errorf("rowErrs[%d] = %v, want ErrInvalidKey", i, rerr)
		}
		if !bad && rerr != nil {
			e.Errorf("rowErrs[%d] = %v, want nil", i, rerr)
		}
	}
	rows := e.read(name, keys("k0", "k2", "k4"))
	for i, r := range rows {
		want := []backends.Cell{cell("d", "a", fmt.Sprintf("v%d", 2*i), e.ts)}
		e.wantCells(fmt.Sprintf("row %q, valid in a batch with invalid rows", r.Key), r.Cells, want)
	}
}

func testKeyLength(e *env) {
	n := e.s.opts.MaxKeyLen
	name := e.createTable(backends.TableOptions{})
	longest := bytes.Repeat([]byte{'k'}, n)
	tooLong := bytes.Repeat([]byte{'k'}, n+1)
	rowErrs, err := e.b.Apply(e.ctx, name, []backends.Mutation{
		{Key: longest, Cells: []backends.Cell{cell("d", "a", "longest", e.ts)}},
		{Key: tooLong, Cells: []backends.Cell{cell("d", "a", "too long", e.ts)}},
	})
	if err != nil {
		e.Fatalf("Apply: %v", err)
	}
	if len(rowErrs) != 2 || rowErrs[0] != nil || !errors.Is(rowErrs[1], backends.ErrInvalidKey) {
		e.Fatalf("rowErrs = %v, want [nil ErrInvalidKey]", rowErrs)
	}
	e.wantCells("row with the longest key", e.readOne(name, longest).Cells, []backends.Cell{cell("d", "a", "longest", e.ts)})
	if _, err := e.b.Read(e.ctx, name, [][]byte{longest, tooLong}, backends.ReadOptions{}); !errors.Is(err, backends.ErrInvalidKey) {
		e.Fatalf("Read with a key of %d bytes: %v, want ErrInvalidKey", n+1, err)
	}
	rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{Start: longest}, backends.ScanOptions{}))
	if err != nil || len(rows) != 1 || !bytes.Equal(rows[0].Key, longest) {
		e.Fatalf("scan from the longest key = %s, %v", fmtKeys(rows), err)
	}
	// A key that can be written can be read by range: bounds past the limit (the single-row range of
	// the longest key ends one byte beyond it) are clamped, since every stored key is shorter.
	single := append(bytes.Clone(longest), 0)
	for _, r := range []backends.Range{{Start: longest, End: single}, {Start: longest[:n-1], End: single}, {End: append(single, 0xFF)}} {
		for _, reverse := range []bool{false, true} {
			rows, err := e.scanAll(e.b.Scan(e.ctx, name, r, backends.ScanOptions{Reverse: reverse}))
			if err != nil || len(rows) != 1 || !bytes.Equal(rows[0].Key, longest) {
				e.Fatalf("scan of [%d bytes, %d bytes) (reverse %v) = %s, %v; want the row with the longest key", len(r.Start), len(r.End), reverse, fmtKeys(rows), err)
			}
		}
	}
	beyond := append(bytes.Clone(tooLong), 0)
	for _, reverse := range []bool{false, true} {
		rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{Start: tooLong, End: beyond}, backends.ScanOptions{Reverse: reverse}))
		if err != nil || len(rows) != 0 {
			e.Fatalf("scan of a range holding only keys over the limit (reverse %v) = %s, %v; want no rows", reverse, fmtKeys(rows), err)
		}
	}
}

func testEmptyBatch(e *env) {
	name := e.createTable(backends.TableOptions{})
	for _, muts := range [][]backends.Mutation{nil, {}} {
		rowErrs, err := e.b.Apply(e.ctx, name, muts)
		if err != nil || rowErrs != nil {
			e.Fatalf("Apply of no mutations = %v, %v; want nil, nil", rowErrs, err)
		}
	}
}

func testLargeBatch(e *env) {
	name := e.createTable(backends.TableOptions{})
	const n = 600 // above Tablestore's 200 rows per BatchWriteRow and HBase's default batch sizes
	muts := make([]backends.Mutation, n)
	ks := make([][]byte, n)
	for i := range muts {
		ks[i] = fmt.Appendf(nil, "row%05d", (i*7919)%n) // not in key order
		muts[i] = backends.Mutation{Key: ks[i], Cells: []backends.Cell{cell("d", "v", fmt.Sprint(i), e.ts)}}
	}
	e.apply(name, muts...)
	rows := e.read(name, ks)
	for i, r := range rows {
		e.wantCells(fmt.Sprintf("row %q", r.Key), r.Cells, []backends.Cell{cell("d", "v", fmt.Sprint(i), e.ts)})
	}
	got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil || len(got) != n {
		e.Fatalf("scan after a batch of %d rows: %d rows, %v", n, len(got), err)
	}
}

func testSameRowTwiceInBatch(e *env) {
	name := e.createTable(backends.TableOptions{})
	e.apply(name,
		put("r", cell("d", "a", "first", e.ts)),
		put("s", cell("d", "a", "s", e.ts)),
		put("r", cell("d", "b", "second", e.ts)),
		put("r", cell("d", "c", "old", e.ts+1)),
		put("r", cell("d", "c", "new", e.ts+2)),
	)
	e.wantCells("row written by several mutations of one Apply", e.readOne(name, []byte("r")).Cells, []backends.Cell{
		cell("d", "a", "first", e.ts), cell("d", "b", "second", e.ts), cell("d", "c", "new", e.ts+2),
	})
}

func testBinaryKeysAndValues(e *env) {
	name := e.createTable(backends.TableOptions{})
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i * 31)
	}
	ks := [][]byte{{0x00}, {0x00, 0x00}, {0xFF}, {0xFF, 0xFF}, {0x00, 0xFF, 0x00}, []byte("k\x00ey"), {0x80}}
	var muts []backends.Mutation
	for i, k := range ks {
		muts = append(muts, backends.Mutation{Key: k, Cells: []backends.Cell{
			{Family: "d", Qualifier: "bin", Value: []byte{0x00, byte(i), 0xFF, 0x00}, Timestamp: e.ts},
			{Family: "d", Qualifier: "big", Value: big, Timestamp: e.ts},
		}})
	}
	e.apply(name, muts...)
	for i, r := range e.read(name, ks) {
		e.wantCells(fmt.Sprintf("row %q", r.Key), r.Cells, []backends.Cell{
			{Family: "d", Qualifier: "big", Value: big, Timestamp: e.ts},
			{Family: "d", Qualifier: "bin", Value: []byte{0x00, byte(i), 0xFF, 0x00}, Timestamp: e.ts},
		})
	}
}

func testConcurrentApply(e *env) {
	name := e.createTable(backends.TableOptions{})
	const writers, batches, rows = 4, 5, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches)
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				var muts []backends.Mutation
				for r := range rows {
					muts = append(muts, put(fmt.Sprintf("w%d/b%d/r%02d", w, b, r), cell("d", "v", "x", e.ts)))
				}
				rowErrs, err := e.b.Apply(e.ctx, name, muts)
				if err == nil && rowErrs != nil {
					err = fmt.Errorf("rowErrs %v", rowErrs)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.Fatalf("concurrent Apply: %v", err)
	}
	got, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil || len(got) != writers*batches*rows {
		e.Fatalf("scan after concurrent writes: %d rows, %v; want %d", len(got), err, writers*batches*rows)
	}
}

func testApplyCancelled(e *env) {
	name := e.createTable(backends.TableOptions{})
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	_, err := e.b.Apply(ctx, name, []backends.Mutation{put("r", cell("d", "a", "v", e.ts))})
	if !errors.Is(err, context.Canceled) {
		e.Fatalf("Apply with a cancelled context: %v, want context.Canceled", err)
	}
	if r := e.readOne(name, []byte("r")); len(r.Cells) != 0 {
		e.Fatalf("Apply with a cancelled context wrote %s", fmtCells(r.Cells))
	}
}

func testNoAliasing(e *env) {
	name := e.createTable(backends.TableOptions{})
	key := []byte("row")
	val := []byte("value")
	e.apply(name, backends.Mutation{Key: key, Cells: []backends.Cell{{Family: "d", Qualifier: "a", Value: val, Timestamp: e.ts}}})
	key[0], val[0] = 'X', 'X' // the caller reuses its buffers
	want := []backends.Cell{cell("d", "a", "value", e.ts)}
	r := e.readOne(name, []byte("row"))
	e.wantCells("row after the caller changed its buffers", r.Cells, want)
	r.Cells[0].Value[0] = 'Y'
	r.Key[0] = 'Y'
	rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{}))
	if err != nil || len(rows) != 1 {
		e.Fatalf("Scan: %s, %v", fmtKeys(rows), err)
	}
	rows[0].Cells[0].Value[0] = 'Z'
	rows[0].Key[0] = 'Z'
	e.wantRows("rows after the caller changed what reads returned", e.read(name, keys("row")), []backends.Row{{Key: []byte("row"), Cells: want}})
}
