package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTable(t *testing.T, spec string, opts ...client.Option) (*client.Client, *client.Table) {
	t.Helper()
	c := client.New(memory.New(), opts...)
	t.Cleanup(func() { c.Close() })
	tbl, err := c.CreateTable(context.Background(), "t", client.TableConfig{Salter: testkit.Salter(t, spec)})
	if err != nil {
		t.Fatal(err)
	}
	return c, tbl
}

func TestPointOps(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []string{"hash:16", "hash:300", "md5hex:2", "mod:8:offset=0,width=1", "reverse", "phoenix:4", "none"} {
		t.Run(spec, func(t *testing.T) {
			_, tbl := newTable(t, spec)
			key := []byte("user42/order7")
			if _, err := tbl.Get(ctx, key); !errors.Is(err, client.ErrNotFound) {
				t.Fatalf("Get before Put: %v, want ErrNotFound", err)
			}
			if err := tbl.Put(ctx, key, testkit.Cell("q", "v1"), client.Cell{Family: "d", Qualifier: "r", Value: []byte("x"), Timestamp: 1}); err != nil {
				t.Fatal(err)
			}
			row, err := tbl.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(row.Key, key) || len(row.Cells) != 2 || string(row.Cells[0].Value) != "v1" {
				t.Fatalf("Get = %+v", row)
			}
			row, err = tbl.Get(ctx, key, client.Columns(client.Column{Family: "d", Qualifier: "r"}))
			if err != nil || len(row.Cells) != 1 || row.Cells[0].Qualifier != "r" {
				t.Fatalf("Get with Columns = %+v, %v", row, err)
			}
			if err := tbl.Delete(ctx, key, client.Column{Family: "d", Qualifier: "r"}); err != nil {
				t.Fatal(err)
			}
			if row, err = tbl.Get(ctx, key); err != nil || len(row.Cells) != 1 {
				t.Fatalf("after column delete: %+v, %v", row, err)
			}
			if err := tbl.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
			if _, err := tbl.Get(ctx, key); !errors.Is(err, client.ErrNotFound) {
				t.Fatalf("Get after Delete: %v", err)
			}
		})
	}
}

func TestBadKeysRejectedBeforeSending(t *testing.T) {
	ctx := context.Background()
	b := faulty.New(memory.New(), faulty.Config{}) // no rules: it only counts the calls
	c := client.New(b)
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
	if err != nil {
		t.Fatal(err)
	}
	before := b.Stats().Calls
	for name, op := range map[string]func() error{
		"put":    func() error { return tbl.Put(ctx, nil, testkit.Cell("q", "v")) },
		"get":    func() error { _, err := tbl.Get(ctx, []byte{}); return err },
		"delete": func() error { return tbl.Delete(ctx, nil) },
		"getmany": func() error {
			_, err := tbl.GetMany(ctx, [][]byte{[]byte("a"), nil})
			return err
		},
	} {
		if err := op(); !errors.Is(err, client.ErrInvalidKey) {
			t.Errorf("%s with empty key: %v, want ErrInvalidKey", name, err)
		}
	}
	if calls := b.Stats().Calls - before; calls != 0 {
		t.Errorf("backend saw %d calls for invalid keys", calls)
	}
}

func TestApplyPerRowErrors(t *testing.T) {
	ctx := context.Background()
	_, tbl := newTable(t, "hash:16", client.WithBatchRows(7))
	var muts []client.Mutation
	for i := range 100 {
		k := []byte(fmt.Sprintf("k%03d", i))
		if i == 50 {
			k = nil // bad row in the middle
		}
		muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{testkit.Cell("q", fmt.Sprint(i))}})
	}
	rowErrs, err := tbl.Apply(ctx, muts)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range rowErrs {
		if (i == 50) != (e != nil) {
			t.Fatalf("rowErrs[%d] = %v", i, e)
		}
	}
	if !errors.Is(rowErrs[50], client.ErrInvalidKey) {
		t.Fatalf("rowErrs[50] = %v, want ErrInvalidKey", rowErrs[50])
	}
	keys := make([][]byte, 0, 99)
	for i, m := range muts {
		if i != 50 {
			keys = append(keys, m.Key)
		}
	}
	rows, err := tbl.GetMany(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if !bytes.Equal(r.Key, keys[i]) || len(r.Cells) != 1 {
			t.Fatalf("row %d = %+v: the rows around the bad one must be written", i, r)
		}
	}
}

