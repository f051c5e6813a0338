package client

import (
	"context"
	"fmt"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/salting"
)

// copyBatch is how many rows of a bucket are in flight at once: each is its own CheckAndMutate.
const copyBatch = 64

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

// copyBucket writes each row of one old bucket to the new table where the new row has no marker.
func (rb *rebucketer) copyBucket(ctx context.Context, v *routeView, br salting.BucketRange) error {
	opts := backends.ScanOptions{ReadOptions: backends.ReadOptions{MaxVersions: max(1, v.row.maxVersions)}}
	batch := make([]Row, 0, copyBatch)
	flush := func() error {
		var g errgroup.Group
		for _, row := range batch {
			g.Go(func() error {
				_, err := v.new.CheckAndMutate(ctx, markCond, Mutation{Key: row.Key, Cells: row.Cells})
				return err
			})
		}
		err := g.Wait()
		if err == nil {
			rb.rows.Add(int64(len(batch)))
		}
		batch = batch[:0]
		return err
	}
	for row, err := range v.old.bucketScan(ctx, br, opts, nil) {
		if err != nil {
			return fmt.Errorf("rebucket %s: copy: %w", rb.r.logical, err)
		}
		if batch = append(batch, row); len(batch) == copyBatch {
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
