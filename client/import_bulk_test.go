package client_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// bulkStore is the embedded memory store with a BulkImporter that keeps the contract's shape:
// every row is checked (a delete refused, to OnFailure, before the next is read) before any is
// written, and an error of the input writes nothing. It records the table and options it got.
type bulkStore struct {
	backends.Backend
	opts  backends.BulkOptions
	table string
}

func (b *bulkStore) BulkImport(ctx context.Context, table string, rows iter.Seq2[backends.Mutation, error], opts backends.BulkOptions) (backends.BulkStats, error) {
	b.opts, b.table = opts, table
	var st backends.BulkStats
	var muts []backends.Mutation
	var i int64
	for m, err := range rows {
		if err != nil {
			return st, fmt.Errorf("input row %d: %w (nothing loaded)", i, err)
		}
		if m.Delete {
			st.Failed++
			opts.OnFailure(backends.BulkFailure{Index: i, Mutation: m, Err: fmt.Errorf("%w: a delete", backends.ErrInvalidArgument)})
		} else {
			muts = append(muts, m)
		}
		i++
	}
	if _, err := b.Apply(ctx, table, muts); err != nil {
		return st, err
	}
	st.Rows, st.Regions = int64(len(muts)), 1
	if st.Failed > 0 {
		return st, fmt.Errorf("%d refused: %w", st.Failed, backends.ErrRowsFailed)
	}
	return st, nil
}

// untouched is an input that fails the test when it is read.
func untouched(t *testing.T) iter.Seq2[client.ImportRow, error] {
	return func(func(client.ImportRow, error) bool) { t.Error("the input was read") }
}

// TestBulkImportRefused: Bulk on a store without bulk loads, into an indexed table, under its
// exclusive fence and into a period table fails with ErrUnsupported, before a row is read, and
// writes nothing.
func TestBulkImportRefused(t *testing.T) {
	ctx := t.Context()
	bulk := client.ImportOptions{Bulk: &client.BulkLoad{Staging: t.TempDir()}}
	c := client.New(memory.New())
	defer c.Close()
	plain, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	_, indexed := exclusiveOrders(t, &bulkStore{Backend: memory.New()})
	for name, imp := range map[string]func() (client.ImportStats, error){
		"no bulk loads": func() (client.ImportStats, error) { return plain.Import(ctx, untouched(t), bulk) },
		"indexed":       func() (client.ImportStats, error) { return indexed.Import(ctx, untouched(t), bulk) },
		"exclusive": func() (client.ImportStats, error) {
			x := exclusive(t, indexed, client.ExclusiveOptions{})
			defer func() { _ = x.Release(ctx) }()
			return x.Import(ctx, untouched(t), bulk)
		},
	} {
		t.Run(name, func(t *testing.T) {
			stats, err := imp()
			if !errors.Is(err, client.ErrUnsupported) || stats != (client.ImportStats{}) {
				t.Fatalf("Import: %+v, %v; want nothing done and ErrUnsupported", stats, err)
			}
		})
	}
	if n := testkit.Count(t, plain.Scan(ctx, client.Range{})); n != 0 {
		t.Fatalf("%d rows written", n)
	}
}

