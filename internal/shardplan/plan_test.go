package shardplan

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		buckets, index, count int
		want                  Part
	}{
		{buckets: 4, index: 0, count: 1, want: Part{Buckets: []int{0, 1, 2, 3}}},
		{buckets: 4, index: 1, count: 2, want: Part{Buckets: []int{2, 3}}},
		{buckets: 16, index: 0, count: 3, want: Part{Buckets: []int{0, 1, 2, 3, 4, 5}}},
		{buckets: 16, index: 1, count: 3, want: Part{Buckets: []int{6, 7, 8, 9, 10}}},
		{buckets: 16, index: 2, count: 3, want: Part{Buckets: []int{11, 12, 13, 14, 15}}},
		{buckets: 4, index: 3, count: 4, want: Part{Buckets: []int{3}}},
		// One bucket (an unsalted table): pieces of the key space.
		{buckets: 1, index: 0, count: 1, want: Part{Buckets: []int{0}}},
		{buckets: 1, index: 0, count: 2, want: Part{Buckets: []int{0}, End: []byte{0x80}}},
		{buckets: 1, index: 1, count: 2, want: Part{Buckets: []int{0}, Start: []byte{0x80}}},
		{buckets: 1, index: 1, count: 4, want: Part{Buckets: []int{0}, Start: []byte{0x40}, End: []byte{0x80}}},
		{buckets: 1, index: 1, count: 3, want: Part{Buckets: []int{0},
			Start: bytes.Repeat([]byte{0x55}, 8), End: bytes.Repeat([]byte{0xaa}, 8)}},
		// 5 shards over 2 buckets: bucket 0 gets 3 pieces, bucket 1 gets 2.
		{buckets: 2, index: 0, count: 5, want: Part{Buckets: []int{0}, End: bytes.Repeat([]byte{0x55}, 8)}},
		{buckets: 2, index: 2, count: 5, want: Part{Buckets: []int{0}, Start: bytes.Repeat([]byte{0xaa}, 8)}},
		{buckets: 2, index: 3, count: 5, want: Part{Buckets: []int{1}, End: []byte{0x80}}},
		{buckets: 2, index: 4, count: 5, want: Part{Buckets: []int{1}, Start: []byte{0x80}}},
	} {
		t.Run(fmt.Sprintf("%d-of-%d-over-%d", tc.index, tc.count, tc.buckets), func(t *testing.T) {
			got := Of(tc.buckets, tc.index, tc.count)
			if !slices.Equal(got.Buckets, tc.want.Buckets) || !bytes.Equal(got.Start, tc.want.Start) || !bytes.Equal(got.End, tc.want.End) {
				t.Errorf("Of(%d, %d, %d) = %x, want %x", tc.buckets, tc.index, tc.count, got, tc.want)
			}
		})
	}
}

// probes are keys at and around the plan's bounds, and ordinary ones.
var probes = [][]byte{nil, {0}, {0x40}, {0x7f, 0xff}, {0x80}, {0x80, 0}, {0xaa, 0xaa}, bytes.Repeat([]byte{0x55}, 9),
	bytes.Repeat([]byte{0xff}, 12), []byte("o000123"), []byte("web1,1767225600000")}

// owners returns the shards of count whose part holds (bucket, key).
func owners(buckets, count, bucket int, key []byte) []int {
	var out []int
	for i := range count {
		if Of(buckets, i, count).Contains(bucket, key) {
			out = append(out, i)
		}
	}
	return out
}

