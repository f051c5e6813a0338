package client

import (
	"errors"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The row model is the driver contract's; aliases keep one type across the API and the drivers.
type (
	// Row is a logical row key with its cells.
	Row = backends.Row
	// Cell is one column value (family, qualifier, value, timestamp in ms).
	Cell = backends.Cell
	// Column names a column, or a whole family when Qualifier is empty.
	Column = backends.Column
	// Range is the logical key interval [Start, End); empty ends are unbounded.
	Range = backends.Range
	// Mutation writes or deletes cells of one logical row.
	Mutation = backends.Mutation
)

// Errors a caller may branch on. Driver errors pass through wrapped; those that are backends'
// sentinels are re-exported here as the same values, so errors.Is works with either name.
var (
	// ErrNotFound: Get found no row with that key.
	ErrNotFound = route.ErrNotFound
	// ErrSpecMismatch: a table was opened with a salting spec other than the one stored with it.
	ErrSpecMismatch = salting.ErrSpecMismatch
	// ErrSchemaMismatch: CreateOrOpenTable was given a key schema or families other than the ones
	// stored with the existing table.
	ErrSchemaMismatch = errors.New("brine: key schema or families do not match the table's")
	// ErrNoSpec: OpenTable was given no salter for a table with no stored spec (brine did not
	// create it); pass the spec its keys were written with, or "none" to read it unsalted.
	ErrNoSpec = salting.ErrNoSpec
	// ErrInvalidKey is backends.ErrInvalidKey: an empty or oversized key, rejected before sending.
	ErrInvalidKey = backends.ErrInvalidKey
	// ErrTableNotFound is backends.ErrTableNotFound.
	ErrTableNotFound = backends.ErrTableNotFound
	// ErrTableExists is backends.ErrTableExists.
	ErrTableExists = backends.ErrTableExists
	// ErrInvalidArgument is backends.ErrInvalidArgument: a bad option, spec, filter or range,
	// rejected before anything is sent.
	ErrInvalidArgument = backends.ErrInvalidArgument
	// ErrClosed is backends.ErrClosed: a call on a client whose backend was closed.
	ErrClosed = backends.ErrClosed
	// ErrRetryable is backends.ErrRetryable: the call may succeed if tried again (IsRetryable).
	ErrRetryable = backends.ErrRetryable
	// ErrNotTunable is backends.ErrNotTunable: TuneTable on a store that cannot tune tables.
	ErrNotTunable = backends.ErrNotTunable
)

// IsRetryable reports whether err may go away if the call is tried again (it wraps ErrRetryable).
func IsRetryable(err error) bool { return errors.Is(err, ErrRetryable) }

// RowRange returns the range [start, end).
func RowRange(start, end []byte) Range { return Range{Start: start, End: end} }

// InfiniteRange returns the range of all keys >= start.
func InfiniteRange(start []byte) Range { return Range{Start: start} }

// PrefixRange returns the range of all keys that begin with prefix.
func PrefixRange(prefix []byte) Range {
	return Range{Start: prefix, End: keys.PrefixEnd(prefix)}
}

// SingleRow returns the range holding exactly key.
func SingleRow(key []byte) Range {
	return Range{Start: key, End: keys.Successor(key)}
}
