package dropin

import (
	"bytes"
	"context"
	"fmt"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/keys"
)

// The SDK calls below hold no row key in their requests, or one the drop-in rewrites as the row
// operations do; responses with rows return logical primary keys where the table is known.

// ListStream is the SDK's ListStream.
func (c *Client) ListStream(req *ots.ListStreamRequest) (*ots.ListStreamResponse, error) {
	return passThrough(c, "ListStream", func() (*ots.ListStreamResponse, error) { return c.sdk.ListStream(req) })
}

// DescribeStream is the SDK's DescribeStream.
func (c *Client) DescribeStream(req *ots.DescribeStreamRequest) (*ots.DescribeStreamResponse, error) {
	return passThrough(c, "DescribeStream", func() (*ots.DescribeStreamResponse, error) { return c.sdk.DescribeStream(req) })
}

// GetShardIterator is the SDK's GetShardIterator.
func (c *Client) GetShardIterator(req *ots.GetShardIteratorRequest) (*ots.GetShardIteratorResponse, error) {
	return passThrough(c, "GetShardIterator", func() (*ots.GetShardIteratorResponse, error) { return c.sdk.GetShardIterator(req) })
}

// GetStreamRecord is the SDK's GetStreamRecord. A shard iterator does not name its table, so records
// carry stored (salted) primary keys: LogicalPrimaryKey turns one into the caller's.
func (c *Client) GetStreamRecord(req *ots.GetStreamRecordRequest) (*ots.GetStreamRecordResponse, error) {
	return passThrough(c, "GetStreamRecord", func() (*ots.GetStreamRecordResponse, error) { return c.sdk.GetStreamRecord(req) })
}

// LogicalPrimaryKey returns the caller's primary key of a key stored in table: for stream records,
// secondary-index rows and split points, which the SDK returns as stored.
func (c *Client) LogicalPrimaryKey(table string, pk *ots.PrimaryKey) (*ots.PrimaryKey, error) {
	const op = "LogicalPrimaryKey"
	t, err := c.table(context.Background(), op, table)
	if err != nil {
		return nil, err
	}
	out, _, err := t.logicalPK(pk)
	if err != nil {
		return nil, badRequest(op, table, err)
	}
	return out, nil
}

// StartLocalTransaction is the SDK's StartLocalTransaction on the salted partition key: the first
// column's value as every row of the transaction stores it. That is one value only when the salter
// puts all rows with the caller's value in one bucket (a one-column table, or a lead that covers the
// first column alone, such as "md5hex:4:sep=0x00" on a variable first column); otherwise it fails with
// ErrUnsupported.
func (c *Client) StartLocalTransaction(req *ots.StartLocalTransactionRequest) (*ots.StartLocalTransactionResponse, error) {
	const op = "StartLocalTransaction"
	if req == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no request", backends.ErrInvalidArgument))
	}
	t, err := c.table(context.Background(), op, req.TableName)
	if err != nil {
		return nil, err
	}
	pk, err := t.partitionKey(req.PrimaryKey)
	if err != nil {
		return nil, badRequest(op, t.name, err)
	}
	out := *req
	out.PrimaryKey = pk
	return send(c, op, t.name, func() (*ots.StartLocalTransactionResponse, error) { return c.sdk.StartLocalTransaction(&out) })
}

// partitionKey salts the partition key (the first column alone) of a local transaction.
func (t *table) partitionKey(pk *ots.PrimaryKey) (*ots.PrimaryKey, error) {
	if len(t.cols) == 1 {
		return t.physicalPK(pk)
	}
	if pk == nil || len(pk.PrimaryKeys) != 1 {
		return nil, fmt.Errorf("%w: a transaction's primary key is the first column %s alone", backends.ErrInvalidKey, t.cols[0].Name)
	}
	v, _, err := t.columnValue(0, pk.PrimaryKeys[0], false)
	if err != nil {
		return nil, err
	}
	first := bytesOf(v)
	lo := first
	if t.layout.Variable() {
		lo = tablestore.AppendKeyHead(nil, first)
	}
	hi := keys.PrefixEnd(lo)
	ranges, err := t.salter.BucketRanges(lo, hi)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", backends.ErrInvalidKey, err)
	}
	if len(ranges) != 1 || !bytes.HasSuffix(ranges[0].Start, lo) {
		return nil, fmt.Errorf("%w: under salter %s the rows with %s = %q lie in several partitions",
			ErrUnsupported, t.salter.Spec(), t.cols[0].Name, first)
	}
	stored := append(bytes.Clone(ranges[0].Start[:len(ranges[0].Start)-len(lo)]), first...)
	if w := t.cols[0].Width; w > 0 && len(stored) != w {
		return nil, fmt.Errorf("%w: column %s with its salt has %d bytes, its width is %d", backends.ErrInvalidKey, t.cols[0].Name, len(stored), w)
	}
	var val any = stored
	if _, ok := v.(string); ok {
		val = string(stored)
	}
	out := new(ots.PrimaryKey)
	out.AddPrimaryKeyColumn(t.cols[0].Name, val)
	return out, nil
}