// Every row belongs to exactly one shard, for every bucket count and shard count, and the shards of a
// plan differ in size by at most one bucket (N <= B) or hold one bucket each (N > B).
func TestEveryRowInOneShard(t *testing.T) {
	for buckets := 1; buckets <= 17; buckets++ {
		for count := 1; count <= 40; count++ {
			sizes := map[int]bool{}
			for i := range count {
				p := Of(buckets, i, count)
				if len(p.Buckets) == 0 {
					t.Fatalf("%d/%d over %d buckets: no bucket", i, count, buckets)
				}
				sizes[len(p.Buckets)] = true
			}
			if len(sizes) > 2 {
				t.Errorf("%d shards over %d buckets: sizes %v", count, buckets, sizes)
			}
			for b := range buckets {
				for _, k := range probes {
					if got := owners(buckets, count, b, k); len(got) != 1 {
						t.Fatalf("%d shards over %d buckets: bucket %d key %x is in shards %v, want one", count, buckets, b, k, got)
					}
				}
			}
		}
	}
}

func TestSplitPoint(t *testing.T) {
	for n := 1; n <= 300; n++ {
		var prev []byte
		for j := 1; j < n; j++ {
			p := SplitPoint(j, n)
			if len(p) == 0 || len(p) > 8 || bytes.Compare(prev, p) >= 0 {
				t.Fatalf("SplitPoint(%d, %d) = %x after %x: want 1 to 8 bytes, rising", j, n, p, prev)
			}
			prev = p
		}
		if SplitPoint(0, n) != nil || SplitPoint(n, n) != nil {
			t.Fatalf("the ends of %d pieces are not nil", n)
		}
	}
}

func TestIntersect(t *testing.T) {
	p := Part{Buckets: []int{0}, Start: []byte("c"), End: []byte("m")}
	for _, tc := range []struct {
		start, end, wantS, wantE string
		ok                       bool
	}{
		{"", "", "c", "m", true},
		{"a", "z", "c", "m", true},
		{"d", "e", "d", "e", true},
		{"m", "", "m", "m", false},
		{"a", "c", "c", "c", false},
	} {
		var start, end []byte
		if tc.start != "" {
			start = []byte(tc.start)
		}
		if tc.end != "" {
			end = []byte(tc.end)
		}
		s, e, ok := p.Intersect(start, end)
		if string(s) != tc.wantS || string(e) != tc.wantE || ok != tc.ok {
			t.Errorf("[%q, %q) ∩ [c, m) = [%q, %q) %t, want [%q, %q) %t", tc.start, tc.end, s, e, ok, tc.wantS, tc.wantE, tc.ok)
		}
	}
	if s, e, ok := (Part{Buckets: []int{0}}).Intersect(nil, nil); s != nil || e != nil || !ok {
		t.Errorf("the whole range ∩ the whole range = [%q, %q) %t", s, e, ok)
	}
}

// FuzzPlan: any row, of any bucket of any table, is in exactly one shard of any plan, and a key of
// a part's range is in the part's intersection with any range holding it.
func FuzzPlan(f *testing.F) {
	f.Add(uint16(4), uint16(3), uint16(1), []byte("o000123"))
	f.Add(uint16(1), uint16(7), uint16(0), []byte{0x80})
	f.Add(uint16(2), uint16(5), uint16(1), bytes.Repeat([]byte{0x55}, 8))
	f.Fuzz(func(t *testing.T, buckets, count, bucket uint16, key []byte) {
		b, n := int(buckets%64)+1, int(count%200)+1
		bk := int(bucket) % b
		got := owners(b, n, bk, key)
		if len(got) != 1 {
			t.Fatalf("%d shards over %d buckets: bucket %d key %x is in shards %v, want one", n, b, bk, key, got)
		}
		p := Of(b, got[0], n)
		if s, e, ok := p.Intersect(nil, nil); !ok || !bytes.Equal(s, p.Start) || !bytes.Equal(e, p.End) {
			t.Fatalf("part %x ∩ everything = [%x, %x) %t", p, s, e, ok)
		}
		if s, e, ok := p.Intersect(key, append(bytes.Clone(key), 0)); !ok || bytes.Compare(s, key) > 0 || e != nil && bytes.Compare(key, e) >= 0 {
			t.Fatalf("part %x ∩ [%x] = [%x, %x) %t, want it to hold the key", p, key, s, e, ok)
		}
	})
}
