package testkit

import (
	"errors"
	"io"
	"iter"
	"testing"
)

// Seq is the sequence of the values next returns (a gohbase scanner's Next, say) up to io.EOF, or up
// to another error, which it yields last. closer, when not nil, runs when the sequence ends, however
// it ends; its error is dropped.
func Seq[T any](next func() (T, error), closer func() error) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if closer != nil {
			defer func() { _ = closer() }()
		}
		for {
			v, err := next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(v, err) || err != nil {
				return
			}
		}
	}
}

// Collect gathers a sequence's values (a scan's rows, say), failing the test at its first error.
func Collect[T any](t testing.TB, seq iter.Seq2[T, error]) []T {
	t.Helper()
	out, err := CollectErr(seq)
	if err != nil {
		t.Fatalf("after %d values: %v", len(out), err)
	}
	return out
}

// CollectErr gathers a sequence's values up to its first error, and returns them with that error.
func CollectErr[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Count counts a sequence's values (a scan's rows, say), failing the test at its first error.
func Count[T any](t testing.TB, seq iter.Seq2[T, error]) int {
	t.Helper()
	n, err := CountErr(seq)
	if err != nil {
		t.Fatalf("after %d values: %v", n, err)
	}
	return n
}

// CountErr counts a sequence's values up to its first error, and returns the count with that error.
func CountErr[T any](seq iter.Seq2[T, error]) (int, error) {
	n := 0
	for _, err := range seq {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// FirstDiff is the first index at which a and b differ: the shorter one's length when one is a
// prefix of the other, and that length when they are equal.
func FirstDiff[T comparable](a, b []T) int {
	return FirstDiffFunc(a, b, func(x, y T) bool { return x == y })
}

// FirstDiffFunc is FirstDiff with eq telling equal elements.
func FirstDiffFunc[T any](a, b []T, eq func(T, T) bool) int {
	for i := range min(len(a), len(b)) {
		if !eq(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}
