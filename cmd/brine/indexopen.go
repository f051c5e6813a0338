package main

import (
	"context"
	"errors"
	"iter"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// saltedTable is one salted table as the commands open it: a plain client.Table, or a
// client.IndexedTable, whose writes keep its indexes.
type saltedTable interface {
	rowTable
	Name() string
	Salter() salting.Salter
	CountByBucket(ctx context.Context) ([]int64, error)
	Import(ctx context.Context, rows iter.Seq2[client.ImportRow, error], opts client.ImportOptions) (client.ImportStats, error)
}

// openSalted opens a table with the handle its kind needs: a table with indexes is written only
// through an IndexedTable (OpenTable refuses it).
func openSalted(ctx context.Context, c *client.Client, name string, s salting.Salter) (saltedTable, error) {
	t, err := c.OpenTable(ctx, name, s)
	if errors.Is(err, client.ErrIndexedTable) {
		return c.OpenIndexedTable(ctx, name, s)
	}
	if err != nil {
		return nil, err // a nil *client.Table in the interface would not compare equal to nil
	}
	return t, nil
}
