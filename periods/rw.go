package periods

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
)

// timeOf is the time a logical key routes by.
func (t *Table) timeOf(key []byte) (time.Time, error) {
	if t.cfg.TimeOf != nil {
		tm, err := t.cfg.TimeOf(key)
		if err != nil {
			return time.Time{}, fmt.Errorf("key %s: %w: time: %w", t.keyText(key), client.ErrInvalidKey, err)
		}
		return tm, nil
	}
	ms, err := keys.Int64At(key, t.cfg.TimeField)
	if err != nil {
		return time.Time{}, fmt.Errorf("key %s: %w: time field %d: %w", t.keyText(key), client.ErrInvalidKey, t.cfg.TimeField, err)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// periodAt returns the live period holding tm.
func (t *Table) periodAt(tm time.Time) (period, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	i, found := slices.BinarySearchFunc(t.periods, tm, func(o period, tm time.Time) int { return o.info.Start.Compare(tm) })
	if !found {
		i-- // the period starting last before tm, if any
	}
	if i < 0 || !tm.Before(t.periods[i].info.End) {
		return period{}, false
	}
	return t.periods[i], true
}

// route returns the table a key's row lives in. A key outside every period this handle knows makes it
// reload the list, since another process may have created the period since; *refreshed says whether
// the calling operation did so already (once is enough for a whole batch).
func (t *Table) route(ctx context.Context, key []byte, refreshed *bool) (*client.Table, error) {
	tm, err := t.timeOf(key)
	if err != nil {
		return nil, err
	}
	if p, ok := t.periodAt(tm); ok {
		return p.t, nil
	}
	if !*refreshed {
		*refreshed = true
		if err := t.Refresh(ctx); err != nil {
			return nil, err
		}
		if p, ok := t.periodAt(tm); ok {
			return p.t, nil
		}
	}
	return nil, fmt.Errorf("key %s: time %s: %w of %q", t.keyText(key), tm.Format(time.RFC3339Nano), ErrNoPeriod, t.name)
}

// Put writes cells to one row, in the period of the key's time.
func (t *Table) Put(ctx context.Context, key []byte, cells ...client.Cell) error {
	pt, err := t.route(ctx, key, new(bool))
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	return pt.Put(ctx, key, cells...)
}

// Delete deletes columns of a row, or the whole row, as client.Table.Delete does.
func (t *Table) Delete(ctx context.Context, key []byte, columns ...client.Column) error {
	pt, err := t.route(ctx, key, new(bool))
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return pt.Delete(ctx, key, columns...)
}

// Get reads one row from the period of the key's time; client.ErrNotFound if it has no cells.
func (t *Table) Get(ctx context.Context, key []byte, opts ...client.ReadOption) (client.Row, error) {
	pt, err := t.route(ctx, key, new(bool))
	if err != nil {
		return client.Row{}, fmt.Errorf("get: %w", err)
	}
	return pt.Get(ctx, key, opts...)
}

// Apply applies mutations as client.Table.Apply does, each in the period of its key's time. A key
// outside every live period fails alone with ErrNoPeriod, before anything is sent for it.
func (t *Table) Apply(ctx context.Context, muts []client.Mutation) (rowErrs []error, err error) {
	errs := make([]error, len(muts))
	groups := map[*client.Table][]int{}
	refreshed := false
	for i, m := range muts {
		pt, err := t.route(ctx, m.Key, &refreshed)
		if err != nil {
			errs[i] = fmt.Errorf("row %d: %w", i, err)
			continue
		}
		groups[pt] = append(groups[pt], i)
	}
	var callErr error
	sent, failedWhole := 0, 0
	for pt, idx := range groups {
		sub := make([]client.Mutation, len(idx))
		for j, i := range idx {
			sub[j] = muts[i]
		}
		sent++
		subErrs, err := pt.Apply(ctx, sub)
		if err != nil {
			failedWhole++
			callErr = err
		}
		for j, i := range idx {
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("row %d: %w", i, err)
			case subErrs != nil && subErrs[j] != nil:
				errs[i] = fmt.Errorf("row %d: %w", i, errors.Unwrap(subErrs[j]))
			}
		}
	}
	// As in client.Table.Apply: when every request failed whole, no row was written and the call
	// failed; when every row was written, there are no row errors.
	if sent > 0 && failedWhole == sent {
		return nil, t.errorf("apply: %w", callErr)
	}
	if !slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		return nil, nil
	}
	return errs, nil
}

