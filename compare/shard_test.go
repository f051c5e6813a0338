package compare_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/internal/testkit"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want compare.Shard
		err  string // a word the error must say
	}{
		{in: "0/1", want: compare.Shard{Index: 0, Count: 1}},
		{in: "2/3", want: compare.Shard{Index: 2, Count: 3}},
		{in: "15/16", want: compare.Shard{Index: 15, Count: 16}},
		{in: "", err: "want I/N"},
		{in: "3", err: "want I/N"},
		{in: "3/3", err: "0 to 2"},
		{in: "-1/3", err: "0 to 2"},
		{in: "1/0", err: "1 or more"},
		{in: "0/-2", err: "1 or more"},
		{in: "a/3", err: "whole numbers"},
		{in: "1/b", err: "whole numbers"},
		{in: "/3", err: "JOB_COMPLETION_INDEX"},
		{in: "1/3/4", err: "whole numbers"},
		{in: " 1/3", err: "whole numbers"},
		{in: "+1/3", err: "whole numbers"},
		{in: "1/2000000", err: "at most"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := compare.ParseShard(tc.in)
			if tc.err == "" {
				if err != nil || got != tc.want || got.String() != tc.in {
					t.Fatalf("ParseShard(%q) = %v (%q), %v; want %v", tc.in, got, got.String(), err, tc.want)
				}
				return
			}
			if !errors.Is(err, client.ErrInvalidArgument) || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.in)) {
				t.Fatalf("ParseShard(%q): %v; want ErrInvalidArgument naming the input and saying %q", tc.in, err, tc.err)
			}
		})
	}
	if (compare.Shard{}).Sharded() || (compare.Shard{}).Check() != nil || (compare.Shard{}).String() != "" {
		t.Error("the zero Shard is not the whole table")
	}
}

// sameSalt returns a table salted as a (hash:4), holding a's rows: its shards are read by bucket.
func sameSalt(t *testing.T, a *client.Table) *client.Table {
	t.Helper()
	ctx := context.Background()
	c := client.New(memory.New())
	t.Cleanup(func() { _ = c.Close() })
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, a.Salter().Spec()), MaxVersions: 3})
	if err != nil {
		t.Fatal(err)
	}
	var muts []client.Mutation
	for row, err := range a.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		muts = append(muts, client.Mutation{Key: row.Key, Cells: row.Cells})
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
	return tbl
}

// TestShardsTogether: the differences of the N shards of a comparison, together, are the whole
// comparison's, each once; each shard reads only its rows of a. Over a target salted as the source
// (read by bucket) and one salted otherwise (read whole, filtered), with N below, at and above the
// source's 4 buckets, over the whole table and over a range.
func TestShardsTogether(t *testing.T) {
	ctx := context.Background()
	ta, tb := pair(t)
	other := map[string]*client.Table{"hash:8": tb, "hash:4": sameSalt(t, ta)}
	for _, b := range other {
		for _, i := range []int{0, 7, 1234, 2999} {
			put(t, b, key(i), client.Cell{Family: "d", Qualifier: "v", Value: []byte("changed"), Timestamp: 1000})
		}
		if err := b.Delete(ctx, key(1500)); err != nil {
			t.Fatal(err)
		}
		put(t, b, []byte("k01500x"), client.Cell{Family: "d", Qualifier: "v", Value: []byte("new")})
		put(t, b, []byte{0xff, 0xfe}, client.Cell{Family: "d", Qualifier: "v", Value: []byte("high")})
	}
	collect := func(t *testing.T, b *client.Table, r client.Range, s compare.Shard) ([]string, compare.Stats) {
		var st compare.Stats
		var out []string
		for d, err := range compare.Tables(ctx, ta, b, r, compare.Options{Chunk: 64, Shard: s, Stats: &st}) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%v %q", d.Kind, d.Key))
		}
		return out, st
	}
	for spec, b := range other {
		for _, r := range []client.Range{{}, {Start: key(500), End: key(2500)}} {
			whole, wst := collect(t, b, r, compare.Shard{})
			if len(whole) == 0 {
				t.Fatal("no differences to find")
			}
			for _, n := range []int{1, 2, 3, 4, 7} {
				t.Run(fmt.Sprintf("target=%s/range=%q-%q/N=%d", spec, r.Start, r.End, n), func(t *testing.T) {
					var got []string
					var rowsA int64
					for i := range n {
						d, st := collect(t, b, r, compare.Shard{Index: i, Count: n})
						got = append(got, d...)
						rowsA += st.RowsA
					}
					slices.Sort(got)
					want := slices.Sorted(slices.Values(whole))
					if !slices.Equal(got, want) {
						t.Errorf("the shards found %q, the whole comparison %q", got, want)
					}
					if rowsA != wst.RowsA {
						t.Errorf("the shards read %d rows of a, the whole comparison %d", rowsA, wst.RowsA)
					}
				})
			}
		}
	}
}

// A side that cannot say how it is salted cannot be sharded: the comparison fails at once.
func TestShardNeedsSaltedSide(t *testing.T) {
	ta, tb := pair(t)
	_, err := testkit.CollectErr(compare.Tables(context.Background(), &counted{t: ta}, tb, client.Range{}, compare.Options{Shard: compare.Shard{Index: 0, Count: 2}}))
	if !errors.Is(err, client.ErrInvalidArgument) || !strings.Contains(err.Error(), "salted") {
		t.Fatalf("sharded comparison of an unsalted source: %v, want ErrInvalidArgument", err)
	}
	_, err = testkit.CollectErr(compare.Tables(context.Background(), ta, tb, client.Range{}, compare.Options{Shard: compare.Shard{Index: 2, Count: 2}}))
	if !errors.Is(err, client.ErrInvalidArgument) {
		t.Fatalf("shard 2/2: %v, want ErrInvalidArgument", err)
	}
}
