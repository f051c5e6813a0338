package dropin

import (
	"context"
	"fmt"
	"slices"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/salting"
)

// The client is the SDK's: code written against the SDK's interface takes it unchanged.
var _ ots.TableStoreApi = (*Client)(nil)

// reserved refuses table operations on the meta table, which the drop-in hides.
func (c *Client) reserved(op, table string) error {
	if table == c.backend.MetaTable() {
		return badRequest(op, table, fmt.Errorf("%w: reserved for brine's table metadata", backends.ErrInvalidArgument))
	}
	return nil
}

// CreateTable is the SDK's CreateTable, and stores a salting spec with the new table (as brine
// stores it) so that every client salts it the same way: the WithSalter spec given for it, or else
// DefaultSpec.
func (c *Client) CreateTable(req *ots.CreateTableRequest) (*ots.CreateTableResponse, error) {
	const op = "CreateTable"
	if req == nil || req.TableMeta == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no TableMeta", backends.ErrInvalidArgument))
	}
	name := req.TableMeta.TableName
	if err := c.reserved(op, name); err != nil {
		return nil, err
	}
	s := c.salters[name]
	if s == nil {
		s = defaultSalter
	}
	resp, err := send(c, op, name, func() (*ots.CreateTableResponse, error) { return c.sdk.CreateTable(req) })
	c.Forget(name)
	if err != nil {
		return nil, err
	}
	if err := c.Adopt(context.Background(), name, s); err != nil {
		return nil, fmt.Errorf("dropin: %s %q: table created, spec not stored: %w", op, name, err)
	}
	return resp, nil
}

// DeleteTable is the SDK's DeleteTable; the table's stored spec is deleted with it and the client
// forgets it, so that a table created again under the name is learned afresh.
func (c *Client) DeleteTable(req *ots.DeleteTableRequest) (*ots.DeleteTableResponse, error) {
	const op = "DeleteTable"
	if req == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no request", backends.ErrInvalidArgument))
	}
	if err := c.reserved(op, req.TableName); err != nil {
		return nil, err
	}
	// A table with indexes has index tables of its own that only client knows of: deleting it here
	// would leave them behind, holding entries of rows that are gone.
	if meta, err := c.backend.TableMeta(context.Background(), req.TableName); err == nil {
		if _, indexed := indexproto.Indexed(meta); indexed {
			return nil, badRequest(op, req.TableName, fmt.Errorf("%w: delete it with client's DeleteTable, which deletes its index tables too", ErrIndexedTable))
		}
	}
	resp, err := send(c, op, req.TableName, func() (*ots.DeleteTableResponse, error) { return c.sdk.DeleteTable(req) })
	c.Forget(req.TableName)
	if err != nil {
		return nil, err
	}
	if err := c.backend.DeleteMeta(context.Background(), req.TableName); err != nil {
		return nil, fmt.Errorf("dropin: %s %q: table deleted, its spec not: %w", op, req.TableName, err)
	}
	return resp, nil
}

// ListTable is the SDK's ListTable without brine's meta table.
func (c *Client) ListTable() (*ots.ListTableResponse, error) {
	resp, err := call(c.sdk.ListTable)
	if err != nil {
		return nil, sdkError("ListTable", err)
	}
	resp.TableNames = slices.DeleteFunc(resp.TableNames, func(n string) bool { return n == c.backend.MetaTable() })
	return resp, nil
}

// DescribeTable is the SDK's DescribeTable: the table's stored schema, whose first key column holds
// salted values.
func (c *Client) DescribeTable(req *ots.DescribeTableRequest) (*ots.DescribeTableResponse, error) {
	return passThrough(c, "DescribeTable", func() (*ots.DescribeTableResponse, error) { return c.sdk.DescribeTable(req) })
}

// UpdateTable is the SDK's UpdateTable (options and throughput; the key does not change).
func (c *Client) UpdateTable(req *ots.UpdateTableRequest) (*ots.UpdateTableResponse, error) {
	return passThrough(c, "UpdateTable", func() (*ots.UpdateTableResponse, error) { return c.sdk.UpdateTable(req) })
}

// CreateIndex is the SDK's CreateIndex. A secondary index's rows carry the table's stored (salted)
// primary key.
func (c *Client) CreateIndex(req *ots.CreateIndexRequest) (*ots.CreateIndexResponse, error) {
	return passThrough(c, "CreateIndex", func() (*ots.CreateIndexResponse, error) { return c.sdk.CreateIndex(req) })
}

// DeleteIndex is the SDK's DeleteIndex.
func (c *Client) DeleteIndex(req *ots.DeleteIndexRequest) (*ots.DeleteIndexResponse, error) {
	return passThrough(c, "DeleteIndex", func() (*ots.DeleteIndexResponse, error) { return c.sdk.DeleteIndex(req) })
}

// ComputeSplitPointsBySize is the SDK's: the split points are stored (salted) primary keys, which
// are what parallel GetRange calls on the SDK client take.
func (c *Client) ComputeSplitPointsBySize(req *ots.ComputeSplitPointsBySizeRequest) (*ots.ComputeSplitPointsBySizeResponse, error) {
	return passThrough(c, "ComputeSplitPointsBySize", func() (*ots.ComputeSplitPointsBySizeResponse, error) {
		return c.sdk.ComputeSplitPointsBySize(req)
	})
}

// passThrough sends a request that holds no row key as it is.
func passThrough[T any](c *Client, op string, fn func() (T, error)) (T, error) {
	resp, err := call(fn)
	if err != nil {
		var none T
		return none, sdkError(op, err)
	}
	return resp, nil
}

// Adopt makes table, created without brine (by the SDK, say), a salted table for every client: it
// stores the salter's spec with it, and with key the table's primary key (only to give the first of
// several columns a fixed Width; undeclared, it is variable). The table's rows are not rewritten, so
// adopt an empty table, or one whose keys already carry the salt (the Tablestore guide's md5 prefix
// is "md5hex:4:sep=0x00" on a variable first column); a table with no rows to keep can also be used
// unsalted with WithUnsalted. A table that already has another spec fails with ErrSpecMismatch.
func (c *Client) Adopt(ctx context.Context, table string, s salting.Salter, key ...tablestore.KeyColumn) error {
	const op = "Adopt"
	if s == nil {
		return badRequest(op, table, fmt.Errorf("%w: no salter", backends.ErrInvalidArgument))
	}
	if err := c.reserved(op, table); err != nil {
		return err
	}
	meta, err := c.backend.TableMeta(ctx, table)
	if err != nil {
		return fmt.Errorf("dropin: %s %q: %w", op, table, err)
	}
	adopt := map[string]string{salting.MetaKey: s.Spec()}
	if stored, ok := meta[salting.MetaKey]; ok {
		if salting.CanonicalSpec(stored) != s.Spec() {
			return fmt.Errorf("dropin: %s %q: given %q, table has %q: %w", op, table, s.Spec(), stored, ErrSpecMismatch)
		}
		adopt[salting.MetaKey] = stored // the same salting, spelled as stored (an earlier brine's spelling stays)
	}
	if len(key) > 0 {
		adopt[tablestore.MetaPrimaryKey] = tablestore.FormatPrimaryKey(key...)
	}
	err = c.backend.AdoptTable(ctx, table, adopt)
	c.Forget(table)
	if err != nil {
		return fmt.Errorf("dropin: %s %q: %w", op, table, err)
	}
	return nil
}