func TestOpenTableSpec(t *testing.T) {
	ctx := context.Background()
	c, _ := newTable(t, "hash:16")
	tbl, err := c.OpenTable(ctx, "t", nil)
	if err != nil || tbl.Salter().Spec() != "hash:16" {
		t.Fatalf("OpenTable(nil) = %v, %v; want the stored hash:16", tbl, err)
	}
	if _, err := c.OpenTable(ctx, "t", testkit.Salter(t, "hash:16")); err != nil {
		t.Fatalf("same spec: %v", err)
	}
	for _, spec := range []string{"hash:32", "md5hex:1", "none"} {
		if _, err := c.OpenTable(ctx, "t", testkit.Salter(t, spec)); !errors.Is(err, client.ErrSpecMismatch) {
			t.Errorf("OpenTable with %s: %v, want ErrSpecMismatch", spec, err)
		}
	}
	if _, err := c.OpenTable(ctx, "missing", nil); !errors.Is(err, client.ErrTableNotFound) {
		t.Errorf("missing table: %v", err)
	}
	// A table brine did not create: refused without a salter, as the drop-ins refuse it, and read
	// with the one given.
	if err := c.Backend().CreateTable(ctx, "plain", backends.TableOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.OpenTable(ctx, "plain", nil); !errors.Is(err, client.ErrNoSpec) {
		t.Errorf("OpenTable(nil) of a table without a stored spec: %v, want ErrNoSpec", err)
	}
	if plain, err := c.OpenTable(ctx, "plain", testkit.Salter(t, "none")); err != nil || plain.Salter().Spec() != "none" {
		t.Errorf("OpenTable(none) of a table without a stored spec: %v, %v", plain, err)
	}
	if _, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:16")}); !errors.Is(err, client.ErrTableExists) {
		t.Errorf("create twice: %v", err)
	}
}

