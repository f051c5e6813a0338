package main

import (
	"context"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// saltedTable is a table with one salter, as the commands open it: a client.Table (whose writes keep
// its indexes, if it has any). The row commands need only its client.TableAPI; describe, analyze and
// rebucket need its salter and its rebucket too, which a period table (a salter per period) does not
// have.
type saltedTable interface {
	client.TableAPI
	Salter() salting.Salter
	Rebucket(ctx context.Context, to salting.Salter, opts client.RebucketOptions) error
}

// openSalted opens a table.
func openSalted(ctx context.Context, c *client.Client, name string, s salting.Salter) (saltedTable, error) {
	return opened(c.OpenTable(ctx, name, s))
}

// opened puts an open's table in the interface only when the open succeeded: a failed open's nil
// pointer in an interface would not compare equal to nil.
func opened[T saltedTable](t T, err error) (saltedTable, error) {
	if err != nil {
		return nil, err
	}
	return t, nil
}
