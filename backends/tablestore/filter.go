package tablestore

import (
	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// A backends.Filter goes to the service as the SDK's column conditions when it can (leaves as
// SingleColumnCondition on the latest version, dropping rows without the column; And, Or and Not as
// CompositeColumnValueFilter), so rows that fail it are not sent back. Tablestore has no regex
// condition, and its latest-version test does not follow a read's time range, so a filter with a
// regex, or a read with a TimeRange, is evaluated here, on each page's rows before they count
// towards the limit: the service then sends every row of the range. The selector evaluates every
// filter here as well (cheap, and the semantics are then backends.Filter's whatever the service
// does); the push-down assumes BINARY values, which brine writes.

var comparators = [...]ots.ComparatorType{
	backends.Equal: ots.CT_EQUAL, backends.NotEqual: ots.CT_NOT_EQUAL, backends.Less: ots.CT_LESS_THAN,
	backends.LessOrEqual: ots.CT_LESS_EQUAL, backends.Greater: ots.CT_GREATER_THAN, backends.GreaterOrEqual: ots.CT_GREATER_EQUAL,
}

// serverFilter returns the condition to send for opts' filter, nil when none is sent.
func serverFilter(opts backends.ReadOptions) (ots.ColumnFilter, error) {
	f, _ := driverkit.SplitCells(opts.Filter) // the cell leaves are evaluated here (cellfilter.go)
	if f == nil || driverkit.Has(f, backends.FilterRegex) || opts.TimeRange != (backends.TimeRange{}) {
		return nil, nil
	}
	return toCondition(f)
}

func toCondition(f *backends.Filter) (ots.ColumnFilter, error) {
	switch f.Kind {
	case backends.FilterCompare:
		name, err := ColumnName(f.Column.Family, f.Column.Qualifier)
		if err != nil {
			return nil, err
		}
		c := ots.NewSingleColumnCondition(name, comparators[f.Op], f.Value)
		if f.Value == nil {
			c.ColumnValue = []byte{} // BINARY, not a missing value
		}
		c.FilterIfMissing, c.LatestVersionOnly = true, true
		return c, nil
	case backends.FilterNot, backends.FilterAnd, backends.FilterOr:
		if f.Kind != backends.FilterNot && len(f.Subs) == 1 {
			return toCondition(&f.Subs[0]) // the service wants two sub-conditions or more
		}
		op := map[backends.FilterKind]ots.LogicalOperator{backends.FilterNot: ots.LO_NOT, backends.FilterAnd: ots.LO_AND, backends.FilterOr: ots.LO_OR}[f.Kind]
		c := ots.NewCompositeColumnCondition(op)
		for i := range f.Subs {
			sub, err := toCondition(&f.Subs[i])
			if err != nil {
				return nil, err
			}
			c.AddFilter(sub)
		}
		return c, nil
	}
	return nil, nil // FilterRegex: serverFilter sends none
}
