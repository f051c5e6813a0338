package fanout

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// Do calls fn(ctx, i) for every i in [0, n), at most concurrency calls at once (no bound when
// concurrency <= 0), and returns when every call it started has returned. The first error cancels
// the ctx given to the other calls, keeps calls not yet started from starting, and is returned as
// fn returned it. A nil result always means fn ran and succeeded for every i: if ctx ends before
// every call started, Do returns ctx.Err() even when the calls that ran succeeded.
func Do(ctx context.Context, n, concurrency int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	if concurrency > 0 {
		g.SetLimit(concurrency)
	}
	started := 0
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, i) })
		started++
	}
	err := g.Wait()
	if err == nil && started < n {
		err = ctx.Err() // not a stream error, so gctx ended because ctx did
	}
	return err
}
