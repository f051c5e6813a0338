package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// maxKeyLen is the physical key limit of memory and local (HBase's).
const maxKeyLen = 32767

// stores are the embedded backends, which must agree on what bad input does.
var stores = []struct {
	name string
	open func(t *testing.T) backends.Backend
}{
	{"memory", func(t *testing.T) backends.Backend { return memory.New() }},
	{"local", func(t *testing.T) backends.Backend {
		s, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "bad.db"), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// newStoreTable creates table "t" (salt hash:16: one prefix byte) on a fresh store.
func newStoreTable(t *testing.T, open func(*testing.T) backends.Backend) *client.Table {
	t.Helper()
	c := client.New(open(t))
	t.Cleanup(func() { c.Close() })
	tbl, err := c.CreateTable(context.Background(), table, client.TableConfig{Salter: testkit.Salter(t, "hash:16")})
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// badKeys are rejected by the client or the store; the salt adds one byte, so the longest logical key
// accepted is maxKeyLen-1.
var badKeys = map[string][]byte{
	"empty":     nil,
	"one over":  bytes.Repeat([]byte("x"), maxKeyLen),
	"far over":  bytes.Repeat([]byte("y"), 3*maxKeyLen),
	"zero-len2": {},
}

// TestBadKeysFailAloneInBatches: in Apply, in Import and alone, empty and oversized keys fail with
// ErrInvalidKey naming their row, and the rows around them are written. The longest key the store
// takes goes through.
func TestBadKeysFailAloneInBatches(t *testing.T) {
	longest := bytes.Repeat([]byte("z"), maxKeyLen-1)
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx := context.Background()
			tbl := newStoreTable(t, st.open)
			var muts []client.Mutation
			var good [][]byte
			bad := map[int]string{}
			for name, k := range badKeys {
				good = append(good, fmt.Appendf(nil, "before %s", name))
				muts = append(muts, putRow(good[len(good)-1]))
				bad[len(muts)] = name
				muts = append(muts, putRow(k))
				good = append(good, fmt.Appendf(nil, "after %s", name))
				muts = append(muts, putRow(good[len(good)-1]))
			}
			good = append(good, longest)
			muts = append(muts, putRow(longest))
			rowErrs, err := tbl.Apply(ctx, muts)
			if err != nil || rowErrs == nil {
				t.Fatalf("Apply = %v, %v; want row errors", rowErrs, err)
			}
			for i, e := range rowErrs {
				name, isBad := bad[i]
				switch {
				case isBad && (!errors.Is(e, client.ErrInvalidKey) || !strings.Contains(e.Error(), fmt.Sprintf("row %d", i))):
					t.Errorf("row %d (%s key): %v; want ErrInvalidKey naming the row", i, name, e)
				case !isBad && e != nil:
					t.Errorf("row %d (key %.20q...) next to a bad one failed: %v", i, muts[i].Key, e)
				}
				if e != nil && len(e.Error()) > 1024 {
					// Not failed on: reported. The whole key is quoted into the message.
					t.Logf("row %d: the error message is %d bytes long", i, len(e.Error()))
				}
			}
			checkStored(t, tbl, good)

			for name, k := range badKeys {
				if err := tbl.Put(ctx, k, putRow([]byte("x")).Cells...); !errors.Is(err, client.ErrInvalidKey) {
					t.Errorf("Put of a %s key: %v", name, err)
				}
				if _, err := tbl.Get(ctx, k); !errors.Is(err, client.ErrInvalidKey) {
					t.Errorf("Get of a %s key: %v", name, err)
				}
			}

			// Import: the bad rows go to OnFailure with their index, their neighbours are written.
			var in []client.Mutation
			reported := map[int64]error{}
			for i, m := range muts {
				k := append([]byte("imp/"), m.Key...)
				if _, isBad := bad[i]; isBad || bytes.Equal(m.Key, longest) {
					k = m.Key // bad as they were; the longest is at the limit, "imp/" would push it over
				}
				in = append(in, putRow(k))
			}
			stats, err := tbl.Import(ctx, slicesSeq(in), client.ImportOptions{BatchRows: 3, OnFailure: func(fr client.FailedRow) {
				reported[fr.Index] = fr.Err
			}})
			if !errors.Is(err, client.ErrRowsFailed) || stats.Failed != int64(len(bad)) || stats.Written != int64(len(in)-len(bad)) {
				t.Fatalf("Import: %+v, %v; want %d failed", stats, err, len(bad))
			}
			for i := range bad {
				if e := reported[int64(i)]; !errors.Is(e, client.ErrInvalidKey) || !strings.Contains(e.Error(), fmt.Sprintf("input row %d", i)) {
					t.Errorf("import row %d: reported %v", i, e)
				}
			}
			var imported [][]byte
			for i, m := range in {
				if _, isBad := bad[i]; !isBad {
					imported = append(imported, m.Key)
				}
			}
			checkStored(t, tbl, imported)
		})
	}
}

// checkStored reads ks back and checks each row holds its own value.
func checkStored(t *testing.T, tbl *client.Table, ks [][]byte) {
	t.Helper()
	rows, err := tbl.GetMany(context.Background(), ks)
	if err != nil {
		t.Fatal(err)
	}
	for i, row := range rows {
		if len(row.Cells) != 1 || !bytes.Equal(row.Cells[0].Value, value(ks[i])) {
			t.Errorf("row %.30q... was lost: %+v", ks[i], row.Cells)
		}
	}
}

