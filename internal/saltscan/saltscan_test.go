package saltscan

import (
	"context"
	"iter"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/brine-kv/brine/fanout"
)

func stream(keys ...string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for _, k := range keys {
			if !yield(k, nil) {
				return
			}
		}
	}
}

func TestMergeOrdersByLogicalKey(t *testing.T) {
	defer goleak.VerifyNone(t)
	cases := []struct {
		name    string
		parts   [][]string
		reverse bool
		want    []string
	}{
		{name: "ascending", parts: [][]string{{"a", "d"}, {"b", "c", "e"}, {}}, want: []string{"a", "b", "c", "d", "e"}},
		{name: "descending", parts: [][]string{{"d", "a"}, {"e", "c", "b"}}, reverse: true, want: []string{"e", "d", "c", "b", "a"}},
		{name: "no parts", want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			read := func(_ context.Context, keys []string) iter.Seq2[string, error] { return stream(keys...) }
			var got []string
			for k, err := range Merge(context.Background(), tc.parts, read, func(k string) []byte { return []byte(k) }, tc.reverse, fanout.Options{}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, k)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A caller's break cancels the context of every part, so a part blocked in its store returns. Part
// "a" is surely blocked when the caller breaks (it says so first); part "b" may be stopped at its
// yield instead, as a part is when the merge stops while it hands a row over.
func TestMergeStopCancelsParts(t *testing.T) {
	defer goleak.VerifyNone(t)
	blocked, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	read := func(ctx context.Context, first string) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			if !yield(first, nil) {
				return
			}
			if first == "a" {
				blocked <- struct{}{}
			}
			<-ctx.Done() // a store call that only returns when cancelled
			if first == "a" {
				cancelled <- struct{}{}
			}
			yield("", ctx.Err())
		}
	}
	for k, err := range Merge(context.Background(), []string{"a", "b"}, read, func(k string) []byte { return []byte(k) }, false, fanout.Options{}) {
		if err != nil {
			t.Fatal(err)
		}
		if k == "a" {
			<-blocked
			break
		}
	}
	// Merge has waited for its parts: a part still blocked would have kept it from returning.
	select {
	case <-cancelled:
	default:
		t.Fatal(`part "a", blocked in its store, returned without its context cancelled`)
	}
}
