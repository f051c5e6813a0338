package tablestoretest

import (
	"bytes"
	"math"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

type filterKind int

const (
	filterSingle filterKind = iota + 1
	filterComposite
	filterPagination
)

// colFilter is a decoded otsprotocol.Filter: a single-column comparison, a NOT/AND/OR
// composite, or (reads only) a column pagination filter.
type colFilter struct {
	kind filterKind

	cmp        otsprotocol.ComparatorType
	column     string
	val        value
	ifMissing  bool // filter_if_missing: a row without the column fails
	latestOnly bool

	op   otsprotocol.LogicalOperator
	subs []*colFilter

	offset, limit int32
}

// parseFilter decodes a serialized otsprotocol.Filter. Pagination is accepted only
// at the top level of a read (allowPagination).
func parseFilter(b []byte, allowPagination bool) (*colFilter, *otsError) {
	var f otsprotocol.Filter
	if err := proto.Unmarshal(b, protoadapt.MessageV2Of(&f)); err != nil {
		return nil, errParam("Deserialize filter failed.")
	}
	switch f.GetType() {
	case otsprotocol.FilterType_FT_SINGLE_COLUMN_VALUE:
		var s otsprotocol.SingleColumnValueFilter
		if err := proto.Unmarshal(f.GetFilter(), protoadapt.MessageV2Of(&s)); err != nil {
			return nil, errParam("Deserialize relation filter failed.")
		}
		if s.ValueTransRule != nil {
			return nil, errUnsupported("ValueTransferRule in column filters")
		}
		if s.GetComparator() < otsprotocol.ComparatorType_CT_EQUAL || s.GetComparator() > otsprotocol.ComparatorType_CT_LESS_EQUAL {
			return nil, errParam("Invalid relation operator: %d.", s.GetComparator())
		}
		v, err := parsePayload(s.GetColumnValue())
		if err != nil {
			return nil, errParam("Deserialize relation filter failed.")
		}
		if v.isInf() || v.typ == vtAutoIncrement {
			return nil, errParam("Deserialize relation filter failed.")
		}
		return &colFilter{
			kind: filterSingle, cmp: s.GetComparator(), column: s.GetColumnName(), val: v,
			ifMissing: s.GetFilterIfMissing(), latestOnly: s.GetLatestVersionOnly(),
		}, nil
	case otsprotocol.FilterType_FT_COMPOSITE_COLUMN_VALUE:
		var c otsprotocol.CompositeColumnValueFilter
		if err := proto.Unmarshal(f.GetFilter(), protoadapt.MessageV2Of(&c)); err != nil {
			return nil, errParam("Deserialize composite filter failed.")
		}
		out := &colFilter{kind: filterComposite, op: c.GetCombinator()}
		switch c.GetCombinator() {
		case otsprotocol.LogicalOperator_LO_NOT:
			if len(c.SubFilters) != 1 {
				return nil, errParam("Invalid NOT operator: the number of sub-filters must be 1.")
			}
		case otsprotocol.LogicalOperator_LO_AND, otsprotocol.LogicalOperator_LO_OR:
			if len(c.SubFilters) < 2 {
				return nil, errParam("Invalid AND/OR operator: the number of sub-filters must be 2.")
			}
		default:
			return nil, errParam("Invalid relation operator: %d.", c.GetCombinator())
		}
		for _, sf := range c.SubFilters {
			raw, err := proto.Marshal(protoadapt.MessageV2Of(sf))
			if err != nil {
				return nil, errParam("Deserialize composite filter failed.")
			}
			sub, oerr := parseFilter(raw, false)
			if oerr != nil {
				if sf.GetType() == otsprotocol.FilterType_FT_COLUMN_PAGINATION {
					return nil, errParam("Invalid type of sub-filter: %s.", sf.GetType())
				}
				return nil, oerr
			}
			out.subs = append(out.subs, sub)
		}
		return out, nil
	case otsprotocol.FilterType_FT_COLUMN_PAGINATION:
		if !allowPagination {
			return nil, errParam("Invalid type of filter: %s.", f.GetType())
		}
		var p otsprotocol.ColumnPaginationFilter
		if err := proto.Unmarshal(f.GetFilter(), protoadapt.MessageV2Of(&p)); err != nil {
			return nil, errParam("Deserialize column pagination filter failed.")
		}
		if p.GetOffset() < 0 {
			return nil, errParam("Offset in ColumnPaginationFilter must be greater than or equal to 0.")
		}
		if p.GetLimit() <= 0 {
			return nil, errParam("Limit in ColumnPaginationFilter must be greater than 0.")
		}
		return &colFilter{kind: filterPagination, offset: p.GetOffset(), limit: p.GetLimit()}, nil
	}
	return nil, errParam("Invalid type of filter: %d.", f.GetType())
}

// match evaluates the filter against a row; versions returns the versions of a
// column the read can see, newest first.
func (f *colFilter) match(versions func(col string) []cellVersion) bool {
	switch f.kind {
	case filterPagination:
		return true
	case filterComposite:
		switch f.op {
		case otsprotocol.LogicalOperator_LO_NOT:
			return !f.subs[0].match(versions)
		case otsprotocol.LogicalOperator_LO_AND:
			for _, s := range f.subs {
				if !s.match(versions) {
					return false
				}
			}
			return true
		default:
			for _, s := range f.subs {
				if s.match(versions) {
					return true
				}
			}
			return false
		}
	}
	vs := versions(f.column)
	if len(vs) == 0 {
		return !f.ifMissing
	}
	if f.latestOnly {
		vs = vs[:1]
	}
	for _, v := range vs {
		if f.compare(v.v) {
			return true
		}
	}
	return false
}

// compare applies the comparator to one cell value. Values of different types are
// unequal and unordered: only NOT_EQUAL holds between them.
func (f *colFilter) compare(v value) bool {
	c, comparable := compareValues(v, f.val)
	if !comparable {
		return f.cmp == otsprotocol.ComparatorType_CT_NOT_EQUAL
	}
	switch f.cmp {
	case otsprotocol.ComparatorType_CT_EQUAL:
		return c == 0
	case otsprotocol.ComparatorType_CT_NOT_EQUAL:
		return c != 0
	case otsprotocol.ComparatorType_CT_GREATER_THAN:
		return c > 0
	case otsprotocol.ComparatorType_CT_GREATER_EQUAL:
		return c >= 0
	case otsprotocol.ComparatorType_CT_LESS_THAN:
		return c < 0
	}
	return c <= 0
}

func compareValues(a, b value) (int, bool) {
	if a.typ != b.typ {
		return 0, false
	}
	switch a.typ {
	case vtInteger, vtBoolean:
		switch {
		case a.i < b.i:
			return -1, true
		case a.i > b.i:
			return 1, true
		}
		return 0, true
	case vtDouble:
		x, y := math.Float64frombits(uint64(a.i)), math.Float64frombits(uint64(b.i))
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	}
	return bytes.Compare(a.b, b.b), true
}
