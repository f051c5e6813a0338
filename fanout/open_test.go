package fanout

import (
	"cmp"
	"context"
	"iter"
	"testing"
	"time"
)

// TestMergeOpenCancelsBlockedStreams: streams blocked in "I/O" under MergeOpen's context return as
// soon as the merge stops, however it stops, and the parent context is left alone.
func TestMergeOpenCancelsBlockedStreams(t *testing.T) {
	tests := []struct {
		name  string
		limit int
		take  int // elements the consumer takes before breaking; 0: no break
	}{
		{"consumer break", 0, 1},
		{"limit", 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			opened := 0
			open := func(sctx context.Context, i int) iter.Seq2[int, error] {
				opened++
				return func(yield func(int, error) bool) {
					// each stream's head is known (the merge needs every head), then its next read blocks
					if !yield(i, nil) {
						return
					}
					<-sctx.Done() // a read blocked until the merge stops
					yield(0, sctx.Err())
				}
			}
			done := make(chan int)
			go func() {
				got := 0
				for _, err := range MergeOpen(ctx, 3, open, cmp.Compare[int], Options{Limit: tc.limit}) {
					if err != nil {
						t.Errorf("error %v, want none", err)
						break
					}
					got++
					if got == tc.take {
						break
					}
				}
				done <- got
			}()
			select {
			case got := <-done:
				if got != 1 {
					t.Errorf("%d elements, want 1", got)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("merge did not stop: its streams' context was not cancelled")
			}
			if opened != 3 {
				t.Errorf("%d streams opened, want 3", opened)
			}
			if ctx.Err() != nil {
				t.Errorf("parent context ended: %v", ctx.Err())
			}
		})
	}
}
