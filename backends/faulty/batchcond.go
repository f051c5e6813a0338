package faulty

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// CheckAndMutateBatch forwards to the wrapped backend, after OpAtomic faults. A batch is the one atomic call with
// several rows, so RowError and AfterWrite rules with OpAtomic strike it as they strike Apply: a
// RowError row is not sent and gets the injected error, an AfterWrite fails the call after its rows
// were tested and applied (a lost reply; the rows applied are in the Event).
func (f *Backend) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	if err := driverkit.CheckBatch(ms, 0); err != nil {
		return nil, nil, fmt.Errorf("faulty: check and mutate batch %q: %w", table, err)
	}
	keys := make([][]byte, len(ms))
	for i, cm := range ms {
		keys[i] = cm.Mut.Key
	}
	if err := f.callFaults(ctx, OpAtomic, table, keys); err != nil {
		return nil, nil, err
	}
	if !f.active.Load() {
		return f.inner.CheckAndMutateBatch(ctx, table, ms)
	}
	rowErrs := f.rowFaults(OpAtomic, table, keys)
	pass, idx := make([]backends.CondMutation, 0, len(ms)), make([]int, 0, len(ms))
	for i, cm := range ms {
		if rowErrs[i] == nil {
			pass = append(pass, cm)
			idx = append(idx, i)
		}
	}
	applied := make([]bool, len(ms))
	var written [][]byte
	if len(pass) > 0 {
		innerApplied, innerErrs, err := f.inner.CheckAndMutateBatch(ctx, table, pass)
		if err != nil {
			return nil, nil, err
		}
		for k, i := range idx {
			applied[i] = innerApplied[k]
			if innerErrs != nil {
				rowErrs[i] = innerErrs[k]
			}
			if applied[i] {
				written = append(written, keys[i])
			}
		}
	}
	if err := f.afterWriteFault(OpAtomic, table, keys, written); err != nil {
		return nil, nil, err
	}
	return driverkit.BatchOutcome(ctx, table, applied, rowErrs)
}

// rowFaults rolls the RowError rules for each key of a call: the error of each row struck, nil for
// the others.
func (f *Backend) rowFaults(op Op, table string, keys [][]byte) []error {
	errs := make([]error, len(keys))
	for i := range f.rules {
		r := &f.rules[i]
		if r.Fault != RowError || !r.applies(op, table) {
			continue
		}
		for j, k := range keys {
			if errs[j] != nil || r.hasRange() && !r.Range.Contains(k) {
				continue
			}
			if ok, _ := f.roll(i, op, table, k); !ok {
				continue
			}
			f.rowErrs.Add(1)
			errs[j] = f.injected(i, op, table)
			f.notify(Event{Rule: i, Fault: RowError, Op: op, Table: table, Keys: keys[j : j+1], Err: errs[j]})
		}
	}
	return errs
}

// afterWriteFault rolls the AfterWrite rules for a call that wrote the rows written: the error to
// report instead of its result, if one fires.
func (f *Backend) afterWriteFault(op Op, table string, keys, written [][]byte) error {
	var first []byte
	if len(keys) > 0 {
		first = keys[0]
	}
	for i := range f.rules {
		r := &f.rules[i]
		if r.Fault != AfterWrite || !r.applies(op, table) || !r.anyKey(keys) {
			continue
		}
		if ok, _ := f.roll(i, op, table, first); !ok {
			continue
		}
		f.afterWrites.Add(1)
		err := f.injected(i, op, table)
		f.notify(Event{Rule: i, Fault: AfterWrite, Op: op, Table: table, Keys: written, Err: err})
		return err
	}
	return nil
}
