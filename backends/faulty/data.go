package faulty

import (
	"context"
	"iter"

	"github.com/brine-kv/brine/backends"
)

// Read forwards to the wrapped backend, after OpRead faults.
func (f *Backend) Read(ctx context.Context, table string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	if err := f.callFaults(ctx, OpRead, table, keys); err != nil {
		return nil, err
	}
	return f.inner.Read(ctx, table, keys, opts)
}

// Apply forwards the mutations that no RowError rule failed, after the whole-call faults; AfterWrite
// rules may then fail the call although its rows were written.
func (f *Backend) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	keys := make([][]byte, len(muts))
	for i, m := range muts {
		keys[i] = m.Key
	}
	if err := f.callFaults(ctx, OpApply, table, keys); err != nil {
		return nil, err
	}
	if !f.active.Load() {
		return f.inner.Apply(ctx, table, muts)
	}

	var rowErrs []error
	for i := range f.rules {
		r := &f.rules[i]
		if r.Fault != RowError || !r.applies(OpApply, table) {
			continue
		}
		for j, m := range muts {
			if rowErrs != nil && rowErrs[j] != nil || r.hasRange() && !r.Range.Contains(m.Key) {
				continue
			}
			if ok, _ := f.roll(i, OpApply, table, m.Key); !ok {
				continue
			}
			if rowErrs == nil {
				rowErrs = make([]error, len(muts))
			}
			f.rowErrs.Add(1)
			rowErrs[j] = f.injected(i, OpApply, table)
			f.notify(Event{Rule: i, Fault: RowError, Op: OpApply, Table: table, Keys: keys[j : j+1], Err: rowErrs[j]})
		}
	}

	pass, idx := muts, []int(nil)
	if rowErrs != nil {
		pass = make([]backends.Mutation, 0, len(muts))
		for j, m := range muts {
			if rowErrs[j] == nil {
				pass = append(pass, m)
				idx = append(idx, j)
			}
		}
	}
	var innerErrs []error
	if len(pass) > 0 {
		var err error
		if innerErrs, err = f.inner.Apply(ctx, table, pass); err != nil {
			return nil, err
		}
	}
	var written [][]byte
	for k, m := range pass {
		j := k
		if idx != nil {
			j = idx[k]
		}
		var e error
		if innerErrs != nil {
			e = innerErrs[k]
		}
		if e == nil {
			written = append(written, m.Key)
			continue
		}
		if rowErrs == nil {
			rowErrs = make([]error, len(muts))
		}
		rowErrs[j] = e
	}

	for i := range f.rules {
		r := &f.rules[i]
		if r.Fault != AfterWrite || !r.applies(OpApply, table) || !r.anyKey(keys) {
			continue
		}
		var first []byte
		if len(keys) > 0 {
			first = keys[0]
		}
		if ok, _ := f.roll(i, OpApply, table, first); !ok {
			continue
		}
		f.afterWrites.Add(1)
		err := f.injected(i, OpApply, table)
		f.notify(Event{Rule: i, Fault: AfterWrite, Op: OpApply, Table: table, Keys: written, Err: err})
		return nil, err
	}
	return rowErrs, nil
}

// scanFault is a fault planned for one scan, at a row count.
type scanFault struct {
	rule int
	at   int
}

// Scan forwards to the wrapped backend; OpScan faults strike in the stream, each after the number of
// rows drawn for it.
func (f *Backend) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		f.count(OpScan)
		var plan []scanFault
		if f.active.Load() {
			id := append(append(append([]byte(nil), r.Start...), 0xff, 0), r.End...)
			if opts.Reverse {
				id = append(id, 'r')
			}
			for i := range f.rules {
				rule := &f.rules[i]
				if rule.Fault != Error && rule.Fault != Timeout && rule.Fault != Delay || !rule.applies(OpScan, table) || !rule.overlaps(r) {
					continue
				}
				if ok, x := f.roll(i, OpScan, table, id); ok {
					lo := max(0, rule.MinRows)
					plan = append(plan, scanFault{rule: i, at: lo + int(x%uint64(max(lo, rule.AfterRows)-lo+1))})
				}
			}
		}
		n := 0
		// strike fires the faults due at n rows (all of them when end is set); false: the scan is over.
		strike := func(end bool) bool {
			for k := 0; k < len(plan); k++ {
				p := plan[k]
				if !end && p.at != n {
					continue
				}
				plan = append(plan[:k], plan[k+1:]...)
				k--
				if err := f.fire(ctx, p.rule, OpScan, table, [][]byte{r.Start}, n); err != nil {
					yield(backends.Row{}, err)
					return false
				}
			}
			return true
		}
		if !strike(false) {
			return
		}
		for row, err := range f.inner.Scan(ctx, table, r, opts) {
			if err != nil {
				yield(row, err)
				return
			}
			if !yield(row, nil) {
				return
			}
			n++
			if !strike(false) {
				return
			}
		}
		strike(true)
	}
}

// Close closes the wrapped backend.
func (f *Backend) Close() error { return f.inner.Close() }
