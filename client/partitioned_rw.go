package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/brine-kv/brine/keys"
)

// timeOf is the time a logical key routes by.
func (p *Partitioned) timeOf(key []byte) (time.Time, error) {
	if p.cfg.TimeOf != nil {
		t, err := p.cfg.TimeOf(key)
		if err != nil {
			return time.Time{}, fmt.Errorf("key %s: %w: time: %w", keyText(key), ErrInvalidKey, err)
		}
		return t, nil
	}
	ms, err := keys.Int64At(key, p.cfg.TimeField)
	if err != nil {
		return time.Time{}, fmt.Errorf("key %s: %w: time field %d: %w", keyText(key), ErrInvalidKey, p.cfg.TimeField, err)
	}
	return time.UnixMilli(ms).UTC(), nil
}

// periodAt returns the live period holding t.
func (p *Partitioned) periodAt(t time.Time) (periodTable, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	i, found := slices.BinarySearchFunc(p.periods, t, func(o periodTable, t time.Time) int { return o.info.Start.Compare(t) })
	if !found {
		i-- // the period starting last before t, if any
	}
	if i < 0 || !t.Before(p.periods[i].info.End) {
		return periodTable{}, false
	}
	return p.periods[i], true
}

// route returns the table a key's row lives in. A key outside every period this handle knows makes it
// reload the list, since another process may have created the period since; *refreshed says whether
// the calling operation did so already (once is enough for a whole batch).
func (p *Partitioned) route(ctx context.Context, key []byte, refreshed *bool) (*Table, error) {
	t, err := p.timeOf(key)
	if err != nil {
		return nil, err
	}
	if pt, ok := p.periodAt(t); ok {
		return pt.t, nil
	}
	if !*refreshed {
		*refreshed = true
		if err := p.Refresh(ctx); err != nil {
			return nil, err
		}
		if pt, ok := p.periodAt(t); ok {
			return pt.t, nil
		}
	}
	return nil, fmt.Errorf("key %s: time %s: %w of %q", keyText(key), t.Format(time.RFC3339Nano), ErrNoPeriod, p.name)
}

// Put writes cells to one row, in the period of the key's time.
func (p *Partitioned) Put(ctx context.Context, key []byte, cells ...Cell) error {
	t, err := p.route(ctx, key, new(bool))
	if err != nil {
		return fmt.Errorf("put: %w", err)
	}
	return t.Put(ctx, key, cells...)
}

// Delete deletes columns of a row, or the whole row, as Table.Delete does.
func (p *Partitioned) Delete(ctx context.Context, key []byte, columns ...Column) error {
	t, err := p.route(ctx, key, new(bool))
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	return t.Delete(ctx, key, columns...)
}

// Get reads one row from the period of the key's time; ErrNotFound if it has no cells.
func (p *Partitioned) Get(ctx context.Context, key []byte, opts ...ReadOption) (Row, error) {
	t, err := p.route(ctx, key, new(bool))
	if err != nil {
		return Row{}, fmt.Errorf("get: %w", err)
	}
	return t.Get(ctx, key, opts...)
}

// Apply applies mutations as Table.Apply does, each in the period of its key's time. A key outside
// every live period fails alone with ErrNoPeriod, before anything is sent for it.
func (p *Partitioned) Apply(ctx context.Context, muts []Mutation) (rowErrs []error, err error) {
	errs := make([]error, len(muts))
	groups := map[*Table][]int{}
	refreshed := false
	for i, m := range muts {
		t, err := p.route(ctx, m.Key, &refreshed)
		if err != nil {
			errs[i] = fmt.Errorf("row %d: %w", i, err)
			continue
		}
		groups[t] = append(groups[t], i)
	}
	var callErr error
	sent, failedWhole := 0, 0
	for t, idx := range groups {
		sub := make([]Mutation, len(idx))
		for j, i := range idx {
			sub[j] = muts[i]
		}
		sent++
		subErrs, err := t.Apply(ctx, sub)
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
	// As in Table.Apply: when every request failed whole, no row was written and the call failed.
	if sent > 0 && failedWhole == sent {
		return nil, fmt.Errorf("apply %s: %w", p.name, callErr)
	}
	return rowErrors(errs), nil
}

// Scan returns the rows of the logical range r in logical key order (descending with Reverse), from
// every live period that can hold rows of r, as Table.Scan does for one table: each period's bucket
// scans (pruned as in Table.Scan) are merged into one stream by the one k-way merge, so periods that
// interleave in key order (a time field that is not the first) come out in order too. Limit and
// ResumeAfter apply to the logical stream; the cursor is a logical key.
//
// The periods are those this handle knows when the scan starts. A period dropped while the scan reads
// it ends the scan with an error wrapping ErrPeriodExpired, after a prefix of the full result.
func (p *Partitioned) Scan(ctx context.Context, r Range, opts ...ReadOption) iter.Seq2[Row, error] {
	cfg := newReadConfig(printedKeys(p.keySchema, opts))
	return func(yield func(Row, error) bool) {
		ctx, c := p.c.tel.begin(ctx, "scan", p.name)
		defer c.endScan(ctx)
		if err := checkRange(p.name, r, keyText); err != nil {
			c.fail(err)
			yield(Row{}, err)
			return
		}
		r := cfg.resume(r)
		if len(r.End) > 0 && bytes.Compare(r.Start, r.End) >= 0 {
			return
		}
		var parts []scanPart
		total := 0
		for _, pt := range p.overlapping(r) {
			ranges, err := pt.t.salter.BucketRanges(r.Start, r.End)
			if err != nil {
				err = fmt.Errorf("scan %s: period %s: %w", p.name, pt.info.Table, err)
				c.fail(err)
				yield(Row{}, err)
				return
			}
			total += pt.t.salter.Buckets()
			wrap := func(rows iter.Seq2[Row, error]) iter.Seq2[Row, error] { return periodErrors(pt.info.Table, rows) }
			for _, br := range ranges {
				parts = append(parts, scanPart{t: pt.t, br: br, wrap: wrap})
			}
		}
		c.scanBuckets(len(parts), total)
		p.c.fanScan(ctx, c, p.name, cfg, parts, yield)
	}
}

// periodErrors names the period in a stream's error, and marks a missing table as an expired period.
func periodErrors(table string, src iter.Seq2[Row, error]) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for row, err := range src {
			switch {
			case errors.Is(err, ErrTableNotFound):
				err = fmt.Errorf("period %s: %w: %w", table, ErrPeriodExpired, err)
			case err != nil:
				err = fmt.Errorf("period %s: %w", table, err)
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
func (p *Partitioned) overlapping(r Range) []periodTable {
	p.mu.RLock()
	all := p.periods
	p.mu.RUnlock()
	lo, hi, ok := p.timeSpan(r)
	if !ok {
		return all
	}
	var out []periodTable
	for _, pt := range all {
		if !pt.info.Start.After(hi) && pt.info.End.After(lo) {
			out = append(out, pt)
		}
	}
	return out
}

// timeSpan bounds (inclusively) the time of every key in r, when r allows it.
func (p *Partitioned) timeSpan(r Range) (lo, hi time.Time, ok bool) {
	if p.cfg.TimeOf != nil {
		return lo, hi, false
	}
	f := p.cfg.TimeField
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
