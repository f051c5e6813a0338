package tablestore

import (
	"context"
	"fmt"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/wait"
)

// codeConditionFailed is the service's answer to a write whose condition does not hold.
const codeConditionFailed = "OTSConditionCheckFail"

// CheckAndMutate sends one UpdateRow or DeleteRow with a column condition, which the service tests
// and applies atomically. A whole-family delete is expanded first, as Apply does (a read).
func (b *Backend) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	s, err := b.schema(ctx, table)
	if err != nil {
		return false, err
	}
	if err := driverkit.CheckFamily(s.families, cond.Family); err != nil {
		return false, fmt.Errorf("tablestore: check and mutate %q: condition: %w", table, err)
	}
	condCol, err := ColumnName(cond.Family, cond.Qualifier)
	if err != nil {
		return false, fmt.Errorf("tablestore: check and mutate %q: condition: %w", table, err)
	}
	rowErrs := make([]error, 1)
	muts, done, err := b.expandFamilyDeletes(ctx, table, s, []backends.Mutation{m}, rowErrs)
	if err != nil {
		return false, err
	}
	if done[0] && rowErrs[0] != nil {
		return false, rowErrs[0]
	}
	if done[0] {
		// The family holds nothing to delete, so nothing would change: only the condition's answer is
		// left to give.
		return b.conditionHolds(ctx, table, cond, m.Key)
	}
	p, err := b.prepare(s, table, 0, muts[0])
	if err != nil {
		return false, err
	}
	colCond := columnCondition(condCol, cond.Value)
	var call func() error
	switch ch := p.change.(type) {
	case *ots.UpdateRowChange:
		ch.SetColumnCondition(colCond)
		call = func() error {
			_, err := sdkCall(ctx, b, func() (*ots.UpdateRowResponse, error) {
				return b.client.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: ch})
			})
			return err
		}
	case *ots.DeleteRowChange:
		ch.SetColumnCondition(colCond)
		call = func() error {
			_, err := sdkCall(ctx, b, func() (*ots.DeleteRowResponse, error) {
				return b.client.DeleteRow(&ots.DeleteRowRequest{DeleteRowChange: ch})
			})
			return err
		}
	default:
		return false, fmt.Errorf("tablestore: check and mutate %q: unexpected row change %T", table, p.change)
	}
	switch err := call(); {
	case err == nil:
		return true, nil
	case otsCode(err) == codeConditionFailed:
		return false, nil
	default:
		b.forgetOnNotFound(table, err)
		return false, mapError(fmt.Sprintf("check and mutate %q", table), err, false)
	}
}

// conditionHolds reads the condition's column: for a conditional delete that has nothing to delete.
func (b *Backend) conditionHolds(ctx context.Context, table string, cond backends.Condition, key []byte) (bool, error) {
	rows, err := b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{Columns: []backends.Column{{Family: cond.Family, Qualifier: cond.Qualifier}}})
	if err != nil {
		return false, err
	}
	return driverkit.Holds(cond, rows[0].Cells), nil
}

// columnCondition is "the newest version of col equals value"; an empty value also passes when the
// column is missing (the contract's rule, HBase's).
func columnCondition(col string, value []byte) *ots.SingleColumnCondition {
	c := ots.NewSingleColumnCondition(col, ots.CT_EQUAL, append([]byte{}, value...))
	c.FilterIfMissing = len(value) > 0
	c.LatestVersionOnly = true
	return c
}

// Increment reads the counters and writes their sums with a condition that each still holds what
// was read, again until no other writer came between: the service has no increment for the binary
// values brine writes (its own increments take INTEGER columns only).
func (b *Backend) Increment(ctx context.Context, table string, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	s, err := b.schema(ctx, table)
	if err != nil {
		return nil, err
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("tablestore: increment %q: %w: empty key", table, backends.ErrInvalidKey)
	}
	if err := driverkit.CheckIncrements(incs); err != nil {
		return nil, fmt.Errorf("tablestore: increment %q: %w", table, err)
	}
	cols := make([]backends.Column, len(incs))
	names := make([]string, len(incs))
	for i, inc := range incs {
		if err := driverkit.CheckFamily(s.families, inc.Family); err != nil {
			return nil, fmt.Errorf("tablestore: increment %q: %w", table, err)
		}
		if names[i], err = ColumnName(inc.Family, inc.Qualifier); err != nil {
			return nil, fmt.Errorf("tablestore: increment %q: %w", table, err)
		}
		cols[i] = backends.Column{Family: inc.Family, Qualifier: inc.Qualifier}
	}
	for attempt := 1; ; attempt++ {
		rows, err := b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{Columns: cols})
		if err != nil {
			return nil, err
		}
		old := rows[0].Cells
		sums, err := driverkit.AddCounters(old, incs, time.Now().UnixMilli())
		if err != nil {
			return nil, fmt.Errorf("tablestore: increment %q: %w", table, err)
		}
		p, err := b.prepare(s, table, 0, backends.Mutation{Key: key, Cells: sums})
		if err != nil {
			return nil, err
		}
		ch, ok := p.change.(*ots.UpdateRowChange)
		if !ok {
			return nil, fmt.Errorf("tablestore: increment %q: unexpected row change %T", table, p.change)
		}
		all := ots.NewCompositeColumnCondition(ots.LO_AND)
		for i, name := range names {
			var was []byte
			if j := cellIndex(old, cols[i]); j >= 0 {
				was = old[j].Value
			}
			all.AddFilter(columnCondition(name, was))
		}
		if len(names) == 1 {
			ch.SetColumnCondition(all.Filters[0])
		} else {
			ch.SetColumnCondition(all)
		}
		_, err = sdkCall(ctx, b, func() (*ots.UpdateRowResponse, error) {
			return b.client.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: ch})
		})
		switch {
		case err == nil:
			return sums, nil
		case otsCode(err) != codeConditionFailed:
			b.forgetOnNotFound(table, err)
			return nil, mapError(fmt.Sprintf("increment %q", table), err, false)
		}
		// Another writer changed a counter in between: read again, after a pause that grows.
		if err := wait.Sleep(ctx, b.backoff(min(attempt, 6))); err != nil {
			return nil, err
		}
	}
}

// cellIndex is the index of col's newest version in cells, or -1.
func cellIndex(cells []backends.Cell, col backends.Column) int {
	for i, c := range cells {
		if c.Family == col.Family && c.Qualifier == col.Qualifier {
			return i
		}
	}
	return -1
}
