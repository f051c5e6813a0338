package client_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// dupInput yields n rows over distinct keys: row i has key i%distinct and value i, so the last
// occurrence of key k holds the largest i with i%distinct == k.
func dupInput(n, distinct int) func(yield func(client.ImportRow, error) bool) {
	return func(yield func(client.ImportRow, error) bool) {
		for i := range n {
			row := client.ImportRow{Source: i, Mutation: client.Mutation{
				Key:   fmt.Appendf(nil, "k%05d", i%distinct),
				Cells: []client.Cell{{Family: "d", Qualifier: "v", Value: fmt.Append(nil, i)}},
			}}
			if !yield(row, nil) {
				return
			}
		}
	}
}

// dupStores are the embedded stores the duplicate rules are checked on; the servers' turn is in
// integration/ (HBase, the Tablestore server).
var dupStores = []struct {
	name string
	open func(t *testing.T) backends.Backend
}{
	{"memory", func(*testing.T) backends.Backend { return memory.New() }},
	{"local", func(t *testing.T) backends.Backend {
		b, err := local.Open(context.Background(), local.Config{Path: filepath.Join(t.TempDir(), "db"), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}},
}

// TestImportDuplicateKeys: 3,000 rows over 1,000 keys, in small batches on many parallel workers (a
// key's occurrences land in different batches in flight together), twice over: the last occurrence
// of every key wins, the stats count the repeats, and a second identical import leaves the same table
// (re-import is idempotent). With DuplicateError the repeats are refused and reported instead.
func TestImportDuplicateKeys(t *testing.T) {
	const n, distinct = 3000, 1000
	for _, st := range dupStores {
		for _, policy := range []client.DuplicatePolicy{client.DuplicateLast, client.DuplicateError} {
			t.Run(fmt.Sprintf("%s/%d", st.name, policy), func(t *testing.T) {
				ctx := context.Background()
				c := client.New(st.open(t))
				t.Cleanup(func() { c.Close() })
				tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
				if err != nil {
					t.Fatal(err)
				}
				for run := range 2 {
					var refused []int
					stats, err := tbl.Import(ctx, dupInput(n, distinct), client.ImportOptions{
						Workers: 8, BatchRows: 7, OnDuplicate: policy,
						OnFailure: func(fr client.FailedRow) {
							if !errors.Is(fr.Err, client.ErrDuplicateKey) {
								t.Errorf("row %d failed with %v", fr.Index, fr.Err)
							}
							refused = append(refused, fr.Row.Source.(int))
						},
					})
					if stats.Duplicates != n-distinct || stats.Read != n {
						t.Fatalf("run %d: stats %+v; want %d read, %d duplicates", run, stats, n, n-distinct)
					}
					switch policy {
					case client.DuplicateLast:
						if err != nil || stats.Written != n || len(refused) != 0 {
							t.Fatalf("run %d: %+v, %v; want all %d written", run, stats, err, n)
						}
					case client.DuplicateError:
						if !errors.Is(err, client.ErrRowsFailed) || stats.Failed != n-distinct || len(refused) != n-distinct {
							t.Fatalf("run %d: %+v, %v, %d refused; want the %d repeats refused", run, stats, err, len(refused), n-distinct)
						}
						for _, i := range refused {
							if i < distinct {
								t.Fatalf("row %d, a first occurrence, was refused", i)
							}
						}
					}
					rows := 0
					for row, err := range tbl.Scan(ctx, client.Range{}) {
						if err != nil {
							t.Fatal(err)
						}
						var k int
						if _, err := fmt.Sscanf(string(row.Key), "k%05d", &k); err != nil {
							t.Fatalf("key %q", row.Key)
						}
						want := k + (n/distinct-1)*distinct // the last occurrence
						if policy == client.DuplicateError {
							want = k // the first, the only one written
						}
						if got := string(row.Cells[0].Value); got != fmt.Sprint(want) {
							t.Fatalf("run %d: key %q holds row %s's value; want row %d's", run, row.Key, got, want)
						}
						rows++
					}
					if rows != distinct {
						t.Fatalf("run %d: %d rows in the table, want %d", run, rows, distinct)
					}
				}
			})
		}
	}
}

func TestParseDuplicatePolicy(t *testing.T) {
	for in, want := range map[string]client.DuplicatePolicy{"last": client.DuplicateLast, "error": client.DuplicateError} {
		if got, err := client.ParseDuplicatePolicy(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	if _, err := client.ParseDuplicatePolicy("first"); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("first: %v, want ErrInvalidArgument", err)
	}
}
