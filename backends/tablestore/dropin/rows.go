package dropin

import (
	"context"
	"fmt"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
)

// badRequest is the error of a request refused before sending.
func badRequest(call, table string, err error) error {
	if table == "" {
		return fmt.Errorf("dropin: %s: %w", call, err)
	}
	return fmt.Errorf("dropin: %s %q: %w", call, table, err)
}

// checkFilter refuses filters and column conditions the server would apply to salted values, and
// those it cannot look into.
func (t *table) checkFilter(what string, f ots.ColumnFilter) error {
	switch f := f.(type) {
	case nil:
		return nil
	case *ots.SingleColumnCondition:
		if f == nil || f.ColumnName == nil {
			return fmt.Errorf("%w: %s: a single-column condition without a column", backends.ErrInvalidArgument, what)
		}
		if t.isKeyColumn(*f.ColumnName) {
			return fmt.Errorf("%w: %s on primary-key column %s, which holds the salted key", ErrUnsupported, what, *f.ColumnName)
		}
		return nil
	case *ots.CompositeColumnValueFilter:
		if f == nil {
			return fmt.Errorf("%w: %s: nil composite filter", backends.ErrInvalidArgument, what)
		}
		for _, sub := range f.Filters {
			if err := t.checkFilter(what, sub); err != nil {
				return err
			}
		}
		return nil
	case *ots.PaginationFilter:
		if f == nil {
			return fmt.Errorf("%w: %s: nil pagination filter", backends.ErrInvalidArgument, what)
		}
		return nil // pages over a row's columns, not its key
	}
	return fmt.Errorf("%w: %s of type %T, which the drop-in cannot inspect", ErrUnsupported, what, f)
}

func (t *table) checkCondition(cond *ots.RowCondition) error {
	if cond == nil {
		return fmt.Errorf("%w: no condition (set one, e.g. SetCondition(RowExistenceExpectation_IGNORE))", backends.ErrInvalidArgument)
	}
	return t.checkFilter("column condition", cond.ColumnCondition)
}

// saltChange is what PutRow, UpdateRow and DeleteRow check and rewrite before sending: the table's
// salter is looked up, *pk becomes the salted key, and the row condition is checked.
func (c *Client) saltChange(op, tableName string, pk **ots.PrimaryKey, cond *ots.RowCondition) (*table, error) {
	t, err := c.table(context.Background(), op, tableName)
	if err != nil {
		return nil, err
	}
	if err := t.refuseWrite(op); err != nil {
		return nil, err
	}
	phys, err := t.physicalPK(*pk)
	if err != nil {
		return nil, badRequest(op, t.name, err)
	}
	if err := t.checkCondition(cond); err != nil {
		return nil, badRequest(op, t.name, err)
	}
	*pk = phys
	return t, nil
}

// send makes one single-table SDK call: a table the service says is gone is forgotten, and the
// error names the operation.
func send[T any](c *Client, op, table string, fn func() (T, error)) (T, error) {
	resp, err := call(fn)
	if err != nil {
		c.forgetOnNotFound(table, err)
		var none T
		return none, sdkError(op, err)
	}
	return resp, nil
}

// PutRow is the SDK's PutRow on the salted key; with ReturnType RT_PK the response carries the logical
// primary key.
func (c *Client) PutRow(req *ots.PutRowRequest) (*ots.PutRowResponse, error) {
	const op = "PutRow"
	if req == nil || req.PutRowChange == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no PutRowChange", backends.ErrInvalidArgument))
	}
	ch := *req.PutRowChange
	t, err := c.saltChange(op, ch.TableName, &ch.PrimaryKey, ch.Condition)
	if err != nil {
		return nil, err
	}
	resp, err := send(c, op, t.name, func() (*ots.PutRowResponse, error) {
		return c.sdk.PutRow(&ots.PutRowRequest{PutRowChange: &ch})
	})
	if err != nil {
		return nil, err
	}
	if len(resp.PrimaryKey.PrimaryKeys) > 0 {
		pk, _, err := t.logicalPK(&resp.PrimaryKey)
		if err != nil {
			return nil, fmt.Errorf("dropin: %s %q: returned key: %w", op, t.name, err)
		}
		resp.PrimaryKey = *pk
	}
	return resp, nil
}

// UpdateRow is the SDK's UpdateRow on the salted key.
func (c *Client) UpdateRow(req *ots.UpdateRowRequest) (*ots.UpdateRowResponse, error) {
	const op = "UpdateRow"
	if req == nil || req.UpdateRowChange == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no UpdateRowChange", backends.ErrInvalidArgument))
	}
	ch := *req.UpdateRowChange
	t, err := c.saltChange(op, ch.TableName, &ch.PrimaryKey, ch.Condition)
	if err != nil {
		return nil, err
	}
	return send(c, op, t.name, func() (*ots.UpdateRowResponse, error) {
		return c.sdk.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: &ch})
	})
}

