package tablestore

import (
	"context"
	"slices"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
)

var _ backends.TableLister = (*Backend)(nil)

// Tables returns the names of the instance's tables but the meta table, sorted.
func (b *Backend) Tables(ctx context.Context) ([]string, error) {
	resp, err := sdkCall(ctx, b, func() (*ots.ListTableResponse, error) { return b.client.ListTable() })
	if err != nil {
		return nil, mapError("list tables", err, true)
	}
	names := slices.DeleteFunc(slices.Clone(resp.TableNames), func(n string) bool { return n == b.opts.MetaTable })
	slices.Sort(names)
	return names, nil
}
