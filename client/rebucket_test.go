package client_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// Timings of the rebucket tests: handles refresh their view far more often than a step waits, so a
// write that is slow on a loaded machine still lands well inside the fence.
const (
	testRefresh = 5 * time.Millisecond
	testFence   = 150 * time.Millisecond
)

func rebucketStores() map[string]func(t *testing.T) backends.Backend {
	return map[string]func(t *testing.T) backends.Backend{
		"memory": func(*testing.T) backends.Backend { return memory.New() },
		"local": func(t *testing.T) backends.Backend {
			s, err := local.Open(context.Background(), local.Config{Path: t.TempDir() + "/db"})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"faulty": func(*testing.T) backends.Backend { return faulty.New(memory.New(), faulty.Config{}) },
		"tablestore": func(t *testing.T) backends.Backend {
			srv := tablestoretest.NewServer()
			t.Cleanup(srv.Close)
			return tablestore.New(srv.NewClient(nil), tablestore.Options{})
		},
	}
}

// TestRebucketLive moves a table to a new bucket count on every store while writers (one handle per
// client, all opened before the rebucket), a scanner and a reader run; the result equals the
// reference, no scan ever missed or repeated a row, and the old table is gone.
func TestRebucketLive(t *testing.T) {
	cases := []struct{ store, from, to string }{
		{"memory", "hash:4", "hash:16"},
		{"memory", "hash:16", "hash:4"},
		{"local", "hash:4", "hash:8"},
		{"faulty", "hash:8", "hash:2"},
		{"tablestore", "hash:2", "hash:4"},
	}
	stores := rebucketStores()
	for _, tc := range cases {
		t.Run(tc.store+"/"+tc.from+"->"+tc.to, func(t *testing.T) {
			ctx := context.Background()
			b := stores[tc.store](t)
			c := client.New(b, client.WithRouteRefresh(testRefresh))
			defer c.Close()
			tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, tc.from)})
			if err != nil {
				t.Fatal(err)
			}
			w := preload(t, tbl, 200, 120)
			// Other processes' handles: their own clients over the same store.
			var handles []*client.Table
			for range 3 {
				other, err := client.New(b, client.WithRouteRefresh(testRefresh)).OpenTable(ctx, "t", nil)
				if err != nil {
					t.Fatal(err)
				}
				handles = append(handles, other)
			}
			w.start(1, 120, handles)
			var states []string
			err = tbl.Rebucket(ctx, testkit.Salter(t, tc.to), client.RebucketOptions{
				Fence: testFence, Grace: testFence,
				Progress: func(p client.RebucketProgress) { states = append(states, p.State) },
			})
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * testRefresh) // let the writers go on in the new table for a while
			w.stop(tbl)
			if want := []string{"pause", "migrate", "copied", "switched", "", ""}; !slices.Equal(states[:2], want[:2]) || states[len(states)-1] != "" {
				t.Errorf("progress states %q, want them to run %q", states, want)
			}
			names, err := c.Tables(ctx)
			if err != nil || !slices.Equal(names, []string{client.DirTable, "t_r1"}) {
				t.Errorf("tables %q, %v; want the directory and t_r1 only", names, err)
			}
			fresh, err := client.New(b).OpenTable(ctx, "t", nil)
			if err != nil || fresh.Salter().Spec() != tc.to {
				t.Fatalf("reopened: %v, %v", fresh, err)
			}
			// No marker is left in the physical table.
			for row, err := range b.Scan(ctx, "t_r1", backends.Range{}, backends.ScanOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				for _, cell := range row.Cells {
					if cell.Family != client.DefaultFamily {
						t.Fatalf("row %q keeps cell %s:%s", row.Key, cell.Family, cell.Qualifier)
					}
				}
			}
		})
	}
}

