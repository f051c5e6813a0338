package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestScanBuckets: the buckets scanned one by one are the whole scan, each in logical order, with a
// range and ResumeAfter as a whole scan takes them; a bucket the salter has not fails before reading.
func TestScanBuckets(t *testing.T) {
	ctx := context.Background()
	c := client.New(memory.New())
	tbl, err := c.CreateTable(ctx, "t", client.TableConfig{Salter: testkit.Salter(t, "hash:5")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := tbl.Put(ctx, fmt.Appendf(nil, "k%03d", i), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	r := client.Range{Start: []byte("k020"), End: []byte("k180")}
	for _, tc := range []struct {
		name string
		opts []client.ReadOption
	}{
		{"whole range", nil},
		{"resumed", []client.ReadOption{client.ResumeAfter([]byte("k100"))}},
		{"reverse", []client.ReadOption{client.Reverse()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := testkit.KeyStrings(testkit.Collect(t, tbl.Scan(ctx, r, tc.opts...)))
			var got []string
			for b := range tbl.Salter().Buckets() {
				keys := testkit.KeyStrings(testkit.Collect(t, tbl.Scan(ctx, r, append(tc.opts, client.Buckets(b))...)))
				if !slices.IsSortedFunc(keys, func(x, y string) int { return compareDir(x, y, tc.name == "reverse") }) {
					t.Errorf("bucket %d out of order: %v", b, keys)
				}
				for _, k := range keys {
					if got, _ := tbl.Salter().Bucket([]byte(k)); got != b {
						t.Errorf("bucket %d scan returned %s, of bucket %d", b, k, got)
					}
				}
				got = append(got, keys...)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the buckets' scans hold %d keys, the whole scan %d", len(got), len(want))
			}
		})
	}
	for _, b := range []int{-1, 5} {
		if _, err := testkit.CollectErr(tbl.Scan(ctx, r, client.Buckets(b))); !errors.Is(err, client.ErrInvalidArgument) {
			t.Errorf("Buckets(%d) of a 5-bucket table: %v, want ErrInvalidArgument", b, err)
		}
	}
}

func compareDir(x, y string, reverse bool) int {
	if reverse {
		x, y = y, x
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