// Scan returns the rows of the logical range r in logical key order (descending with Reverse), from
// every live period that can hold rows of r, as client.Table.Scan does for one table: the periods
// are read as one stream by client.Client.ScanTables, so periods that interleave in key order (a
// time field that is not the first) come out in order too. Limit and ResumeAfter apply to the
// logical stream; the cursor is a logical key. Periods are chosen by r alone, not by a cursor.
//
// The periods are those this handle knows when the scan starts. A period dropped while the scan reads
// it ends the scan with an error wrapping ErrExpired, after a prefix of the full result.
func (t *Table) Scan(ctx context.Context, r client.Range, opts ...client.ReadOption) iter.Seq2[client.Row, error] {
	return func(yield func(client.Row, error) bool) {
		var tables []*client.Table
		for _, p := range t.overlapping(r) {
			tables = append(tables, p.t)
		}
		for row, err := range t.c.ScanTables(ctx, tables, r, opts...) {
			switch {
			case errors.Is(err, client.ErrTableNotFound):
				err = t.errorf("%w: %w", ErrExpired, err)
			case err != nil:
				err = t.errorf("%w", err)
			}
			if !yield(row, err) || err != nil {
				return
			}
		}
	}
}

// overlapping returns the periods that can hold keys of r. When r's two bounds share every field
// before the time field (always so when it is the first), the keys between them have their time
// between the bounds' times, and only the periods of that span are read; otherwise every period.
func (t *Table) overlapping(r client.Range) []period {
	t.mu.RLock()
	all := t.periods
	t.mu.RUnlock()
	lo, hi, ok := t.timeSpan(r)
	if !ok {
		return all
	}
	var out []period
	for _, p := range all {
		if !p.info.Start.After(hi) && p.info.End.After(lo) {
			out = append(out, p)
		}
	}
	return out
}

// timeSpan bounds (inclusively) the time of every key in r, when r allows it.
func (t *Table) timeSpan(r client.Range) (lo, hi time.Time, ok bool) {
	if t.cfg.TimeOf != nil {
		return lo, hi, false
	}
	f := t.cfg.TimeField
	lo, hi = time.UnixMilli(math.MinInt64), time.UnixMilli(math.MaxInt64)
	if f > 0 {
		// Keys between two bounds share the fields before the time field only when both bounds hold
		// those fields and they are equal; then the time field decides as if it came first.
		startN, errS := keys.FieldsLen(r.Start, f)
		endN, errE := keys.FieldsLen(r.End, f)
		if errS != nil || errE != nil || !bytes.Equal(r.Start[:startN], r.End[:endN]) {
			return lo, hi, false
		}
	}
	desc := false
	if sp, err := keys.FieldSpan(r.Start, f); err == nil {
		desc = sp.Desc
	} else if sp, err := keys.FieldSpan(r.End, f); err == nil {
		desc = sp.Desc
	}
	// A key >= Start has, in that field, a value >= Start's (<= for a descending field): the fields
	// before it are equal and it has a fixed width. Likewise below End.
	if v, err := keys.Int64At(r.Start, f); err == nil {
		if desc {
			hi = time.UnixMilli(v)
		} else {
			lo = time.UnixMilli(v)
		}
	}
	if v, err := keys.Int64At(r.End, f); err == nil {
		if desc {
			lo = time.UnixMilli(v)
		} else {
			hi = time.UnixMilli(v)
		}
	}
	return lo, hi, true
}
