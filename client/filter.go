package client

import "github.com/brine-kv/brine/backends"

// Filter is a predicate on a row that the store evaluates in every bucket's scan and in Get and
// GetMany: a row it fails is skipped by Scan, is ErrNotFound to Get and has no cells in GetMany. A
// leaf tests the newest version of one column that the read returns (after Columns, TimeRange and
// MaxVersions); a row without the column fails the leaf, so NotFilter of a leaf passes it. Values
// compare bytewise. Which store evaluates what, where, is in the README ("Filters").
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
	return backends.NewCompareFilter(col, op, value)
}

// ValueRegexFilter passes rows whose column col holds a value the RE2 pattern matches (anywhere in
// the value unless anchored). A bad pattern fails the read with ErrInvalidArgument before anything
// is sent.
func ValueRegexFilter(col Column, pattern string) Filter {
	return backends.NewRegexFilter(col, pattern)
}

// AllFilters passes rows that every one of fs passes (AND).
func AllFilters(fs ...Filter) Filter { return Filter{Kind: backends.FilterAnd, Subs: fs} }

// AnyFilter passes rows that at least one of fs passes (OR).
func AnyFilter(fs ...Filter) Filter { return Filter{Kind: backends.FilterOr, Subs: fs} }

// NotFilter passes rows that f fails.
func NotFilter(f Filter) Filter { return Filter{Kind: backends.FilterNot, Subs: []Filter{f}} }

// RowFilter makes a read return only the rows f passes. Every column f tests must be one the read
// selects (Columns or Families), or the read fails with ErrInvalidArgument before anything is sent.
func RowFilter(f Filter) ReadOption { return func(c *readConfig) { c.read.Filter = &f } }
