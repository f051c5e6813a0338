package migrate

import (
	"context"
	"time"
)

// phaseTick is how often a phase after the rows reports that it still runs.
const phaseTick = time.Second

// during runs fn as phase (of index, if any), reporting it to Progress when it begins and every
// phaseTick until fn returns: an index's build or check writes no rows, so without these reports a
// copy would look stuck for as long as it takes.
func (j *job) during(ctx context.Context, phase, index string, fn func() error) error {
	if j.opts.Progress == nil {
		return fn()
	}
	began := time.Now()
	report := func() {
		j.progressMu.Lock()
		defer j.progressMu.Unlock()
		j.opts.Progress(Progress{Rows: j.rows.Load(), Buckets: int(j.done.Load()), Total: j.buckets,
			Phase: phase, Index: index, Elapsed: time.Since(began)})
	}
	report()
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(phaseTick)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				report()
			}
		}
	}()
	err := fn()
	close(stop)
	<-ticked // no report after during returns
	return err
}