// TestBulkImportThroughDriver: a bulk import hands the driver each row's salted key (read back
// through the table, every row is where a plain import puts it), reports rows the client refuses
// and rows the driver refuses with their input positions, and counts every row once.
func TestBulkImportThroughDriver(t *testing.T) {
	ctx := t.Context()
	for name, policy := range map[string]client.DuplicatePolicy{"last": client.DuplicateLast, "error": client.DuplicateError} {
		t.Run(name, func(t *testing.T) {
			store := &bulkStore{Backend: memory.New()}
			c := client.New(store)
			defer c.Close()
			tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
			if err != nil {
				t.Fatal(err)
			}
			const n = 2000
			input := func(yield func(client.ImportRow, error) bool) {
				for r, err := range importInput(n) { // empty keys and input errors
					i := r.Source.(int)
					switch {
					case i%89 == 0:
						r.Delete, r.Cells = true, nil // refused by the driver
					case i%113 == 0:
						r.Key = []byte(fmt.Sprintf("%010d", i-1)) // a repeat of the row before
					}
					if !yield(r, err) {
						return
					}
				}
			}
			want := map[string]string{}
			failed := map[int]bool{}
			for r, err := range input {
				i := r.Source.(int)
				k := string(r.Key)
				_, dup := want[k]
				if err != nil || len(r.Key) == 0 || r.Delete || dup && policy == client.DuplicateError {
					failed[i] = true
					continue
				}
				want[k] = string(r.Cells[0].Value)
			}
			got := map[int]bool{}
			stamp := time.UnixMilli(1_767_225_600_000)
			stats, err := tbl.Import(ctx, input, client.ImportOptions{
				OnDuplicate: policy, Timestamp: stamp,
				Bulk: &client.BulkLoad{Staging: "/staging", Loads: 3},
				OnFailure: func(fr client.FailedRow) {
					if fr.Index != int64(fr.Row.Source.(int)) || got[int(fr.Index)] {
						t.Errorf("failure of input row %d reported as %d, or twice", fr.Row.Source, fr.Index)
					}
					got[int(fr.Index)] = true
				},
			})
			if !errors.Is(err, client.ErrRowsFailed) {
				t.Fatalf("Import: %v, want ErrRowsFailed", err)
			}
			if len(got) != len(failed) || stats.Read != n || stats.Failed != int64(len(failed)) || stats.Written != n-stats.Failed {
				t.Fatalf("stats %+v, %d reported; want %d read, %d failed", stats, len(got), n, len(failed))
			}
			for i := range failed {
				if !got[i] {
					t.Errorf("input row %d not reported", i)
				}
			}
			if o := store.opts; o.Staging != "/staging" || o.Workers != 3 || !o.Timestamp.Equal(stamp) || store.table != "t" {
				t.Errorf("driver got %+v for table %q", o, store.table)
			}
			rows := map[string]string{}
			for row, err := range tbl.Scan(ctx, client.Range{}) {
				if err != nil {
					t.Fatal(err)
				}
				rows[string(row.Key)] = string(row.Cells[0].Value)
			}
			if fmt.Sprint(rows) != fmt.Sprint(want) {
				t.Fatalf("table holds %d rows, want %d:\n%v\n%v", len(rows), len(want), rows, want)
			}
		})
	}
}

// TestBulkImportCancelled: a bulk import whose ctx ends while it reads its input hands the driver
// an error, not the end of the input, so nothing is loaded; the row read then is reported as
// cancelled, and the import's error wraps ctx's.
func TestBulkImportCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := client.New(&bulkStore{Backend: memory.New()})
	defer c.Close()
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	input := func(yield func(client.ImportRow, error) bool) {
		for r, err := range importInput(1000) {
			if r.Source.(int) == 500 {
				cancel()
			}
			if !yield(r, err) {
				return
			}
		}
	}
	var cancelled []int64
	stats, err := tbl.Import(ctx, input, client.ImportOptions{
		Bulk:      &client.BulkLoad{Staging: "/staging"},
		OnFailure: func(fr client.FailedRow) { cancelled = append(cancelled, fr.Index) },
	})
	if !errors.Is(err, context.Canceled) || stats.Written != 0 || stats.Read != 501 || stats.Cancelled != 1 || cancelled[len(cancelled)-1] != 500 {
		t.Fatalf("Import: %+v, %v (last reported %v); want nothing written, row 500 cancelled, ctx's error", stats, err, cancelled)
	}
	if n := testkit.Count(t, tbl.Scan(t.Context(), client.Range{})); n != 0 {
		t.Fatalf("%d rows written", n)
	}
}
