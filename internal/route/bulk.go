package route

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/brine-kv/brine/backends"
)

// BulkImport is client.Table.Import with ImportOptions.Bulk into the physical table pt: each row is
// taken as Import takes it (counted, salted, stamped when opts.Timestamp is set, checked for
// duplicates), and the stream of physical puts handed to the store's BulkImporter, which refuses
// bad rows before it loads anything. The batching and retry fields of opts are not used. bulk's
// OnFailure is BulkImport's own.
//
// A refused row, here or by the store, goes to opts.OnFailure with its input position. An error of
// the bulk import as a whole (ctx ended, a load failed) is returned with Written 0: the rows handed
// over are not reported one by one, as what failed is a load of many; what was loaded stays, and
// the same call again (same rows, bulk.Staging, opts.Timestamp) resumes it.
func BulkImport(ctx context.Context, core *Core, pt *Phys, rows iter.Seq2[ImportRow, error], opts ImportOptions, bulk backends.BulkOptions) (stats ImportStats, err error) {
	bi, ok := core.Backend.(backends.BulkImporter)
	if !ok {
		return ImportStats{}, fmt.Errorf("bulk import into %s: %w: the store cannot load rows as its own files", pt.Name, backends.ErrUnsupported)
	}
	ctx, im := newImporter(ctx, core, pt, opts)
	defer func() { im.call.EndImport(ctx, err, stats.Written, stats.Retried, stats.Failed) }()
	stopProgress := im.startProgress()

	// The store reports a refused row before it reads the next: it is the one handed over last.
	var last Pending
	var bytes int64
	bulk.OnFailure = func(f backends.BulkFailure) {
		bytes -= int64(last.bytes)
		im.fail([]Pending{last}, fmt.Errorf("input row %d (key %s): %w", last.Index, pt.PrintKey(last.Row.Key), f.Err))
	}
	physical := func(yield func(backends.Mutation, error) bool) {
		var index int64
		for r, err := range rows {
			ir, _, ok := im.take(index, r, err)
			index++
			if cerr := ctx.Err(); cerr != nil {
				if ok {
					im.cancel([]Pending{ir}, 0, cerr)
				}
				yield(backends.Mutation{}, cerr) // an error, not the end: nothing is loaded
				return
			}
			if !ok {
				continue
			}
			last = ir
			bytes += int64(ir.bytes)
			if !yield(ir.Phys, nil) {
				return
			}
		}
	}
	bs, err := bi.BulkImport(ctx, pt.Name, physical, bulk)
	stopProgress()
	if err != nil && !errors.Is(err, backends.ErrRowsFailed) {
		stats = im.stats()
		if opts.Progress != nil {
			opts.Progress(stats)
		}
		return stats, fmt.Errorf("bulk import into %s: %w", pt.Name, err)
	}
	im.written.Add(bs.Rows)
	im.bytes.Add(bytes)
	im.batches.Add(bs.Regions + bs.Retries)
	im.call.CountImport(ctx, bs.Rows, 0)
	return im.end(ctx)
}
