package fanout_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync/atomic"

	"github.com/brine-kv/brine/fanout"
)

// record is a caller's own element type: fanout needs only a comparison on it.
type record struct {
	Key   string
	Value int
}

// stream returns a sorted stream over vs, which must already be in order; a real stream would read
// a file, a shard or a server range instead.
func stream[T any](vs ...T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for _, v := range vs {
			if !yield(v, nil) {
				return // the merge stopped this stream
			}
		}
	}
}

func byKey(a, b record) int { return strings.Compare(a.Key, b.Key) }

// Merging three sorted streams into one sorted sequence; equal keys come out in stream order.
func ExampleMerge() {
	streams := []iter.Seq2[record, error]{
		stream(record{"apple", 1}, record{"fig", 1}),
		stream(record{"banana", 2}, record{"fig", 2}, record{"kiwi", 2}),
		stream(record{"cherry", 3}),
	}
	for r, err := range fanout.Merge(context.Background(), streams, byKey, fanout.Options{}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(r.Key, r.Value)
	}
	// Output:
	// apple 1
	// banana 2
	// cherry 3
	// fig 1
	// fig 2
	// kiwi 2
}

// Scatter/gather over streams the merge opens itself, at most two pulled at once, stopped after
// the first four elements. The merge cancels the streams' context as soon as it stops, so a stream
// blocked in I/O returns at once.
func ExampleMergeOpen() {
	shards := [][]int{{1, 4, 7, 10}, {2, 5, 8, 11}, {3, 6, 9, 12}}
	open := func(ctx context.Context, i int) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			for _, v := range shards[i] {
				if ctx.Err() != nil {
					return // stopped: the merge reports nothing for a stream it stopped itself
				}
				if !yield(v, nil) {
					return
				}
			}
		}
	}
	opts := fanout.Options{Concurrency: 2, Limit: 4}
	var got []int
	for v, err := range fanout.MergeOpen(context.Background(), len(shards), open, cmp.Compare[int], opts) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		got = append(got, v)
	}
	fmt.Println(got)
	// Output:
	// [1 2 3 4]
}

// A consumer may break out of its loop at any time, even over endless streams: every stream is
// stopped, and its goroutine has returned, before the range statement ends.
func ExampleMerge_break() {
	multiples := func(step int) iter.Seq2[int, error] {
		return func(yield func(int, error) bool) {
			for v := step; ; v += step { // endless: only the merge's stop ends it
				if !yield(v, nil) {
					return
				}
			}
		}
	}
	streams := []iter.Seq2[int, error]{multiples(3), multiples(5)}
	for v, err := range fanout.Merge(context.Background(), streams, cmp.Compare[int], fanout.Options{Prefetch: 4}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		if v > 12 {
			break
		}
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output:
	// 3 5 6 9 10 12
}

// A stream's error ends the merged sequence as its last element, wrapped with the stream's index;
// everything before it is a prefix of the full merged sequence. MergeSequential reads nothing
// ahead, so here that prefix is every element before the failure; Merge, which reads ahead in
// parallel, may meet the error sooner and yield a shorter prefix.
func ExampleMergeSequential() {
	failing := func(yield func(int, error) bool) {
		for _, v := range []int{1, 3, 5} {
			if !yield(v, nil) {
				return
			}
		}
		yield(0, errors.New("shard unavailable"))
	}
	streams := []iter.Seq2[int, error]{
		stream(0, 2, 4, 6, 8),
		failing,
	}
	for v, err := range fanout.MergeSequential(context.Background(), streams, cmp.Compare[int], fanout.Options{}) {
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Print(v, " ")
	}
	// Output:
	// 0 1 2 3 4 5 error: stream 1: shard unavailable
}

// Running a batch of point operations, at most two at once; the first error cancels the others.
func ExampleDo() {
	keys := []string{"a", "b", "c", "d", "e"}
	var done atomic.Int64
	err := fanout.Do(context.Background(), len(keys), 2, func(ctx context.Context, i int) error {
		_ = keys[i] // a real call would send keys[i] to a server under ctx
		done.Add(1)
		return nil
	})
	fmt.Println(done.Load(), err)

	err = fanout.Do(context.Background(), len(keys), 2, func(ctx context.Context, i int) error {
		if keys[i] == "c" {
			return fmt.Errorf("put %q: %w", keys[i], errors.ErrUnsupported)
		}
		return nil
	})
	fmt.Println(err)
	// Output:
	// 5 <nil>
	// put "c": unsupported operation
}
