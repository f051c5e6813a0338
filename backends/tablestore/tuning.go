package tablestore

import (
	"context"
	"fmt"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
)

var _ backends.Tuner = (*Backend)(nil)

// Tune changes a table's reserved throughput and TTL with UpdateTable, as the guide's hot and cold
// tables need. The settings left alone are sent as DescribeTable reports them, since UpdateTable
// takes the options and the throughput whole.
func (b *Backend) Tune(ctx context.Context, table string, t backends.Tuning) error {
	if err := checkTableName(table); err != nil {
		return err
	}
	if table == b.opts.MetaTable {
		return fmt.Errorf("tablestore: table %q: %w: reserved for brine's table metadata", table, backends.ErrInvalidArgument)
	}
	if t.TTL > 0 && t.TTL%time.Second != 0 {
		return fmt.Errorf("tablestore: tune %q: %w: TTL %v is not whole seconds", table, backends.ErrInvalidArgument, t.TTL)
	}
	if t.ReadCU < 0 && t.WriteCU < 0 && t.TTL < 0 {
		return nil
	}
	d, err := sdkCall(ctx, b, func() (*ots.DescribeTableResponse, error) {
		return b.client.DescribeTable(&ots.DescribeTableRequest{TableName: table})
	})
	if err != nil {
		return mapError(fmt.Sprintf("describe table %q", table), err, true)
	}
	req := &ots.UpdateTableRequest{TableName: table}
	if t.ReadCU >= 0 || t.WriteCU >= 0 {
		rt := *d.ReservedThroughput
		if t.ReadCU >= 0 {
			rt.Readcap = t.ReadCU
		}
		if t.WriteCU >= 0 {
			rt.Writecap = t.WriteCU
		}
		req.ReservedThroughput = &rt
	}
	if t.TTL >= 0 {
		opt := *d.TableOption
		opt.TimeToAlive = -1 // Tablestore's "forever"
		if t.TTL > 0 {
			opt.TimeToAlive = int(t.TTL / time.Second)
		}
		req.TableOption = &opt
	}
	if _, err := sdkCall(ctx, b, func() (*ots.UpdateTableResponse, error) { return b.client.UpdateTable(req) }); err != nil {
		return mapError(fmt.Sprintf("update table %q", table), err, true)
	}
	return nil
}
