package testkit_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"testing"

	"github.com/brine-kv/brine/internal/testkit"
)

// values yields vs, then err when it is not nil.
func values(err error, vs ...int) iter.Seq2[int, error] {
	return func(yield func(int, error) bool) {
		for _, v := range vs {
			if !yield(v, nil) {
				return
			}
		}
		if err != nil {
			yield(0, err)
		}
	}
}

func TestCollectAndCount(t *testing.T) {
	tests := []struct {
		name      string
		seq       iter.Seq2[int, error]
		want      []int
		wantErr   error
		wantFatal string
	}{
		{"empty", values(nil), nil, nil, ""},
		{"values", values(nil, 1, 2, 3), []int{1, 2, 3}, nil, ""},
		{"error after values", values(errBoom, 1, 2), []int{1, 2}, errBoom, "after 2 values: boom"},
		{"error first", values(errBoom), nil, errBoom, "after 0 values: boom"},
	}
	for _, tt := range tests {
		got, err := testkit.CollectErr(tt.seq)
		if !slices.Equal(got, tt.want) || err != tt.wantErr {
			t.Errorf("%s: CollectErr = %v, %v; want %v, %v", tt.name, got, err, tt.want, tt.wantErr)
		}
		n, err := testkit.CountErr(tt.seq)
		if n != len(tt.want) || err != tt.wantErr {
			t.Errorf("%s: CountErr = %d, %v; want %d, %v", tt.name, n, err, len(tt.want), tt.wantErr)
		}
		var collected []int
		f := runFake(func(tb *fakeTB) { collected = testkit.Collect(tb, tt.seq) })
		if tt.wantFatal == "" && (len(f.fatal) != 0 || !slices.Equal(collected, tt.want)) {
			t.Errorf("%s: Collect = %v, fatal %q; want %v", tt.name, collected, f.fatal, tt.want)
		}
		if tt.wantFatal != "" && !slices.Equal(f.fatal, []string{tt.wantFatal}) {
			t.Errorf("%s: Collect fatal %q, want %q", tt.name, f.fatal, tt.wantFatal)
		}
		counted := -1
		f = runFake(func(tb *fakeTB) { counted = testkit.Count(tb, tt.seq) })
		if tt.wantFatal == "" && (len(f.fatal) != 0 || counted != len(tt.want)) {
			t.Errorf("%s: Count = %d, fatal %q; want %d", tt.name, counted, f.fatal, len(tt.want))
		}
		if tt.wantFatal != "" && (!slices.Equal(f.fatal, []string{tt.wantFatal}) || counted != -1) {
			t.Errorf("%s: Count fatal %q (returned %d), want %q", tt.name, f.fatal, counted, tt.wantFatal)
		}
	}
}

// reader is a Next-style reader of vs, ending with end.
type reader struct {
	vs     []int
	end    error
	closed int
}

func (r *reader) Next() (int, error) {
	if len(r.vs) == 0 {
		return 0, r.end
	}
	v := r.vs[0]
	r.vs = r.vs[1:]
	return v, nil
}

func (r *reader) Close() error {
	r.closed++
	return errors.New("close errors are dropped")
}

func TestSeq(t *testing.T) {
	tests := []struct {
		name    string
		r       *reader
		take    int // stop after this many values; 0 reads to the end
		want    []int
		wantErr error
	}{
		{"EOF", &reader{vs: []int{1, 2}, end: io.EOF}, 0, []int{1, 2}, nil},
		{"wrapped EOF", &reader{vs: []int{1}, end: fmt.Errorf("scanner: %w", io.EOF)}, 0, []int{1}, nil},
		{"error", &reader{vs: []int{1, 2}, end: errBoom}, 0, []int{1, 2}, errBoom},
		{"empty", &reader{end: io.EOF}, 0, nil, nil},
		{"stopped early", &reader{vs: []int{1, 2, 3}, end: io.EOF}, 2, []int{1, 2}, nil},
	}
	for _, tt := range tests {
		var got []int
		var gotErr error
		for v, err := range testkit.Seq(tt.r.Next, tt.r.Close) {
			if gotErr != nil {
				t.Fatalf("%s: a value after the error %v", tt.name, gotErr)
			}
			if err != nil {
				gotErr = err
				continue
			}
			if got = append(got, v); len(got) == tt.take {
				break
			}
		}
		if !slices.Equal(got, tt.want) || gotErr != tt.wantErr || tt.r.closed != 1 {
			t.Errorf("%s: %v, %v, closed %d times; want %v, %v, closed once", tt.name, got, gotErr, tt.r.closed, tt.want, tt.wantErr)
		}
	}
	// No closer: nothing to call.
	r := &reader{vs: []int{7}, end: io.EOF}
	if got := testkit.Collect(t, testkit.Seq(r.Next, nil)); !slices.Equal(got, []int{7}) || r.closed != 0 {
		t.Errorf("Seq without a closer = %v, closed %d times", got, r.closed)
	}
}

func TestFirstDiff(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{a: "", b: "", want: 0},
		{a: "abc", b: "abc", want: 3},
		{a: "abc", b: "abd", want: 2},
		{a: "xbc", b: "abc", want: 0},
		{a: "ab", b: "abc", want: 2},
		{a: "abc", b: "a", want: 1},
	}
	for _, tt := range tests {
		a, b := []byte(tt.a), []byte(tt.b)
		if got := testkit.FirstDiff(a, b); got != tt.want {
			t.Errorf("FirstDiff(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		split := func(s string) [][]byte { return bytes.SplitAfter([]byte(s), nil) }
		if got := testkit.FirstDiffFunc(split(tt.a), split(tt.b), bytes.Equal); got != tt.want {
			t.Errorf("FirstDiffFunc(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
