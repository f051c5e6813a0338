package dropin

import (
	"bytes"
	"fmt"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Row-key filters that can be carried exactly on salted keys are rewritten rather than refused:
// a PrefixFilter, alone or as a member of a MUST_PASS_ALL FilterList (where it is a plain AND), selects
// the logical range [prefix, keys.PrefixEnd(prefix)), so a Scan intersects its range with that one (and the
// salter gives the range per bucket), and a Get, whose one row either has the prefix or not, drops it
// or replaces the whole filter with one that passes no row. Anywhere else (MUST_PASS_ONE, SkipFilter, ...)
// a PrefixFilter is not a range and stays refused. On an unsalted ("none") table nothing is rewritten
// or refused: its physical keys are its logical keys.

// pbFilter hands an already built protobuf filter to hrpc.Filters, which takes a filter.Filter.
type pbFilter struct{ f *pb.Filter }

func (p pbFilter) ConstructPBFilter() (*pb.Filter, error) { return p.f, nil }

var _ filter.Filter = pbFilter{}

// unsalted says whether s leaves keys as they are, so requests go to the server unchanged.
func unsalted(s salting.Salter) bool { return s.Spec() == "none" }

// prefixes splits f into the row prefixes it requires (top-level PrefixFilters and those of a top-level
// MUST_PASS_ALL list) and the filter that remains without them (nil if none).
func prefixes(f *pb.Filter) (rest *pb.Filter, pre [][]byte, err error) {
	if f == nil {
		return nil, nil, nil
	}
	switch f.GetName() {
	case filterPath + "PrefixFilter":
		p, err := prefixOf(f)
		if err != nil {
			return nil, nil, err
		}
		return nil, [][]byte{p}, nil
	case filterPath + "FilterList":
		var l pb.FilterList
		if err := proto.Unmarshal(f.SerializedFilter, &l); err != nil {
			return nil, nil, fmt.Errorf("filter FilterList: %w", err)
		}
		if l.GetOperator() != pb.FilterList_MUST_PASS_ALL {
			return f, nil, nil
		}
		var kept []*pb.Filter
		for _, in := range l.Filters {
			if in.GetName() != filterPath+"PrefixFilter" {
				kept = append(kept, in)
				continue
			}
			p, err := prefixOf(in)
			if err != nil {
				return nil, nil, err
			}
			pre = append(pre, p)
		}
		if len(pre) == 0 {
			return f, nil, nil
		}
		if len(kept) == 0 {
			return nil, pre, nil
		}
		l.Filters = kept
		b, err := proto.Marshal(&l)
		if err != nil {
			return nil, nil, fmt.Errorf("filter FilterList: %w", err)
		}
		return &pb.Filter{Name: f.Name, SerializedFilter: b}, pre, nil
	}
	return f, nil, nil
}

func prefixOf(f *pb.Filter) ([]byte, error) {
	var p pb.PrefixFilter
	if err := proto.Unmarshal(f.SerializedFilter, &p); err != nil {
		return nil, fmt.Errorf("filter PrefixFilter: %w", err)
	}
	return p.Prefix, nil
}

// hasPrefixes says whether key has every prefix in pre. A nil prefix (PrefixFilter without its field)
// is none that a key can have: HBase's PrefixFilter with a null prefix passes no row, while an empty
// one passes every row.
func hasPrefixes(key []byte, pre [][]byte) bool {
	for _, p := range pre {
		if p == nil || !bytes.HasPrefix(key, p) {
			return false
		}
	}
	return true
}

// prefixRange narrows the logical range [start, end) (empty end: unbounded) to the keys that have every
// prefix in pre; empty says no key can.
func prefixRange(start, end []byte, pre [][]byte) (s, e []byte, empty bool) {
	s, e = start, end
	for _, p := range pre {
		if p == nil {
			return nil, nil, true
		}
		if bytes.Compare(p, s) > 0 {
			s = p
		}
		if pe := keys.PrefixEnd(p); pe != nil && (len(e) == 0 || bytes.Compare(pe, e) < 0) {
			e = pe
		}
	}
	return s, e, len(e) > 0 && bytes.Compare(s, e) >= 0
}

// noRowFilter passes no row of a Get of the physical key phys: the filter of a Get whose row lacks a
// required prefix. It is a PrefixFilter longer than the row (HBase's FilterAllFilter would say it
// plainly, but it lives in HBase's test jar, which servers do not load).
func noRowFilter(phys []byte) *pb.Filter {
	f, _ := filter.NewPrefixFilter(keys.Successor(phys)).ConstructPBFilter() // marshals bytes: cannot fail
	return f
}

// everyRowFilter passes every row: HBase's PrefixFilter with an empty prefix. It stands for a
// condition's PrefixFilter that the row passes, where a condition must keep a filter.
func everyRowFilter() *pb.Filter {
	f, _ := filter.NewPrefixFilter([]byte{}).ConstructPBFilter() // marshals bytes: cannot fail
	return f
}

// saltPrefixes is f with every PrefixFilter that prefixes takes out of it (top level, or in a
// top-level MUST_PASS_ALL list) put behind pfx, a bucket's prefix: on that bucket's physical keys it
// passes the rows f passes on the logical keys. An absent prefix stays absent (it passes no row,
// salted or not).
func saltPrefixes(f *pb.Filter, pfx []byte) (*pb.Filter, error) {
	switch f.GetName() {
	case filterPath + "PrefixFilter":
		return saltPrefix(f, pfx)
	case filterPath + "FilterList":
		var l pb.FilterList
		if err := proto.Unmarshal(f.SerializedFilter, &l); err != nil {
			return nil, fmt.Errorf("filter FilterList: %w", err)
		}
		if l.GetOperator() != pb.FilterList_MUST_PASS_ALL {
			return f, nil
		}
		salted := make([]*pb.Filter, len(l.Filters))
		for i, in := range l.Filters {
			if in.GetName() != filterPath+"PrefixFilter" {
				salted[i] = in
				continue
			}
			var err error
			if salted[i], err = saltPrefix(in, pfx); err != nil {
				return nil, err
			}
		}
		l.Filters = salted
		b, err := proto.Marshal(&l)
		if err != nil {
			return nil, fmt.Errorf("filter FilterList: %w", err)
		}
		return &pb.Filter{Name: f.Name, SerializedFilter: b}, nil
	}
	return f, nil
}

func saltPrefix(f *pb.Filter, pfx []byte) (*pb.Filter, error) {
	p, err := prefixOf(f)
	if err != nil || p == nil {
		return f, err
	}
	return filter.NewPrefixFilter(append(bytes.Clone(pfx), p...)).ConstructPBFilter()
}
