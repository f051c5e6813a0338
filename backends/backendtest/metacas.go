package backendtest

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/brine-kv/brine/backends"
)

var metaRewriteTests = []test{
	{"ReplacesIfUnchanged", testRewriteMeta},
	{"MissingTable", testRewriteMetaMissing},
	{"ConcurrentNoLostUpdate", testRewriteMetaConcurrent},
	{"RecreatedTableStartsOver", testRewriteMetaRecreate},
}

func (e *env) wantMeta(table string, want map[string]string) {
	e.Helper()
	got, err := e.b.TableMeta(e.ctx, table)
	if err != nil {
		e.Fatalf("TableMeta: %v", err)
	}
	if !maps.Equal(got, want) {
		e.Fatalf("TableMeta = %v, want %v", got, want)
	}
}

// testRewriteMeta: a rewrite from the stored meta replaces it; one from any other fails with
// ErrMetaChanged and changes nothing.
func testRewriteMeta(e *env) {
	mr := e.b
	created := map[string]string{"brine.salt": "hash:4", "empty": ""}
	name := e.createTable(backends.TableOptions{Meta: created})
	next := map[string]string{"brine.salt": "hash:4", "brine.index.a": "x|y", "empty": ""}
	if err := mr.RewriteTableMeta(e.ctx, name, created, next); err != nil {
		e.Fatalf("RewriteTableMeta from the stored meta: %v", err)
	}
	e.wantMeta(name, next)
	if err := mr.RewriteTableMeta(e.ctx, name, created, map[string]string{"lost": "1"}); !errors.Is(err, backends.ErrMetaChanged) {
		e.Fatalf("RewriteTableMeta from an old meta: %v, want ErrMetaChanged", err)
	}
	e.wantMeta(name, next)
	if err := mr.RewriteTableMeta(e.ctx, name, next, nil); err != nil {
		e.Fatalf("RewriteTableMeta to nil: %v", err)
	}
	e.wantMeta(name, map[string]string{})
	// nil and empty are the same meta.
	if err := mr.RewriteTableMeta(e.ctx, name, nil, created); err != nil {
		e.Fatalf("RewriteTableMeta from nil: %v", err)
	}
	e.wantMeta(name, created)
}

func testRewriteMetaMissing(e *env) {
	name := e.tableName()
	err := e.b.RewriteTableMeta(e.ctx, name, nil, map[string]string{"a": "b"})
	if !errors.Is(err, backends.ErrTableNotFound) {
		e.Fatalf("RewriteTableMeta of a missing table: %v, want ErrTableNotFound", err)
	}
	if _, err := e.b.TableMeta(e.ctx, name); !errors.Is(err, backends.ErrTableNotFound) {
		e.Fatalf("TableMeta after a failed rewrite: %v, want ErrTableNotFound", err)
	}
}

// testRewriteMetaConcurrent: writers that each add their own key by read, change, rewrite (again on
// ErrMetaChanged) lose none of them: the rewrite is a compare-and-set.
func testRewriteMetaConcurrent(e *env) {
	mr := e.b
	name := e.createTable(backends.TableOptions{Meta: map[string]string{"base": "1"}})
	const writers, keysEach = 4, 3
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for k := range keysEach {
				for {
					cur, err := e.b.TableMeta(e.ctx, name)
					if err != nil {
						errs <- err
						return
					}
					next := maps.Clone(cur)
					next[fmt.Sprintf("w%d_%d", w, k)] = "1"
					err = mr.RewriteTableMeta(e.ctx, name, cur, next)
					if err == nil {
						break
					}
					if !errors.Is(err, backends.ErrMetaChanged) {
						errs <- err
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.Fatalf("rewrite: %v", err)
	}
	want := map[string]string{"base": "1"}
	for w := range writers {
		for k := range keysEach {
			want[fmt.Sprintf("w%d_%d", w, k)] = "1"
		}
	}
	e.wantMeta(name, want)
}

// testRewriteMetaRecreate: a table deleted and created again has the meta of its own creation, not
// the one rewritten for the table before it.
func testRewriteMetaRecreate(e *env) {
	mr := e.b
	first := map[string]string{"gen": "1"}
	name := e.createTable(backends.TableOptions{Meta: first})
	if err := mr.RewriteTableMeta(e.ctx, name, first, map[string]string{"gen": "1", "rewritten": "yes"}); err != nil {
		e.Fatalf("RewriteTableMeta: %v", err)
	}
	if err := e.b.DeleteTable(e.ctx, name); err != nil {
		e.Fatalf("DeleteTable: %v", err)
	}
	second := map[string]string{"gen": "2"}
	if err := e.b.CreateTable(e.ctx, name, backends.TableOptions{Families: []string{"d", "x"}, Meta: second}); err != nil {
		e.Fatalf("CreateTable again: %v", err)
	}
	e.wantMeta(name, second)
	if err := mr.RewriteTableMeta(e.ctx, name, second, map[string]string{"gen": "2", "b": "c"}); err != nil {
		e.Fatalf("RewriteTableMeta of the new table: %v", err)
	}
	e.wantMeta(name, map[string]string{"gen": "2", "b": "c"})
}