// DeleteRow is the SDK's DeleteRow on the salted key.
func (c *Client) DeleteRow(req *ots.DeleteRowRequest) (*ots.DeleteRowResponse, error) {
	const op = "DeleteRow"
	if req == nil || req.DeleteRowChange == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no DeleteRowChange", backends.ErrInvalidArgument))
	}
	ch := *req.DeleteRowChange
	t, err := c.saltChange(op, ch.TableName, &ch.PrimaryKey, ch.Condition)
	if err != nil {
		return nil, err
	}
	return send(c, op, t.name, func() (*ots.DeleteRowResponse, error) {
		return c.sdk.DeleteRow(&ots.DeleteRowRequest{DeleteRowChange: &ch})
	})
}

// GetRow is the SDK's GetRow on the salted key; the response carries the logical primary key.
func (c *Client) GetRow(req *ots.GetRowRequest) (*ots.GetRowResponse, error) {
	const op = "GetRow"
	if req == nil || req.SingleRowQueryCriteria == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no SingleRowQueryCriteria", backends.ErrInvalidArgument))
	}
	q := *req.SingleRowQueryCriteria
	t, err := c.table(context.Background(), op, q.TableName)
	if err != nil {
		return nil, err
	}
	if q.PrimaryKey, err = t.physicalPK(q.PrimaryKey); err != nil {
		return nil, badRequest(op, t.name, err)
	}
	if err := t.checkFilter("filter", q.Filter); err != nil {
		return nil, badRequest(op, t.name, err)
	}
	resp, err := send(c, op, t.name, func() (*ots.GetRowResponse, error) {
		return c.sdk.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: &q})
	})
	if err != nil {
		return nil, err
	}
	if t.hides(q.ColumnsToGet) {
		var gone bool
		if resp.Columns, gone = t.visible(resp.Columns); gone {
			resp.PrimaryKey, resp.Columns = ots.PrimaryKey{}, nil // as the SDK answers for a missing row
		}
	}
	if len(resp.PrimaryKey.PrimaryKeys) > 0 {
		pk, _, err := t.logicalPK(&resp.PrimaryKey)
		if err != nil {
			return nil, fmt.Errorf("dropin: %s %q: returned key: %w", op, t.name, err)
		}
		resp.PrimaryKey = *pk
	}
	return resp, nil
}

// BatchGetRow is the SDK's BatchGetRow on salted keys; every row result carries its logical primary
// key, in the order and with the indexes of the request.
func (c *Client) BatchGetRow(req *ots.BatchGetRowRequest) (*ots.BatchGetRowResponse, error) {
	const op = "BatchGetRow"
	if req == nil || len(req.MultiRowQueryCriteria) == 0 {
		return nil, badRequest(op, "", fmt.Errorf("%w: no MultiRowQueryCriteria", backends.ErrInvalidArgument))
	}
	// Limits first: a request the service would refuse does not cost a table lookup either.
	rows := 0
	for _, crit := range req.MultiRowQueryCriteria {
		if crit == nil {
			return nil, badRequest(op, "", fmt.Errorf("%w: nil MultiRowQueryCriteria", backends.ErrInvalidArgument))
		}
		rows += len(crit.PrimaryKey)
	}
	if rows > maxBatchGet {
		return nil, badRequest(op, "", fmt.Errorf("%w: %d rows, Tablestore takes at most %d per BatchGetRow", backends.ErrInvalidArgument, rows, maxBatchGet))
	}
	out := &ots.BatchGetRowRequest{}
	tables := map[string]*table{}
	hide := map[string]bool{}
	for _, crit := range req.MultiRowQueryCriteria {
		q := *crit
		t, err := c.table(context.Background(), op, q.TableName)
		if err != nil {
			return nil, err
		}
		tables[t.name] = t
		hide[t.name] = t.hides(q.ColumnsToGet)
		if err := t.checkFilter("filter", q.Filter); err != nil {
			return nil, badRequest(op, t.name, err)
		}
		q.PrimaryKey = make([]*ots.PrimaryKey, len(crit.PrimaryKey))
		for i, pk := range crit.PrimaryKey {
			if q.PrimaryKey[i], err = t.physicalPK(pk); err != nil {
				return nil, badRequest(op, t.name, fmt.Errorf("row %d: %w", i, err))
			}
		}
		out.MultiRowQueryCriteria = append(out.MultiRowQueryCriteria, &q)
	}
	resp, err := call(func() (*ots.BatchGetRowResponse, error) { return c.sdk.BatchGetRow(out) })
	if err != nil {
		for name := range tables {
			c.forgetOnNotFound(name, err)
		}
		return nil, sdkError(op, err)
	}
	for name, results := range resp.TableToRowsResult {
		t := tables[name]
		if t == nil {
			return nil, fmt.Errorf("dropin: %s: the response names table %q, which was not asked for", op, name)
		}
		for i := range results {
			if hide[name] {
				var gone bool
				if results[i].Columns, gone = t.visible(results[i].Columns); gone {
					results[i].PrimaryKey, results[i].Columns = ots.PrimaryKey{}, nil // as for a missing row
				}
			}
			if len(results[i].PrimaryKey.PrimaryKeys) == 0 {
				continue // no such row, or a failed one
			}
			pk, _, err := t.logicalPK(&results[i].PrimaryKey)
			if err != nil {
				return nil, fmt.Errorf("dropin: %s %q: row %d: returned key: %w", op, name, i, err)
			}
			results[i].PrimaryKey = *pk
		}
	}
	return resp, nil
}

