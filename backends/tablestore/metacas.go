package tablestore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
)

// RewriteTableMeta replaces the Meta in the table's meta row if it is still old. The row is read,
// compared with old, and replaced by one conditional write: on the exact bytes read when the row is
// there, on the row's absence when it is not (a table brine did not create), so the service's own
// condition check makes the comparison and the write one step.
func (b *Backend) RewriteTableMeta(ctx context.Context, table string, old, newMeta map[string]string) error {
	if err := checkTableName(table); err != nil {
		return err
	}
	if _, err := b.describe(ctx, table); err != nil {
		return err
	}
	if err := b.ensureMetaTable(ctx); err != nil {
		return err
	}
	if newMeta == nil {
		newMeta = map[string]string{}
	}
	enc, err := json.Marshal(newMeta)
	if err != nil {
		return fmt.Errorf("tablestore: rewrite meta %q: %w", table, err)
	}
	if len(enc) > maxValueLen {
		return fmt.Errorf("tablestore: rewrite meta %q: %w: table meta over %d bytes", table, backends.ErrInvalidArgument, maxValueLen)
	}
	raw, found, err := b.rawMeta(ctx, table)
	if err != nil {
		return err
	}
	stored := map[string]string{}
	if found {
		if err := json.Unmarshal(raw, &stored); err != nil {
			return fmt.Errorf("tablestore: meta of %q: %w", table, err)
		}
	}
	if !maps.Equal(stored, old) {
		return fmt.Errorf("tablestore: rewrite meta %q: %w", table, backends.ErrMetaChanged)
	}
	if found {
		ch := &ots.UpdateRowChange{TableName: b.opts.MetaTable, PrimaryKey: b.metaKey(table)}
		ch.SetCondition(ots.RowExistenceExpectation_EXPECT_EXIST)
		ch.SetColumnCondition(columnCondition(metaMapColumn, raw))
		ch.PutColumn(metaMapColumn, enc)
		_, err = sdkCall(ctx, b, func() (*ots.UpdateRowResponse, error) {
			return b.client.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: ch})
		})
	} else {
		ch := &ots.PutRowChange{TableName: b.opts.MetaTable, PrimaryKey: b.metaKey(table)}
		ch.SetCondition(ots.RowExistenceExpectation_EXPECT_NOT_EXIST)
		ch.AddColumn(metaMapColumn, enc)
		_, err = sdkCall(ctx, b, func() (*ots.PutRowResponse, error) {
			return b.client.PutRow(&ots.PutRowRequest{PutRowChange: ch})
		})
	}
	if otsCode(err) == codeConditionFailed {
		return fmt.Errorf("tablestore: rewrite meta %q: %w", table, backends.ErrMetaChanged)
	}
	if err != nil {
		return mapError(fmt.Sprintf("rewrite meta of %q", table), err, false)
	}
	return nil
}

// rawMeta reads the stored Meta's bytes, as the condition of a rewrite must name them.
func (b *Backend) rawMeta(ctx context.Context, table string) ([]byte, bool, error) {
	crit := &ots.SingleRowQueryCriteria{TableName: b.opts.MetaTable, PrimaryKey: b.metaKey(table), MaxVersion: 1,
		ColumnsToGet: []string{metaMapColumn}}
	resp, err := sdkCall(ctx, b, func() (*ots.GetRowResponse, error) {
		return b.client.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: crit})
	})
	if err != nil {
		return nil, false, mapError(fmt.Sprintf("get meta of %q", table), err, true)
	}
	for _, c := range resp.Columns {
		if raw, ok := c.Value.([]byte); ok && c.ColumnName == metaMapColumn {
			return raw, true, nil
		}
	}
	return nil, false, nil
}
