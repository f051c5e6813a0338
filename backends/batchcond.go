package backends

import (
	"context"
	"errors"
	"fmt"
	"math"
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

// BatchOutcome turns per-row results into Backend.CheckAndMutateBatch's: rowErrs nil when no row failed; the
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
