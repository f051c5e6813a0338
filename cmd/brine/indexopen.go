package main

import (
	"context"
	"errors"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// saltedTable is a table with one salter, as the commands open it: a client.Table, or a
// client.IndexedTable, whose writes keep its indexes. The row commands need only its
// client.TableAPI; describe, analyze and rebucket need its salter and its rebucket too, which a
// period table (a salter per period) does not have.
type saltedTable interface {
	client.TableAPI
	Salter() salting.Salter
	Rebucket(ctx context.Context, to salting.Salter, opts client.RebucketOptions) error
}

// openSalted opens a table with the handle its kind needs: a table with indexes is written only
// through an IndexedTable (OpenTable refuses it).
func openSalted(ctx context.Context, c *client.Client, name string, s salting.Salter) (saltedTable, error) {
	t, err := c.OpenTable(ctx, name, s)
	if errors.Is(err, client.ErrIndexedTable) {
		return opened(c.OpenIndexedTable(ctx, name, s))
	}
	return opened(t, err)
}

// opened puts an open's table in the interface only when the open succeeded: a failed open's nil
// pointer in an interface would not compare equal to nil.
func opened[T saltedTable](t T, err error) (saltedTable, error) {
	if err != nil {
		return nil, err
	}
	return t, nil
}
