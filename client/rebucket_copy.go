package client

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/salting"
)

// copyAll copies every old bucket not yet recorded as copied, Workers buckets at once.
func (rb *rebucketer) copyAll(ctx context.Context, row dirRow) error {
	v, err := rb.r.build(row, nil)
	if err != nil {
		return err
	}
	ranges, err := v.old.salter.BucketRanges(nil, nil)
	if err != nil {
		return fmt.Errorf("rebucket %s: %w", rb.r.logical, err)
	}
	done := len(row.done)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rb.opts.Workers)
	progress := make(chan struct{}, len(ranges)) // the loop below starts draining it only once every bucket is started
	for _, br := range ranges {
		if row.done[br.Bucket] {
			continue
		}
		g.Go(func() error {
			if err := rb.copyBucket(gctx, v, br); err != nil {
				return err
			}
			if err := markDone(gctx, rb.b, rb.r.logical, row.gen, br.Bucket); err != nil {
				return err
			}
			progress <- struct{}{}
			return nil
		})
	}
	wait := make(chan error, 1)
	go func() { wait <- g.Wait() }()
	for {
		select {
		case <-progress:
			done++
			rb.report(row, done)
		case err := <-wait:
			return err
		}
	}
}

// copyBucket writes each row of one old bucket to the new table where the new row has no marker:
// a chunk of the client's batch rows at a time, as compare-and-set batches (one per new bucket).
func (rb *rebucketer) copyBucket(ctx context.Context, v *routeView, br salting.BucketRange) error {
	opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{MaxVersions: max(1, v.row.maxVersions)}}
	batch := make([]backends.CondMutation, 0, rb.t.c.batchRows)
	flush := func() error {
		_, errs := v.new.checkAndMutateBatch(ctx, batch)
		n := len(batch)
		batch = batch[:0]
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		rb.rows.Add(int64(n))
		return nil
	}
	for row, err := range v.old.bucketScan(ctx, br, opts, nil) {
		if err != nil {
			return fmt.Errorf("rebucket %s: copy: %w", rb.r.logical, err)
		}
		// A copy never overwrites a row a writer put (or deleted) in the new table: only where the
		// marker is absent.
		if batch = append(batch, backends.CondMutation{Cond: markCond, Mut: Mutation{Key: row.Key, Cells: row.Cells}}); len(batch) == cap(batch) {
			if err := flush(); err != nil {
				return fmt.Errorf("rebucket %s: copy bucket %d: %w", rb.r.logical, br.Bucket, err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("rebucket %s: copy bucket %d: %w", rb.r.logical, br.Bucket, err)
	}
	return nil
}

// unmarkAll deletes the marker of every row of the new table; a row holding nothing else (deleted
// during the rebucket) goes with it.
func (rb *rebucketer) unmarkAll(ctx context.Context, row dirRow) error {
	v, err := rb.r.build(row, nil)
	if err != nil {
		return err
	}
	ranges, err := v.new.salter.BucketRanges(nil, nil)
	if err != nil {
		return fmt.Errorf("rebucket %s: %w", rb.r.logical, err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rb.opts.Workers)
	for _, br := range ranges {
		g.Go(func() error {
			opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{Columns: []Column{{Family: markFamily}}}}
			var muts []Mutation
			for r, err := range rb.b.Scan(gctx, v.new.name, backends.Range{Start: br.Start, End: br.End}, opts) {
				if err != nil {
					return fmt.Errorf("rebucket %s: unmark bucket %d: %w", rb.r.logical, br.Bucket, err)
				}
				muts = append(muts, Mutation{Key: slices.Clone(r.Key), Delete: true, Cells: []Cell{{Family: markFamily}}})
			}
			for chunk := range slices.Chunk(muts, rb.t.c.batchRows) {
				rowErrs, err := rb.b.Apply(gctx, v.new.name, chunk)
				if err == nil {
					for _, e := range rowErrs {
						if e != nil {
							err = e
							break
						}
					}
				}
				if err != nil {
					return fmt.Errorf("rebucket %s: unmark bucket %d: %w", rb.r.logical, br.Bucket, err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}
