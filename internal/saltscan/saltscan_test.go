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

// A caller's break cancels the context of every part, so a part blocked in its store returns.
func TestMergeStopCancelsParts(t *testing.T) {
	defer goleak.VerifyNone(t)
	cancelled := make(chan struct{}, 2)
	read := func(ctx context.Context, first string) iter.Seq2[string, error] {
		return func(yield func(string, error) bool) {
			if !yield(first, nil) {
				return
			}
			<-ctx.Done() // a store call that only returns when cancelled
			cancelled <- struct{}{}
			yield("", ctx.Err())
		}
	}
	for k, err := range Merge(context.Background(), []string{"a", "b"}, read, func(k string) []byte { return []byte(k) }, false, fanout.Options{}) {
		if err != nil {
			t.Fatal(err)
		}
		if k == "a" {
			break
		}
	}
	for range 2 {
		<-cancelled
	}
}