// BatchWriteRow is the SDK's BatchWriteRow on salted keys. Its changes must be the SDK's PutRowChange,
// UpdateRowChange or DeleteRowChange; results are the SDK's, in the request's order per table.
func (c *Client) BatchWriteRow(req *ots.BatchWriteRowRequest) (*ots.BatchWriteRowResponse, error) {
	const op = "BatchWriteRow"
	if req == nil || len(req.RowChangesGroupByTable) == 0 {
		return nil, badRequest(op, "", fmt.Errorf("%w: no row changes", backends.ErrInvalidArgument))
	}
	rows := 0
	for _, changes := range req.RowChangesGroupByTable {
		rows += len(changes)
	}
	if rows > maxBatchWrite {
		return nil, badRequest(op, "", fmt.Errorf("%w: %d rows, Tablestore takes at most %d per BatchWriteRow", backends.ErrInvalidArgument, rows, maxBatchWrite))
	}
	out := &ots.BatchWriteRowRequest{RowChangesGroupByTable: make(map[string][]ots.RowChange, len(req.RowChangesGroupByTable))}
	for name, changes := range req.RowChangesGroupByTable {
		t, err := c.table(context.Background(), op, name)
		if err != nil {
			return nil, err
		}
		if err := t.refuseWrite(op); err != nil {
			return nil, err // the whole batch, whatever its other tables
		}
		salted := make([]ots.RowChange, len(changes))
		for i, ch := range changes {
			if salted[i], err = t.saltChange(ch); err != nil {
				return nil, badRequest(op, name, fmt.Errorf("row %d: %w", i, err))
			}
		}
		out.RowChangesGroupByTable[name] = salted
	}
	resp, err := call(func() (*ots.BatchWriteRowResponse, error) { return c.sdk.BatchWriteRow(out) })
	if err != nil {
		for name := range out.RowChangesGroupByTable {
			c.forgetOnNotFound(name, err)
		}
		return nil, sdkError(op, err)
	}
	return resp, nil
}

// saltChange copies one row change of a batch with its key salted.
func (t *table) saltChange(ch ots.RowChange) (ots.RowChange, error) {
	var err error
	check := func(name string, cond *ots.RowCondition) error {
		if name != "" && name != t.name {
			return fmt.Errorf("%w: the change names table %q, its batch is for %q", backends.ErrInvalidArgument, name, t.name)
		}
		return t.checkCondition(cond)
	}
	switch ch := ch.(type) {
	case *ots.PutRowChange:
		if ch == nil {
			break
		}
		cp := *ch
		if cp.PrimaryKey, err = t.physicalPK(ch.PrimaryKey); err != nil {
			return nil, err
		}
		return &cp, check(ch.TableName, ch.Condition)
	case *ots.UpdateRowChange:
		if ch == nil {
			break
		}
		cp := *ch
		if cp.PrimaryKey, err = t.physicalPK(ch.PrimaryKey); err != nil {
			return nil, err
		}
		return &cp, check(ch.TableName, ch.Condition)
	case *ots.DeleteRowChange:
		if ch == nil {
			break
		}
		cp := *ch
		if cp.PrimaryKey, err = t.physicalPK(ch.PrimaryKey); err != nil {
			return nil, err
		}
		return &cp, check(ch.TableName, ch.Condition)
	}
	return nil, fmt.Errorf("%w: row change of type %T (want the SDK's PutRowChange, UpdateRowChange or DeleteRowChange)", ErrUnsupported, ch)
}