func TestSaltIsPhysical(t *testing.T) {
	ctx := context.Background()
	c, tbl := newTable(t, "hash:16")
	for i := range 200 {
		if err := tbl.Put(ctx, []byte(fmt.Sprintf("%08d", i)), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := tbl.CountByBucket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for b, n := range counts {
		if n == 0 {
			t.Errorf("bucket %d is empty: monotonic keys did not spread", b)
		}
		total += n
	}
	if total != 200 {
		t.Fatalf("buckets hold %d rows, want 200", total)
	}
	// The store holds prefixed keys only.
	for row, err := range c.Backend().Scan(ctx, "t", backends.Range{}, backends.ScanOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(row.Key) != 9 {
			t.Fatalf("physical key %q is not salted", row.Key)
		}
	}
}

// testKeys are awkward on purpose: 0x00 and 0xFF bytes, keys that are prefixes of others, and keys
// that sort around bucket prefixes.
func testKeys(r *rand.Rand, n int) [][]byte {
	set := map[string]bool{"a": true, "ab": true, "abc": true, "\x00": true, "\x00\x00": true, "\xff": true, "\xff\xff\x00": true, "host1": true, "host12": true, "host1/x": true}
	for len(set) < n {
		k := make([]byte, 1+r.IntN(6))
		for i := range k {
			switch r.IntN(4) {
			case 0:
				k[i] = 0
			case 1:
				k[i] = 0xff
			default:
				k[i] = byte('a' + r.IntN(4))
			}
		}
		set[string(k)] = true
	}
	var out [][]byte
	for k := range set {
		out = append(out, []byte(k))
	}
	slices.SortFunc(out, bytes.Compare)
	return out
}

func TestScanMatchesReference(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	all := testKeys(rng, 300)
	ranges := []client.Range{
		{},
		client.RowRange([]byte("a"), []byte("b")),
		client.RowRange([]byte("ab"), []byte("abc")),
		client.PrefixRange([]byte("host1")),
		client.PrefixRange([]byte{0xff}),
		client.PrefixRange([]byte{0}),
		client.InfiniteRange([]byte("c")),
		client.RowRange(nil, []byte("b\x00")),
		client.RowRange([]byte("b"), []byte("b")), // empty: start equals end (start after end is refused: TestScanRangeOrder)
		client.RowRange([]byte("zz"), nil),        // empty: past the last key
		client.SingleRow([]byte("abc")),
	}
	for _, spec := range []string{"hash:16", "hash:4:prefix=1", "md5hex:1", "phoenix:8", "none", "hash:257"} {
		t.Run(spec, func(t *testing.T) {
			_, tbl := newTable(t, spec, client.WithPrefetch(3), client.WithConcurrency(4))
			var muts []client.Mutation
			for _, k := range all {
				muts = append(muts, client.Mutation{Key: k, Cells: []client.Cell{testkit.Cell("q", string(k))}})
			}
			if errs, err := tbl.Apply(ctx, muts); err != nil || errs != nil {
				t.Fatal(err, errs)
			}
			for _, r := range ranges {
				for _, reverse := range []bool{false, true} {
					for _, limit := range []int{0, 1, 7} {
						opts := []client.ReadOption{client.Limit(limit)}
						if reverse {
							opts = append(opts, client.Reverse())
						}
						got := testkit.Keys(testkit.Collect(t, tbl.Scan(ctx, r, opts...)))
						want := backendtest.ExpectKeys(all, r, reverse, limit)
						if !slices.EqualFunc(got, want, bytes.Equal) {
							t.Fatalf("range [%q,%q) reverse=%v limit=%d:\n got %q\nwant %q", r.Start, r.End, reverse, limit, got, want)
						}
					}
				}
			}
		})
	}
}

func TestScanCursorPaging(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	all := testKeys(rng, 200)
	_, tbl := newTable(t, "hash:8")
	for _, k := range all {
		if err := tbl.Put(ctx, k, testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	for _, reverse := range []bool{false, true} {
		for _, r := range []client.Range{{}, client.RowRange([]byte("a"), []byte("c"))} {
			var got [][]byte
			var cursor []byte
			for page := 0; ; page++ {
				opts := []client.ReadOption{client.Limit(13)}
				if reverse {
					opts = append(opts, client.Reverse())
				}
				if cursor != nil {
					opts = append(opts, client.ResumeAfter(cursor))
				}
				keys := testkit.Keys(testkit.Collect(t, tbl.Scan(ctx, r, opts...)))
				got = append(got, keys...)
				if len(keys) < 13 {
					break
				}
				cursor = keys[len(keys)-1]
				if page > 100 {
					t.Fatal("paging does not end")
				}
			}
			if want := backendtest.ExpectKeys(all, r, reverse, 0); !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("reverse=%v range=%q: paged scan differs from one scan:\n got %q\nwant %q", reverse, r, got, want)
			}
		}
	}
}

func TestScanEarlyBreakAndCancel(t *testing.T) {
	_, tbl := newTable(t, "hash:32", client.WithPrefetch(2))
	ctx := context.Background()
	for i := range 500 {
		if err := tbl.Put(ctx, []byte(fmt.Sprintf("%05d", i)), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, err := range tbl.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 10 {
			break
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n = 0
	var last error
	for _, err := range tbl.Scan(cctx, client.Range{}) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 10 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Fatalf("cancelled scan ended with %v, want context.Canceled", last)
	}
	// goleak.VerifyTestMain checks that no bucket goroutine outlived the scans.
}

func TestPruning(t *testing.T) {
	ctx := context.Background()
	b := faulty.New(memory.New(), faulty.Config{}) // no rules: it only counts the calls
	c := client.New(b)
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:16:prefix=4")})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"usr1/a", "usr1/b", "usr2/a", "usr3/c"} {
		if err := tbl.Put(ctx, []byte(k), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	before := b.Stats().OpCalls[faulty.OpScan]
	got := testkit.Keys(testkit.Collect(t, tbl.Scan(ctx, client.PrefixRange([]byte("usr1")))))
	if len(got) != 2 {
		t.Fatalf("prefix scan = %q", got)
	}
	if scans := b.Stats().OpCalls[faulty.OpScan] - before; scans != 1 {
		t.Fatalf("a range within one salted prefix scanned %d buckets, want 1", scans)
	}
}

// TestCountByBucketReverse: a pure key transform has one bucket and no cross-table order, yet its
// rows can still be counted.
func TestCountByBucketReverse(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "rev", client.TableConfig{Salter: testkit.Salter(t, "reverse")})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"user1", "user2", "user3"} {
		if err := tbl.Put(ctx, []byte(k), client.Cell{Family: client.DefaultFamily, Qualifier: "q", Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	counts, err := tbl.CountByBucket(ctx)
	if err != nil || len(counts) != 1 || counts[0] != 3 {
		t.Fatalf("CountByBucket = %v, %v; want [3]", counts, err)
	}
}