// CommitTransaction is the SDK's CommitTransaction.
func (c *Client) CommitTransaction(req *ots.CommitTransactionRequest) (*ots.CommitTransactionResponse, error) {
	return passThrough(c, "CommitTransaction", func() (*ots.CommitTransactionResponse, error) { return c.sdk.CommitTransaction(req) })
}

// AbortTransaction is the SDK's AbortTransaction.
func (c *Client) AbortTransaction(req *ots.AbortTransactionRequest) (*ots.AbortTransactionResponse, error) {
	return passThrough(c, "AbortTransaction", func() (*ots.AbortTransactionResponse, error) { return c.sdk.AbortTransaction(req) })
}

// CreateSearchIndex is the SDK's CreateSearchIndex. A search index sees the stored (salted) values of
// primary-key columns.
func (c *Client) CreateSearchIndex(req *ots.CreateSearchIndexRequest) (*ots.CreateSearchIndexResponse, error) {
	return passThrough(c, "CreateSearchIndex", func() (*ots.CreateSearchIndexResponse, error) { return c.sdk.CreateSearchIndex(req) })
}

// DeleteSearchIndex is the SDK's DeleteSearchIndex.
func (c *Client) DeleteSearchIndex(req *ots.DeleteSearchIndexRequest) (*ots.DeleteSearchIndexResponse, error) {
	return passThrough(c, "DeleteSearchIndex", func() (*ots.DeleteSearchIndexResponse, error) { return c.sdk.DeleteSearchIndex(req) })
}

// ListSearchIndex is the SDK's ListSearchIndex.
func (c *Client) ListSearchIndex(req *ots.ListSearchIndexRequest) (*ots.ListSearchIndexResponse, error) {
	return passThrough(c, "ListSearchIndex", func() (*ots.ListSearchIndexResponse, error) { return c.sdk.ListSearchIndex(req) })
}

// DescribeSearchIndex is the SDK's DescribeSearchIndex.
func (c *Client) DescribeSearchIndex(req *ots.DescribeSearchIndexRequest) (*ots.DescribeSearchIndexResponse, error) {
	return passThrough(c, "DescribeSearchIndex", func() (*ots.DescribeSearchIndexResponse, error) { return c.sdk.DescribeSearchIndex(req) })
}

// Search is the SDK's Search; its rows carry logical primary keys. The query is sent as given, so a
// query on the first primary-key column matches stored (salted) values; routing values, which are
// primary keys, are refused.
func (c *Client) Search(req *ots.SearchRequest) (*ots.SearchResponse, error) {
	const op = "Search"
	if req == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no request", backends.ErrInvalidArgument))
	}
	t, err := c.table(context.Background(), op, req.TableName)
	if err != nil {
		return nil, err
	}
	if len(req.RoutingValues) > 0 {
		return nil, badRequest(op, t.name, fmt.Errorf("%w: routing values", ErrUnsupported))
	}
	resp, err := send(c, op, t.name, func() (*ots.SearchResponse, error) { return c.sdk.Search(req) })
	if err != nil {
		return nil, err
	}
	var asked []string
	if req.ColumnsToGet != nil {
		asked = req.ColumnsToGet.Columns
	}
	hide := t.hides(asked)
	for i, row := range resp.Rows {
		if row == nil || row.PrimaryKey == nil || len(row.PrimaryKey.PrimaryKeys) == 0 {
			continue
		}
		if hide {
			row.Columns, _ = t.visible(row.Columns) // a search hit stays one, columns or not
		}
		pk, _, err := t.logicalPK(row.PrimaryKey)
		if err != nil {
			return nil, fmt.Errorf("dropin: %s %q: row %d: returned key: %w", op, t.name, i, err)
		}
		resp.Rows[i] = &ots.Row{PrimaryKey: pk, Columns: row.Columns}
	}
	return resp, nil
}
