package client

import (
	"context"
	"fmt"

	"github.com/brine-kv/brine/backends"
)

// checkAndMutateMany does CheckAndMutate for each of ms (logical keys) on t, in batches
// (checkAndMutateBatch) on the physical table its router sends a CheckAndMutate to, the rows first
// copied or marked while a rebucket is under way (prepareAtomicMany), as CheckAndMutate does for
// one row.
func (t *Table) checkAndMutateMany(ctx context.Context, ms []backends.CondMutation) (applied []bool, errs []error) {
	keys := make([][]byte, len(ms))
	for i, m := range ms {
		keys[i] = m.Mut.Key
	}
	pt, families, prep, err := t.rt.prepareAtomicMany(ctx, keys)
	applied, errs = make([]bool, len(ms)), make([]error, len(ms))
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("check and mutate %s: %w", t.printKey(keys[i]), err)
		}
		return applied, errs
	}
	var send []backends.CondMutation
	var at []int
	for i, m := range ms {
		if prep[i] != nil {
			errs[i] = fmt.Errorf("check and mutate %s: %w", t.printKey(keys[i]), prep[i])
			continue
		}
		m.Mut = keepMark(m.Mut, families)
		send, at = append(send, m), append(at, i)
	}
	if len(send) == 0 {
		return applied, errs
	}
	a, e := pt.checkAndMutateBatch(ctx, send)
	for j, i := range at {
		applied[i], errs[i] = a[j], e[j]
	}
	return applied, errs
}

// checkAndMutateBatch does CheckAndMutate for each of ms (logical keys), grouped by bucket into
// batches of at most batchRows rows, each one CheckAndMutateBatch call, in parallel: the protocols
// built on compare-and-set (index writes, rebucket copies) pay one round trip per batch, not per row.
// applied[i] and errs[i] are ms[i]'s outcome; a row with an error may have been applied (a lost
// reply), as with CheckAndMutate. The rebucket copy writes its target with it; a Table's batch goes
// through checkAndMutateMany.
func (pt *physTable) checkAndMutateBatch(ctx context.Context, ms []backends.CondMutation) (applied []bool, errs []error) {
	applied, errs = make([]bool, len(ms)), make([]error, len(ms))
	phys := make([]backends.CondMutation, len(ms))
	buckets := make([]int, len(ms))
	valid := make([]bool, len(ms))
	for i, m := range ms {
		pk, b, err := pt.physical(m.Mut.Key)
		if err != nil {
			errs[i] = fmt.Errorf("check and mutate %s: %w", pt.printKey(m.Mut.Key), err)
			continue
		}
		m.Mut.Key = pk
		phys[i], buckets[i], valid[i] = m, b, true
	}
	pt.checkAndMutatePhysical(ctx, phys, buckets, valid, applied, errs)
	return applied, errs
}

// checkAndMutatePhysical is checkAndMutateBatch for the rows of ms (physical keys, in bucket
// buckets[i]) that are valid, straight to the store: the index protocol's data writes, which name
// the physical row they read. It fills applied and errs.
//
// Two mutations of one row go in successive rounds, in their order in ms: a batch holds one
// mutation per row (driverkit.CheckBatch), and the second one's condition must see the first applied.
func (pt *physTable) checkAndMutatePhysical(ctx context.Context, ms []backends.CondMutation, buckets []int, valid, applied []bool, errs []error) {
	ctx, c := pt.c.tel.Begin(ctx, "check_and_mutate_batch", pt.name)
	var written int64
	defer func() { c.End(ctx, nil, 0, written) }()
	left := valid
	for {
		round := make([]bool, len(ms))
		next := make([]bool, len(ms))
		seen := make(map[string]bool)
		more := false
		for i, ok := range left {
			switch {
			case !ok:
			case seen[string(ms[i].Mut.Key)]:
				next[i] = true
			default:
				seen[string(ms[i].Mut.Key)], round[i], more = true, true, true
			}
		}
		if !more {
			break
		}
		pt.runBatches(ctx, buckets, round, func(ctx context.Context, idx []int) {
			batch := make([]backends.CondMutation, len(idx))
			for j, i := range idx {
				batch[j] = ms[i]
			}
			a, rowErrs, err := pt.c.backend.CheckAndMutateBatch(ctx, pt.name, batch)
			for j, i := range idx {
				switch {
				case err != nil:
					errs[i] = fmt.Errorf("check and mutate batch %s: %w", pt.name, err)
				case rowErrs != nil && rowErrs[j] != nil:
					errs[i] = fmt.Errorf("check and mutate batch %s: %w", pt.name, rowErrs[j])
				default:
					applied[i] = a[j]
				}
			}
		})
		left = next
	}
	for _, a := range applied {
		if a {
			written++
		}
	}
}