// TestInvalidUTF8Keys: keys are bytes. Invalid UTF-8 in a key, whether raw or in a String field of
// the key codec, is stored and read back byte for byte, by Get and by Scan; nothing is replaced.
func TestInvalidUTF8Keys(t *testing.T) {
	schema := testkit.Schema(t, "host,event,ts:int64:desc")
	hostile := []string{"\xff\xfe", "caf\xc3", "\xed\xa0\x80" /* a UTF-16 surrogate */, "ok\x00nul", "\uFFFD"}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx := context.Background()
			tbl := newStoreTable(t, st.open)
			var ks [][]byte
			for i, h := range hostile {
				k, err := schema.Encode(h, h+"/e", int64(i))
				if err != nil {
					t.Fatalf("Encode(%q): %v", h, err)
				}
				back, err := schema.Decode(k)
				if err != nil || back[0] != h || back[1] != h+"/e" {
					t.Fatalf("Decode(Encode(%q)) = %q, %v", h, back, err)
				}
				ks = append(ks, k, []byte(h))
			}
			muts := make([]client.Mutation, len(ks))
			for i, k := range ks {
				muts[i] = putRow(k)
			}
			if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
				t.Fatalf("Apply: %v %v", err, firstErr(rowErrs))
			}
			for _, k := range ks {
				row, err := tbl.Get(ctx, k)
				if err != nil || !bytes.Equal(row.Key, k) || !bytes.Equal(row.Cells[0].Value, value(k)) {
					t.Fatalf("Get(%q) = %q %+v, %v", k, row.Key, row.Cells, err)
				}
			}
			rows, err := testkit.CollectErr(tbl.Scan(ctx, client.Range{}))
			if err != nil || len(rows) != len(ks) {
				t.Fatalf("Scan: %d rows of %d, %v", len(rows), len(ks), err)
			}
			for _, row := range rows {
				if !bytes.Equal(row.Cells[0].Value, value(row.Key)) {
					t.Fatalf("Scan: row %q holds %q", row.Key, row.Cells[0].Value)
				}
			}
		})
	}
}

// TestDuplicateKeysInABatch pins down, and checks that memory and local agree on, what a key given
// twice does: within one Apply, mutations of a row apply in the order given (equal timestamps: the
// last write wins; a delete after a put removes the row); across batches, and in Import, the newest
// timestamp wins whatever the batching. (Equal timestamps in different batches have no defined
// winner: the batches go out in parallel.)
func TestDuplicateKeysInABatch(t *testing.T) {
	cellAt := func(v string, ts int64) client.Cell {
		return client.Cell{Family: "d", Qualifier: "q", Value: []byte(v), Timestamp: ts}
	}
	put := func(k, v string, ts int64) client.Mutation {
		return client.Mutation{Key: []byte(k), Cells: []client.Cell{cellAt(v, ts)}}
	}
	results := map[string]string{}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx := context.Background()
			tbl := newStoreTable(t, st.open)
			muts := []client.Mutation{
				put("same-ts", "first", 10), put("other", "x", 10), put("same-ts", "second", 10),
				put("newer-first", "new", 20), put("newer-first", "old", 10),
				put("put-then-delete", "gone", 10), {Key: []byte("put-then-delete"), Delete: true},
				{Key: []byte("delete-then-put"), Delete: true}, put("delete-then-put", "here", 10),
			}
			if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
				t.Fatalf("Apply: %v %v", err, firstErr(rowErrs))
			}
			want := map[string]string{"same-ts": "second", "other": "x", "newer-first": "new", "put-then-delete": "", "delete-then-put": "here"}
			var got []string
			for k, v := range want {
				row, err := tbl.Get(ctx, []byte(k))
				switch {
				case v == "" && !errors.Is(err, client.ErrNotFound):
					t.Errorf("%s: %+v, %v; want no row", k, row, err)
				case v != "" && (err != nil || string(row.Cells[0].Value) != v):
					t.Errorf("%s: %+v, %v; want %q", k, row, err, v)
				}
				if err == nil {
					got = append(got, k+"="+string(row.Cells[0].Value))
				}
			}
			slices.Sort(got)
			results[st.name] = strings.Join(got, ",")

			// Import, batches of 3 on 4 workers: a key's versions land in different, parallel batches.
			var in []client.Mutation
			for i := range 200 {
				ts := int64(1000 + i%7)
				in = append(in, put(fmt.Sprintf("imp%02d", i%10), fmt.Sprint(ts), ts))
			}
			stats, err := tbl.Import(ctx, slicesSeq(in), client.ImportOptions{BatchRows: 3, Workers: 4, Timestamp: time.UnixMilli(1)})
			if err != nil || stats.Written != 200 {
				t.Fatalf("Import: %+v, %v", stats, err)
			}
			for k := range 10 {
				row, err := tbl.Get(ctx, fmt.Appendf(nil, "imp%02d", k))
				if err != nil || string(row.Cells[0].Value) != "1006" || row.Cells[0].Timestamp != 1006 {
					t.Errorf("imp%02d: %+v, %v; want the newest version 1006", k, row, err)
				}
			}
		})
	}
	if results["memory"] != results["local"] {
		t.Fatalf("the stores disagree:\nmemory %s\nlocal  %s", results["memory"], results["local"])
	}
}
