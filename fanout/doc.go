// Package fanout merges sorted streams and runs bounded parallel work. It is the concurrency
// brine's client is built on, but it knows no store, key or salting type: any Go program with its
// own sorted iter.Seq2 streams can use it, such as one range scan per shard, per file or per
// replica that must come out as one sorted sequence.
//
// It offers a k-way merge of sorted streams — Merge (scatter/gather: one goroutine per stream,
// bounded concurrency and bounded prefetch), MergeOpen (the same, for streams it opens under a
// context it cancels as soon as the merge stops) and MergeSequential (no goroutines, nothing read
// ahead) — and Do, a bounded parallel runner for batched point operations.
//
// Ordering contract of every merge here: each stream must already be sorted by cmp; the merged
// sequence is sorted by cmp, and it is stable — elements that compare equal come out in stream index
// order, and in source order within one stream. Descending order is the caller's business: pass a
// reversed cmp (and streams sorted that way).
package fanout
