package hbase

import (
	"context"
	"fmt"
	"slices"

	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/backends"
)

var _ backends.TableLister = (*Backend)(nil)

// Tables returns the names of the tables in the default namespace (the only one brine uses), sorted.
func (b *Backend) Tables(ctx context.Context) ([]string, error) {
	list, err := hrpc.NewListTableNames(ctx, hrpc.ListNamespace("default"))
	if err != nil {
		return nil, fmt.Errorf("hbase: list tables: %w", err)
	}
	names, err := b.admin.ListTableNames(list)
	if err != nil {
		return nil, wrapErr("list tables", "", err)
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, string(n.GetQualifier()))
	}
	slices.Sort(out)
	return out, nil
}
