package periods

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/brine-kv/brine/client"
)

// Import writes a stream of rows as client.Table.Import does, each into the period of its key's
// time: the input is read once and each row handed to its period's import, which batches and writes
// with opts (so each period written to has its own opts.Workers writers). client.Table.Import's rules
// hold for the whole input: every row read is written or reported to OnFailure, with its position in
// the input (a key outside every live period fails alone with ErrNoPeriod, as Put does); a key always
// falls in one period, so OnDuplicate sees every repeat; when ctx ends, Import stops pulling rows.
// OnFailure and Progress are called from one goroutine at a time; Progress gets the sums over the
// periods. opts.Bulk is refused (client.ErrUnsupported): the periods' imports run at once, and a
// staging directory holds one bulk import at a time.
func (t *Table) Import(ctx context.Context, rows iter.Seq2[client.ImportRow, error], opts client.ImportOptions) (stats client.ImportStats, err error) {
	if opts.Bulk != nil {
		return stats, fmt.Errorf("import into period table %s: bulk: %w: its periods are imported at once, and a staging directory holds one bulk import", t.Name(), client.ErrUnsupported)
	}
	began := time.Now()
	if opts.Timestamp.IsZero() {
		opts.Timestamp = began // one stamp for every period: a repeat is stamped from it wherever it goes
	}
	agg := &importSums{opts: opts, latest: map[string]client.ImportStats{}}
	sub := opts
	sub.OnFailure = func(fr client.FailedRow) {
		src := fr.Row.Source.(routedSource)
		fr.Index, fr.Row.Source = src.index, src.source
		agg.fail(fr, false)
	}

	periods := map[string]*periodImport{}
	var wg sync.WaitGroup
	refreshed := false
	var index int64
	for r, rerr := range rows {
		i := index
		index++
		if rerr != nil {
			agg.fail(client.FailedRow{Index: i, Row: r, Err: fmt.Errorf("input row %d: %w", i, rerr)}, true)
			continue
		}
		pt, rerr := t.route(ctx, r.Key, &refreshed)
		if rerr != nil {
			agg.fail(client.FailedRow{Index: i, Row: r, Err: fmt.Errorf("input row %d: %w", i, rerr)}, true)
			continue
		}
		pi := periods[pt.Name()]
		if pi == nil {
			pi = &periodImport{name: pt.Name(), rows: make(chan client.ImportRow), done: make(chan struct{})}
			periods[pt.Name()] = pi
			popts := sub
			if opts.Progress != nil {
				popts.Progress = func(s client.ImportStats) { agg.progress(pi.name, s) }
			}
			wg.Go(func() {
				defer close(pi.done)
				pi.stats, pi.err = pt.Import(ctx, pi.pull, popts)
			})
		}
		routed := r
		routed.Source = routedSource{index: i, source: r.Source}
		select {
		case pi.rows <- routed:
		case <-pi.done: // the period's import stopped pulling, which it does only when ctx ends
			agg.fail(client.FailedRow{Index: i, Row: r, Err: fmt.Errorf("input row %d: %w", i, context.Cause(ctx))}, true)
		}
		if ctx.Err() != nil {
			break
		}
	}
	for _, pi := range periods {
		close(pi.rows)
	}
	wg.Wait()

	var errs []error
	for _, pi := range periods {
		agg.latest[pi.name] = pi.stats // every period's import has returned: nothing else touches agg
		if pi.err != nil && !errors.Is(pi.err, client.ErrRowsFailed) && !errors.Is(pi.err, ctx.Err()) {
			errs = append(errs, pi.err)
		}
	}
	stats = agg.sum()
	stats.Elapsed = time.Since(began)
	if opts.Progress != nil {
		opts.Progress(stats)
	}
	switch {
	case ctx.Err() != nil:
		return stats, ctx.Err()
	case len(errs) > 0:
		return stats, errors.Join(errs...)
	case stats.Failed > 0:
		return stats, t.errorf("import: %d of %d rows failed: %w", stats.Failed, stats.Read, client.ErrRowsFailed)
	}
	return stats, nil
}

// routedSource carries a row's position in the whole input through its period's import, whose
// own positions count that period's rows only.
type routedSource struct {
	index  int64
	source any
}

// periodImport is the import of one period's rows, fed by Table.Import.
type periodImport struct {
	name  string
	rows  chan client.ImportRow // unbuffered: a row handed over is the period's import's to write or report
	done  chan struct{}
	stats client.ImportStats
	err   error
}

func (pi *periodImport) pull(yield func(client.ImportRow, error) bool) {
	for r := range pi.rows {
		if !yield(r, nil) {
			return
		}
	}
}

// importSums adds up the periods' imports and the rows that never reached one, and serializes the
// caller's callbacks.
type importSums struct {
	opts   client.ImportOptions
	mu     sync.Mutex
	own    client.ImportStats            // rows failed before reaching a period
	latest map[string]client.ImportStats // each period's import's last reported stats
}

// fail reports a failed row; own says whether it failed here, before reaching a period.
func (a *importSums) fail(fr client.FailedRow, own bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if own {
		a.own.Read++
		a.own.Failed++
	}
	if a.opts.OnFailure != nil {
		a.opts.OnFailure(fr)
	}
}

// progress records the stats a period's import reported and passes the sums on.
func (a *importSums) progress(period string, s client.ImportStats) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.latest[period] = s
	a.opts.Progress(a.sumLocked())
}

func (a *importSums) sum() client.ImportStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sumLocked()
}

func (a *importSums) sumLocked() client.ImportStats {
	s := a.own
	for _, p := range a.latest {
		s.Read += p.Read
		s.Written += p.Written
		s.Failed += p.Failed
		s.Duplicates += p.Duplicates
		s.Retried += p.Retried
		s.Batches += p.Batches
		s.Bytes += p.Bytes
		s.Elapsed = max(s.Elapsed, p.Elapsed)
	}
	return s
}
