// Package fanout holds the concurrency brine's client is built on, free of any store or salting
// type: a k-way merge of sorted streams (sequential, or scatter/gather with one goroutine per
// stream, bounded concurrency and bounded prefetch) and a bounded parallel runner for batched point
// operations.
//
// Ordering contract of every merge here: each stream must already be sorted by cmp; the merged
// sequence is sorted by cmp, and it is stable — elements that compare equal come out in stream index
// order, and in source order within one stream. Descending order is the caller's business: pass a
// reversed cmp (and streams sorted that way).
package fanout
