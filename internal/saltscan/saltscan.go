// Package saltscan is the fan-out and merge of a salted scan, the one every scan of brine runs:
// client's (through internal/route) and both drop-ins'. A scan's logical range becomes one physical
// range per bucket (salting.BucketRanges, pruned); each part is read by a stream of its own, which
// turns the store's rows back into logical keys; and Merge merges the streams into logical order,
// ascending or descending, with fanout.MergeOpen: parts read in parallel within opts.Concurrency,
// at most opts.Prefetch rows buffered per part, each stream under a context that the merge cancels
// when it stops (its end, an error, the caller's break), so a part blocked in an RPC returns at once.
//
// The streams differ by store (their row types, their requests, their errors) and stay with their
// callers; the order they are merged in, and how the merge starts and stops them, is this package's.
package saltscan

import (
	"bytes"
	"context"
	"iter"

	"github.com/brine-kv/brine/fanout"
)

// Merge reads every part with read and merges the rows by the logical key that key returns:
// ascending, or descending when reverse is set (each stream then yields its rows descending). The
// first error of any stream ends the merge, as fanout.MergeOpen's contract says.
func Merge[P, T any](ctx context.Context, parts []P, read func(ctx context.Context, part P) iter.Seq2[T, error],
	key func(T) []byte, reverse bool, opts fanout.Options) iter.Seq2[T, error] {
	cmp := func(a, b T) int { return bytes.Compare(key(a), key(b)) }
	if reverse {
		cmp = func(a, b T) int { return bytes.Compare(key(b), key(a)) }
	}
	open := func(sctx context.Context, i int) iter.Seq2[T, error] { return read(sctx, parts[i]) }
	return fanout.MergeOpen(ctx, len(parts), open, cmp, opts)
}
