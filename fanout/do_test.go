package fanout

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestDo(t *testing.T) {
	for _, tc := range []struct{ n, conc int }{{0, 4}, {1, 1}, {100, 1}, {100, 4}, {100, 0}, {7, 100}} {
		t.Run(fmt.Sprintf("n=%d/conc=%d", tc.n, tc.conc), func(t *testing.T) {
			var active, maxActive atomic.Int64
			ran := make([]atomic.Int64, tc.n)
			err := Do(t.Context(), tc.n, tc.conc, func(ctx context.Context, i int) error {
				a := active.Add(1)
				defer active.Add(-1)
				for m := maxActive.Load(); a > m && !maxActive.CompareAndSwap(m, a); m = maxActive.Load() {
				}
				time.Sleep(100 * time.Microsecond)
				ran[i].Add(1)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := range ran {
				if ran[i].Load() != 1 {
					t.Fatalf("fn(%d) ran %d times", i, ran[i].Load())
				}
			}
			if tc.conc > 0 && maxActive.Load() > int64(tc.conc) {
				t.Fatalf("%d calls at once, want <= %d", maxActive.Load(), tc.conc)
			}
		})
	}
}

func TestDoFirstErrorCancels(t *testing.T) {
	var started atomic.Int64
	err := Do(t.Context(), 1000, 4, func(ctx context.Context, i int) error {
		started.Add(1)
		if i == 10 {
			return fmt.Errorf("item %d: %w", i, errBoom)
		}
		select {
		case <-ctx.Done(): // the others see the first error as cancellation
			return ctx.Err()
		case <-time.After(time.Millisecond):
			return nil
		}
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want %v", err, errBoom)
	}
	if s := started.Load(); s > 20 {
		t.Fatalf("%d calls started after the error, want the rest skipped", s)
	}
}

func TestDoCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	err := Do(ctx, 100, 2, func(ctx context.Context, i int) error {
		switch {
		case i == 5:
			cancel()
		case i > 5:
			// Holds its slot until the cancel: otherwise the other slot could run every later call
			// before call 5's goroutine is scheduled, and then every call did start, and nil is right.
			<-ctx.Done()
		}
		return nil // even when every call that ran succeeded, skipped ones must surface
	})
	if err != context.Canceled {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