// TestRebucketStaleHandleFollows: a handle opened before the rebucket, idle throughout, writes to the
// new table afterwards, never to the old one (kept here, with a negative Grace, to look at).
func TestRebucketStaleHandleFollows(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c := client.New(b, client.WithRouteRefresh(testRefresh))
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := client.New(b, client.WithRouteRefresh(testRefresh)).OpenTable(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Put(ctx, []byte("before"), client.Cell{Family: "d", Qualifier: "q", Value: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Rebucket(ctx, testkit.Salter(t, "hash:8"), client.RebucketOptions{Fence: 3 * testRefresh, Grace: -1}); err != nil {
		t.Fatal(err)
	}
	if err := stale.Put(ctx, []byte("after"), client.Cell{Family: "d", Qualifier: "q", Value: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	if oldRows := testkit.Count(t, b.Scan(ctx, "t", backends.Range{}, backends.ScanOptions{})); oldRows != 1 {
		t.Errorf("old table holds %d rows, want only the one written before the rebucket", oldRows)
	}
	if got := stale.Salter().Spec(); got != "hash:8" {
		t.Errorf("stale handle's Salter after the rebucket: %s, want hash:8", got)
	}
	for _, k := range []string{"before", "after"} {
		if _, err := stale.Get(ctx, []byte(k)); err != nil {
			t.Errorf("get %s through the stale handle: %v", k, err)
		}
	}
	// Done already: a second call returns at once (and drops the old table kept so far).
	if err := stale.Rebucket(ctx, testkit.Salter(t, "hash:8"), client.RebucketOptions{Fence: 3 * testRefresh}); err != nil {
		t.Errorf("rebucket to the current spec: %v", err)
	}
	// The logical name deletes the table; it can then be created afresh under it.
	if err := c.DeleteTable(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if names, err := c.Tables(ctx); err != nil || !slices.Equal(names, []string{client.DirTable}) {
		t.Errorf("tables after delete: %q, %v", names, err)
	}
	fresh, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:2")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Get(ctx, []byte("before")); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("get in the new table of the same name: %v, want ErrNotFound", err)
	}
}

// TestRebucketRefusesBadInput: no target, a table handle not from OpenTable/CreateTable.
func TestRebucketRefusesBadInput(t *testing.T) {
	_, tbl := newTable(t, "hash:4")
	if err := tbl.Rebucket(context.Background(), nil, client.RebucketOptions{}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("nil target: %v, want ErrInvalidArgument", err)
	}
}

// TestRebucketCopyNeverOverwritesWriters changes rows through another handle after the migrate step
// is recorded and before the copy starts: the copy must not bring back a deleted row or column, nor
// an old value over a new one.
func TestRebucketCopyNeverOverwritesWriters(t *testing.T) {
	ctx := context.Background()
	b := memory.New()
	c := client.New(b, client.WithRouteRefresh(testRefresh))
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:2")})
	if err != nil {
		t.Fatal(err)
	}
	cell := func(q, v string) client.Cell { return client.Cell{Family: "d", Qualifier: q, Value: []byte(v)} }
	for _, k := range []string{"deleted", "column", "updated", "kept"} {
		if err := tbl.Put(ctx, []byte(k), cell("a", "old"), cell("b", "old")); err != nil {
			t.Fatal(err)
		}
	}
	other, err := client.New(b, client.WithRouteRefresh(testRefresh)).OpenTable(ctx, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	var writeErr error
	wrote := false
	progress := func(p client.RebucketProgress) {
		if p.State != "migrate" || wrote {
			return
		}
		wrote = true
		time.Sleep(2 * testRefresh) // other sees the migrate step
		writeErr = errors.Join(
			other.Delete(ctx, []byte("deleted")),
			other.Delete(ctx, []byte("column"), client.Column{Family: "d", Qualifier: "a"}),
			other.Put(ctx, []byte("updated"), cell("a", "new")),
		)
		if v, err := other.Get(ctx, []byte("kept")); err != nil || len(v.Cells) != 2 {
			writeErr = errors.Join(writeErr, fmt.Errorf("get kept during migrate: %v %v", v.Cells, err))
		}
		// A filter sees each key's current row, never the stale old one behind a new row that fails it.
		aOld := client.RowFilter(client.ValueFilter(client.Column{Family: "d", Qualifier: "a"}, client.Equal, []byte("old")))
		var matched []string
		for row, err := range other.Scan(ctx, client.Range{}, aOld) {
			if err != nil {
				writeErr = errors.Join(writeErr, err)
				break
			}
			matched = append(matched, string(row.Key))
		}
		if !slices.Equal(matched, []string{"kept"}) {
			writeErr = errors.Join(writeErr, fmt.Errorf("filtered scan during migrate: %q, want [kept]", matched))
		}
		for _, k := range []string{"updated", "deleted", "column"} {
			if _, err := other.Get(ctx, []byte(k), aOld); !errors.Is(err, client.ErrNotFound) {
				writeErr = errors.Join(writeErr, fmt.Errorf("filtered get %s during migrate: %v, want not found", k, err))
			}
		}
	}
	if err := tbl.Rebucket(ctx, testkit.Salter(t, "hash:4"), client.RebucketOptions{Fence: 3 * testRefresh, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	want := map[string]string{"column": "b=old", "updated": "a=new b=old", "kept": "a=old b=old"}
	got := map[string]string{}
	for row, err := range tbl.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, c := range row.Cells {
			s = append(s, c.Qualifier+"="+string(c.Value))
		}
		got[string(row.Key)] = strings.Join(s, " ")
	}
	if !maps.Equal(got, want) {
		t.Errorf("after the rebucket: %v, want %v", got, want)
	}
}
