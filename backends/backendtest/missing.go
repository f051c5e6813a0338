package backendtest

import (
	"errors"

	"github.com/brine-kv/brine/backends"
)

var missingTableTests = []test{
	{"NeverCreated", func(e *env) { checkMissing(e, e.tableName()) }},
	{"Deleted", func(e *env) {
		name := e.createTable(backends.TableOptions{})
		e.apply(name, put("a", cell("d", "a", "v", e.ts)))
		if err := e.b.DeleteTable(e.ctx, name); err != nil {
			e.Fatalf("DeleteTable: %v", err)
		}
		checkMissing(e, name)
	}},
}

// checkMissing checks that every operation on a table that is not there fails with ErrTableNotFound,
// as a whole: Apply returns it as err, not per row.
func checkMissing(e *env, name string) {
	e.Helper()
	want := backends.ErrTableNotFound
	if _, err := e.b.TableMeta(e.ctx, name); !errors.Is(err, want) {
		e.Errorf("TableMeta: %v, want ErrTableNotFound", err)
	}
	if err := e.b.DeleteTable(e.ctx, name); !errors.Is(err, want) {
		e.Errorf("DeleteTable: %v, want ErrTableNotFound", err)
	}
	if _, err := e.b.Read(e.ctx, name, keys("a", "b"), backends.ReadOptions{}); !errors.Is(err, want) {
		e.Errorf("Read: %v, want ErrTableNotFound", err)
	}
	if rowErrs, err := e.b.Apply(e.ctx, name, []backends.Mutation{put("a", cell("d", "a", "v", e.ts)), del("b")}); !errors.Is(err, want) {
		e.Errorf("Apply: %v (rowErrs %v), want err ErrTableNotFound", err, rowErrs)
	}
	for _, reverse := range []bool{false, true} {
		rows, err := e.scanAll(e.b.Scan(e.ctx, name, backends.Range{}, backends.ScanOptions{Reverse: reverse}))
		if len(rows) != 0 || !errors.Is(err, want) {
			e.Errorf("Scan (reverse %v): %d rows, %v; want only ErrTableNotFound", reverse, len(rows), err)
		}
	}
}
