package tablestore

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// CheckAndMutateBatch sends the rows as BatchWriteRow requests (at most 200 rows and 4 MB each,
// Options.Concurrency at a time), each row change with its column condition, which the service tests
// and applies per row; a row whose condition fails comes back as OTSConditionCheckFail: not applied.
// Rows failing with a code that leaves them unapplied (busy, throttled) are resent as Apply resends
// them; a timeout is not, since a conditional write that was applied would then answer "not applied".
// A whole-family delete needs a read to expand it (see CheckAndMutate): that row is sent alone.
func (b *Backend) CheckAndMutateBatch(ctx context.Context, table string, ms []backends.CondMutation) ([]bool, []error, error) {
	fail := func(err error) ([]bool, []error, error) {
		return nil, nil, fmt.Errorf("tablestore: check and mutate batch %q: %w", table, err)
	}
	if err := driverkit.CheckBatch(ms, maxPKValueLen); err != nil {
		return fail(err)
	}
	s, err := b.schema(ctx, table)
	if err != nil {
		return nil, nil, err
	}
	applied := make([]bool, len(ms))
	rowErrs := make([]error, len(ms))
	var ps []*prepared
	var alone []int
	for i, cm := range ms {
		if err := rowFamilies(s, cm); err != nil {
			// A family the table lacks fails its row alone, as on HBase, where only the server knows.
			rowErrs[i] = fmt.Errorf("tablestore: check and mutate batch %q: row %d: %w", table, i, err)
			continue
		}
		condCol, err := ColumnName(cm.Cond.Family, cm.Cond.Qualifier)
		if err != nil {
			return fail(fmt.Errorf("row %d: condition: %w", i, err))
		}
		if cm.Mut.Delete && slices.ContainsFunc(cm.Mut.Cells, func(c backends.Cell) bool { return c.Qualifier == "" }) {
			alone = append(alone, i)
			continue
		}
		p, err := b.prepare(s, table, i, cm.Mut)
		if err != nil {
			return fail(fmt.Errorf("row %d: %w", i, err))
		}
		p.idempotent = false
		switch ch := p.change.(type) {
		case *ots.UpdateRowChange:
			ch.SetColumnCondition(columnCondition(condCol, cm.Cond.Value))
		case *ots.DeleteRowChange:
			ch.SetColumnCondition(columnCondition(condCol, cm.Cond.Value))
		default:
			return fail(fmt.Errorf("row %d: unexpected row change %T", i, p.change))
		}
		ps = append(ps, p)
	}
	batches, _ := splitBatches(ps)
	var succeeded atomic.Int64
	sent := make([]bool, len(batches)) // writeBatch leaves nil for a row applied, and for one never sent
	err = b.parallel(ctx, len(batches), func(ctx context.Context, n int) error {
		sent[n] = true
		return b.writeBatch(ctx, table, batches[n], rowErrs, &succeeded)
	})
	if err != nil {
		b.forgetOnNotFound(table, err)
		for n, batch := range batches {
			for _, p := range batch {
				if !sent[n] {
					rowErrs[p.idx] = fmt.Errorf("tablestore: check and mutate batch %q: not sent: %w", table, err)
				}
			}
		}
	}
	for _, p := range ps {
		switch e := rowErrs[p.idx]; {
		case e == nil:
			applied[p.idx] = true
		case otsCode(e) == codeConditionFailed:
			rowErrs[p.idx] = nil
		}
	}
	for _, i := range alone {
		applied[i], rowErrs[i] = b.CheckAndMutate(ctx, table, ms[i].Cond, ms[i].Mut)
	}
	return driverkit.BatchOutcome(ctx, table, applied, rowErrs)
}

// rowFamilies checks the families of a row's condition and cells against the table's.
func rowFamilies(s *keySchema, cm backends.CondMutation) error {
	if err := driverkit.CheckFamily(s.families, cm.Cond.Family); err != nil {
		return fmt.Errorf("condition: %w", err)
	}
	for _, c := range cm.Mut.Cells {
		if err := driverkit.CheckFamily(s.families, c.Family); err != nil {
			return err
		}
	}
	return nil
}
