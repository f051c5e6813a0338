// Package shardplan is the plan that splits a table's rows into N shards for copy, verify and sync
// (compare.Shard, migrate.Options.Shard): one piece of code, so that a copy's shard and a verify's
// shard of the same I/N are the same rows.
//
// The plan is a function of the source table's bucket count and N alone: no data is read, nothing
// is stored, and N processes that never talk to each other agree on it, as do a killed shard and its
// resume. Buckets first, as the salt spreads rows over them evenly: with N <= B buckets, shard i
// holds the buckets b with b*N/B == i, a contiguous run of B/N or B/N+1 of them, and every logical
// key. With N > B, each bucket is split further into N/B or N/B+1 pieces by its logical key space:
// shard i holds bucket i*B/N, and within it the keys between two bounds that cut the byte strings
// evenly by their first 8 bytes (SplitPoint). That split is even in keys, not in rows: rows whose
// leading bytes spread (hashes, UUIDs, random ids) fill the pieces alike, while keys that share
// their leading bytes (a monotonic time, a text or composite key's common first field) fall in a few
// pieces; docs/migrate.md says to give such tables N <= B.
package shardplan

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// MaxCount is the most shards a plan has: enough for any job runner, small enough that a piece's
// arithmetic cannot overflow.
const MaxCount = 1 << 20

// Part is one shard's rows: those whose source bucket is one of Buckets (ascending) and whose
// logical key is in [Start, End) (nil Start: from the first key; nil End: to the last).
type Part struct {
	Buckets    []int
	Start, End []byte
}

// Of returns the part of shard index of count, over a table of buckets buckets. The caller checks
// 0 <= index < count <= MaxCount and buckets >= 1.
func Of(buckets, index, count int) Part {
	if count <= buckets {
		lo, hi := firstBucket(index, count, buckets), firstBucket(index+1, count, buckets)
		p := Part{Buckets: make([]int, 0, hi-lo)}
		for b := lo; b < hi; b++ {
			p.Buckets = append(p.Buckets, b)
		}
		return p
	}
	b := index * buckets / count
	first := firstBucket(b, buckets, count) // the first shard of bucket b
	pieces := firstBucket(b+1, buckets, count) - first
	piece := index - first
	return Part{Buckets: []int{b}, Start: SplitPoint(piece, pieces), End: SplitPoint(piece+1, pieces)}
}

// firstBucket is ceil(i*of/n): the first b with b*n/of >= i, i.e. the first bucket of shard i when
// there are fewer shards (n) than buckets (of), and, with the roles swapped, the first shard of a
// bucket.
func firstBucket(i, n, of int) int { return (i*of + n - 1) / n }

// SplitPoint is the j-th of the n-1 bounds that split the byte strings into n pieces by their first
// 8 bytes read as a big-endian fraction: floor(j*2^64/n), trailing zero bytes dropped (so 1 of 2 is
// 0x80), nil for j 0 and n (the ends). The bounds rise strictly with j for 1 <= j < n <= 2^64.
func SplitPoint(j, n int) []byte {
	if j <= 0 || j >= n {
		return nil
	}
	q, _ := bits.Div64(uint64(j), 0, uint64(n)) // (j << 64) / n; j < n, so it fits
	return bytes.TrimRight(binary.BigEndian.AppendUint64(nil, q), "\x00")
}

// Contains reports whether the part holds the row of logical key in bucket.
func (p Part) Contains(bucket int, key []byte) bool {
	if p.Start != nil && bytes.Compare(key, p.Start) < 0 || p.End != nil && bytes.Compare(key, p.End) >= 0 {
		return false
	}
	lo, hi := p.Buckets[0], p.Buckets[len(p.Buckets)-1] // contiguous
	return bucket >= lo && bucket <= hi
}

// Intersect returns [start, end) ∩ [p.Start, p.End) and whether it holds any key.
func (p Part) Intersect(start, end []byte) (s, e []byte, ok bool) {
	s, e = start, end
	if p.Start != nil && bytes.Compare(p.Start, s) > 0 {
		s = p.Start
	}
	if p.End != nil && (e == nil || bytes.Compare(p.End, e) < 0) {
		e = p.End
	}
	return s, e, e == nil || bytes.Compare(s, e) < 0
}
