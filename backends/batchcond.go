package backends

import (
	"context"
	"errors"
	"fmt"
	"math"

	"golang.org/x/sync/errgroup"
)

// CondMutation is one row's conditional write in a batch: Mut is applied to its row if Cond holds
// there, as CheckAndMutate does.
type CondMutation struct {
	Cond Condition
	Mut  Mutation
	// Deferred lets the store acknowledge the write before it is durable: HBase sends it with
	// Durability ASYNC_WAL, so the region server appends it to its WAL without waiting for a sync
	// (it syncs within hbase.regionserver.optionallogflushinterval, 1 s by default). A region
	// server's crash can lose it, but not on its own: the WAL keeps a region's edits in order, so
	// any later write to the same region acknowledged as durable makes it durable too. It is meant
	// for bookkeeping whose loss is repaired, where a conditional row's own WAL sync is most of its
	// cost. Stores without the notion write it durably; outcomes are the same either way.
	Deferred bool
}

// BatchRowAtomic is implemented by drivers that send many rows' CheckAndMutate together (HBase: one
// Multi RPC per region, one conditional action per row). Callers use the function
// CheckAndMutateBatch, which falls back to one CheckAndMutate per row on other drivers.
type BatchRowAtomic interface {
	// CheckAndMutateBatch does CheckAndMutate for each of ms: each row atomically, not the batch as a
	// whole. applied[i] reports whether ms[i] was applied. rowErrs is nil when every row got an
	// answer; otherwise rowErrs[i] is the error of ms[i] (nil for the rows answered), and such a row
	// may have been applied when the error is a lost reply. err reports a failure of the whole call
	// (missing table, bad input, ctx done before any answer), with applied and rowErrs nil.
	//
	// Input that cannot be sent as given fails the whole call before anything is sent: an empty or
	// too long key, a put without cells, a negative timestamp, two mutations of one row (CheckBatch).
	// A family the table does not have, in the mutation or the condition, fails that row alone with
	// ErrInvalidArgument (HBase learns it from the server).
	CheckAndMutateBatch(ctx context.Context, table string, ms []CondMutation) (applied []bool, rowErrs []error, err error)
}

// fallbackParallelism bounds the concurrent CheckAndMutate calls of the per-row fallback: enough to
// hide a network store's round trips, few enough not to swamp it.
const fallbackParallelism = 16

// CheckAndMutateBatch is the one entry point for a batch of conditional writes: it checks ms
// (CheckBatch), then uses the driver's BatchRowAtomic, or else sends one RowAtomic.CheckAndMutate per
// row, a bounded number at a time, with BatchRowAtomic's results. On the fallback, input only the
// driver can judge (a key past its limit) fails that row alone. A driver with neither fails with
// ErrUnsupported.
func CheckAndMutateBatch(ctx context.Context, b Backend, table string, ms []CondMutation) (applied []bool, rowErrs []error, err error) {
	if err := CheckBatch(ms, 0); err != nil {
		return nil, nil, fmt.Errorf("brine: check and mutate batch %q: %w", table, err)
	}
	if br, ok := b.(BatchRowAtomic); ok {
		return br.CheckAndMutateBatch(ctx, table, ms)
	}
	ra, ok := b.(RowAtomic)
	if !ok {
		return nil, nil, fmt.Errorf("brine: check and mutate batch %q: %w", table, ErrUnsupported)
	}
	return CheckAndMutateEach(ctx, ra, table, ms, fallbackParallelism)
}

// CheckAndMutateEach sends one CheckAndMutate per row of ms, at most parallel at a time, and reports
// as BatchRowAtomic does. Drivers without a native batch call (and the fallback) use it.
func CheckAndMutateEach(ctx context.Context, ra RowAtomic, table string, ms []CondMutation, parallel int) ([]bool, []error, error) {
	applied := make([]bool, len(ms))
	errs := make([]error, len(ms))
	var g errgroup.Group
	g.SetLimit(max(1, parallel))
	for i := range ms {
		g.Go(func() error {
			applied[i], errs[i] = ra.CheckAndMutate(ctx, table, ms[i].Cond, ms[i].Mut)
			return nil
		})
	}
	_ = g.Wait() // the goroutines report through applied and errs
	return BatchOutcome(ctx, table, applied, errs)
}

// CheckBatch refuses, before anything is sent, a batch of conditional writes that no store could
// apply as given: a key that is empty or longer than keyLimit (ErrInvalidKey; keyLimit 0 sets no
// limit), a put without cells or a negative timestamp (CheckMutation), two mutations of one row
// (ErrInvalidArgument: which one would the condition see?). Families are left to the driver.
func CheckBatch(ms []CondMutation, keyLimit int) error {
	if keyLimit <= 0 {
		keyLimit = math.MaxInt
	}
	seen := make(map[string]int, len(ms))
	for i := range ms {
		m := &ms[i].Mut
		if err := CheckMutation(nil, keyLimit, m); err != nil {
			return fmt.Errorf("row %d (%q): %w", i, m.Key, err)
		}
		if j, dup := seen[string(m.Key)]; dup {
			return fmt.Errorf("rows %d and %d: %w: two mutations of row %q in one batch", j, i, ErrInvalidArgument, m.Key)
		}
		seen[string(m.Key)] = i
	}
	return nil
}

// BatchOutcome turns per-row results into BatchRowAtomic's: rowErrs nil when no row failed; the
// whole call's error when no row got an answer because the table is missing or ctx ended.
func BatchOutcome(ctx context.Context, table string, applied []bool, rowErrs []error) ([]bool, []error, error) {
	failed := 0
	var notFound error
	for _, err := range rowErrs {
		if err != nil {
			failed++
			if notFound == nil && errors.Is(err, ErrTableNotFound) {
				notFound = err
			}
		}
	}
	switch {
	case failed == 0:
		return applied, nil, nil
	case failed < len(rowErrs):
		return applied, rowErrs, nil
	case notFound != nil:
		return nil, nil, notFound
	case ctx.Err() != nil:
		return nil, nil, fmt.Errorf("brine: check and mutate batch %q: %w", table, ctx.Err())
	}
	return applied, rowErrs, nil
}
