package tablestore

import (
	"context"
	"encoding/json"
	"fmt"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/wait"
)

// brine's metadata table: one row per table, holding its TableOptions.Meta, SplitKeys and Families.

// metaRow is what the meta table holds for one table.
type metaRow struct {
	Meta      map[string]string
	SplitKeys [][]byte
	Families  []string // nil: any family
}

// familySet is the set of fams; nil (any family) when there are none.
func familySet(fams []string) map[string]bool {
	if len(fams) == 0 {
		return nil
	}
	set := make(map[string]bool, len(fams))
	for _, f := range fams {
		set[f] = true
	}
	return set
}

func encodeMeta(opts backends.TableOptions) (map[string][]byte, error) {
	meta := opts.Meta
	if meta == nil {
		meta = map[string]string{}
	}
	mj, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	splits := opts.SplitKeys
	if splits == nil {
		splits = [][]byte{}
	}
	sj, err := json.Marshal(splits)
	if err != nil {
		return nil, err
	}
	row := map[string][]byte{metaMapColumn: mj, metaSplitsColumn: sj}
	if len(opts.Families) > 0 {
		if row[metaFamilies], err = json.Marshal(opts.Families); err != nil {
			return nil, err
		}
	}
	for _, v := range row {
		if len(v) > maxValueLen {
			return nil, fmt.Errorf("%w: table meta, split keys or families over %d bytes", backends.ErrInvalidArgument, maxValueLen)
		}
	}
	return row, nil
}

func (b *Backend) metaKey(table string) *ots.PrimaryKey {
	pk := new(ots.PrimaryKey)
	pk.AddPrimaryKeyColumn(metaKeyColumn, table)
	return pk
}

// ensureMetaTable creates the meta table the first time a table is created.
func (b *Backend) ensureMetaTable(ctx context.Context) error {
	b.mu.Lock()
	ready := b.metaReady
	b.mu.Unlock()
	if ready {
		return nil
	}
	req := &ots.CreateTableRequest{
		TableMeta:          &ots.TableMeta{TableName: b.opts.MetaTable},
		TableOption:        &ots.TableOption{TimeToAlive: -1, MaxVersion: 1},
		ReservedThroughput: &ots.ReservedThroughput{},
	}
	req.TableMeta.AddPrimaryKeyColumn(metaKeyColumn, ots.PrimaryKeyType_STRING)
	_, err := sdkCall(ctx, b, func() (*ots.CreateTableResponse, error) { return b.client.CreateTable(req) })
	switch {
	case err == nil:
		b.log.InfoContext(ctx, "tablestore: meta table created", "table", b.opts.MetaTable)
	case otsCode(err) == codeAlreadyExist:
	default:
		return mapError(fmt.Sprintf("create meta table %q", b.opts.MetaTable), err, false)
	}
	b.mu.Lock()
	b.metaReady = true
	b.mu.Unlock()
	return nil
}

// putMeta writes a meta row. A table just created may refuse writes for a moment (not ready,
// partition unavailable, or not yet visible), so it retries with backoff within ctx; the write is a
// whole-row put, idempotent.
func (b *Backend) putMeta(ctx context.Context, table string, cols map[string][]byte) error {
	change := &ots.PutRowChange{TableName: b.opts.MetaTable, PrimaryKey: b.metaKey(table)}
	change.SetCondition(ots.RowExistenceExpectation_IGNORE)
	for _, name := range []string{metaMapColumn, metaSplitsColumn, metaFamilies} {
		if v, ok := cols[name]; ok {
			change.AddColumn(name, v)
		}
	}
	const attempts = 8
	for n := 1; ; n++ {
		_, err := sdkCall(ctx, b, func() (*ots.PutRowResponse, error) {
			return b.client.PutRow(&ots.PutRowRequest{PutRowChange: change})
		})
		if err == nil {
			return nil
		}
		code := otsCode(err)
		if n >= attempts || !(retryableCode(code, true) || code == codeNotExist) {
			return mapError(fmt.Sprintf("put meta of %q", table), err, true)
		}
		b.log.DebugContext(ctx, "tablestore: meta write retried", "table", table, "attempt", n, "code", code)
		if err := wait.Sleep(ctx, b.backoff(n+2)); err != nil {
			return err
		}
	}
}

func (b *Backend) getMeta(ctx context.Context, table string) (metaRow, bool, error) {
	crit := &ots.SingleRowQueryCriteria{TableName: b.opts.MetaTable, PrimaryKey: b.metaKey(table), MaxVersion: 1}
	resp, err := sdkCall(ctx, b, func() (*ots.GetRowResponse, error) {
		return b.client.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: crit})
	})
	if otsCode(err) == codeNotExist {
		return metaRow{}, false, nil // no meta table: no brine table was ever created here
	}
	if err != nil {
		return metaRow{}, false, mapError(fmt.Sprintf("get meta of %q", table), err, true)
	}
	if len(resp.Columns) == 0 {
		return metaRow{}, false, nil
	}
	row := metaRow{Meta: map[string]string{}}
	for _, c := range resp.Columns {
		raw, ok := c.Value.([]byte)
		if !ok {
			continue
		}
		switch c.ColumnName {
		case metaMapColumn:
			err = json.Unmarshal(raw, &row.Meta)
		case metaSplitsColumn:
			err = json.Unmarshal(raw, &row.SplitKeys)
		case metaFamilies:
			err = json.Unmarshal(raw, &row.Families)
		}
		if err != nil {
			return metaRow{}, false, fmt.Errorf("tablestore: meta of %q: %w", table, err)
		}
	}
	return row, true, nil
}

func (b *Backend) deleteMeta(ctx context.Context, table string) error {
	change := &ots.DeleteRowChange{TableName: b.opts.MetaTable, PrimaryKey: b.metaKey(table)}
	change.SetCondition(ots.RowExistenceExpectation_IGNORE)
	_, err := sdkCall(ctx, b, func() (*ots.DeleteRowResponse, error) {
		return b.client.DeleteRow(&ots.DeleteRowRequest{DeleteRowChange: change})
	})
	if otsCode(err) == codeNotExist {
		return nil
	}
	return mapError(fmt.Sprintf("delete meta of %q", table), err, false)
}
