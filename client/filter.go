package client

import (
	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
)

// Filter is a predicate on a row that the store evaluates in every bucket's scan and in Get and
// GetMany: a row it fails is skipped by Scan, is ErrNotFound to Get and has no cells in GetMany. A
// leaf tests the newest version of one column that the read returns (after Columns, TimeRange and
// MaxVersions); a row without the column fails the leaf, so NotFilter of a leaf passes it. Values
// compare bytewise. Which store evaluates what, where, is in the README ("Filters"). Build one with
// the functions below; its fields are what the drivers read (backends.Filter).
type Filter = backends.Filter

// CompareOp is a filter comparison: the column's value on the left, the filter's on the right.
type CompareOp = backends.CompareOp

// The comparisons.
const (
	Equal          = backends.Equal
	NotEqual       = backends.NotEqual
	Less           = backends.Less
	LessOrEqual    = backends.LessOrEqual
	Greater        = backends.Greater
	GreaterOrEqual = backends.GreaterOrEqual
)

// ValueFilter passes rows whose column col (family and qualifier) holds a value v with "v op value".
func ValueFilter(col Column, op CompareOp, value []byte) Filter {
	return backends.ValueFilter(col, op, value)
}

// ValueRegexFilter passes rows whose column col holds a value the RE2 pattern matches (anywhere in
// the value unless anchored). A bad pattern fails the read with ErrInvalidArgument before anything
// is sent.
func ValueRegexFilter(col Column, pattern string) Filter {
	return backends.ValueRegexFilter(col, pattern)
}

// AllFilters passes rows that every one of fs passes (AND).
func AllFilters(fs ...Filter) Filter { return Filter{Kind: backends.FilterAnd, Subs: fs} }

// AnyFilter passes rows that at least one of fs passes (OR).
func AnyFilter(fs ...Filter) Filter { return Filter{Kind: backends.FilterOr, Subs: fs} }

// NotFilter passes rows that f fails.
func NotFilter(f Filter) Filter { return Filter{Kind: backends.FilterNot, Subs: []Filter{f}} }

// RowFilter makes a read return only the rows f passes, trimmed by its cell filters (cellfilter.go). Every column f tests must be one the read
// selects (Columns or Families), or the read fails with ErrInvalidArgument before anything is sent.
func RowFilter(f Filter) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.Read.Filter = &f })
}

// KeyRegexFilter passes rows whose logical row key (salt stripped) the RE2 pattern matches. On a
// table with a key schema (TableConfig.KeySchema) that is the key as the schema prints it,
// keys.Schema.Format, the form the brine CLI prints: "O0001,42" for a key of schema "id,n:int64", so
// "^O0001" matches it (the encoded key starts with a tag byte). A key the schema cannot decode
// (written by other means) fails the leaf, so NotFilter of it passes the row, as a row without a
// column fails a value leaf. On a table without a key schema it is the key's bytes as given to Put. The
// client evaluates it, in each bucket's stream before the merge: the stores see salted keys only.
// Combined with AND, the other conditions still run in the store; anywhere else (under OR or NOT)
// the whole filter runs in the client. Either way the buckets read without the limit pushed down (a
// row may still fail on its key), in batches that grow from a few rows, until the merge has its
// limit. A key range or PrefixRange, which become ranges per bucket, is cheaper where it can say
// the same.
func KeyRegexFilter(pattern string) Filter { return backends.KeyRegexFilter(pattern) }
