package client

import (
	"context"
	"iter"

	"github.com/brine-kv/brine/keys"
)

// TableAPI is what every kind of table does with its rows: a Table (whose writes keep its indexes,
// if it has any) and a period table (package periods, which sends each row to its period's table).
// A program that takes either, as the brine CLI does, takes a TableAPI; what only a Table has (its
// Salter, Rebucket and Index) stays on the type.
//
// Open a table as its concrete type and put it in a TableAPI only once the open has succeeded: an
// interface holding a nil *Table is not nil.
type TableAPI interface {
	// Name is the table's name: the logical one, for a period table.
	Name() string
	// KeySchema is the key schema stored with the table, nil for none.
	KeySchema() *keys.Schema

	Put(ctx context.Context, key []byte, cells ...Cell) error
	Get(ctx context.Context, key []byte, opts ...ReadOption) (Row, error)
	Delete(ctx context.Context, key []byte, columns ...Column) error
	Apply(ctx context.Context, muts []Mutation) (rowErrs []error, err error)
	Scan(ctx context.Context, r Range, opts ...ReadOption) iter.Seq2[Row, error]
	Import(ctx context.Context, rows iter.Seq2[ImportRow, error], opts ImportOptions) (ImportStats, error)
}

var _ TableAPI = (*Table)(nil)
