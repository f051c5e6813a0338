package dropin

import (
	"fmt"
	"strings"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
)

// CheckAndPutWithCompareType compares the cell family:qualifier of the Put's own row with
// expectedValue by compareType and writes on the salted key when the comparison holds.
func (c *Client) CheckAndPutWithCompareType(p *hrpc.Mutate, family, qualifier string, expectedValue []byte,
	compareType pb.CompareType) (bool, error) {
	var ok bool
	_, _, err := c.send("CheckAndPutWithCompareType", p, func(m *hrpc.Mutate) (*hrpc.Result, error) {
		var err error
		ok, err = c.inner.CheckAndPutWithCompareType(m, family, qualifier, expectedValue, compareType)
		return nil, err
	})
	return ok, err
}

// CheckAndMutate applies cam's mutation on the salted key when its condition holds on that row. The
// condition is a comparison of one cell, or a filter; a filter is carried as a Get's would be: a
// PrefixFilter (alone or in a MUST_PASS_ALL list) is decided on the logical key, and filters that
// compare row keys otherwise are refused (ErrUnsupported).
func (c *Client) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	const call = "CheckAndMutate"
	if cam == nil || cam.Mutate == nil {
		return false, fmt.Errorf("dropin: %s: %w: nil request", call, backends.ErrInvalidArgument)
	}
	ctx := cam.Context()
	if err := c.begin(ctx); err != nil {
		return false, err
	}
	ncam, err := c.rewriteCheckAndMutate(cam)
	if err != nil {
		return false, c.asGohbase(ctx, err)
	}
	ok, err := c.inner.CheckAndMutate(ncam)
	return ok, c.asGohbase(ctx, err)
}

// rewriteCheckAndMutate rebuilds cam on the salted key, condition included, and checks that nothing
// else changed.
func (c *Client) rewriteCheckAndMutate(cam *hrpc.CheckAndMutate) (*hrpc.CheckAndMutate, error) {
	const call = "CheckAndMutate"
	table := string(cam.Table())
	nm, phys, err := c.rewriteMutate(call, cam.Mutate)
	if err != nil {
		return nil, err
	}
	want, ok := requestProto(cam).(*pb.MutateRequest)
	if !ok || want.Mutation == nil || want.Condition == nil {
		return nil, unsupported(call, table, "request of unexpected form")
	}
	cond := want.Condition
	var ncam *hrpc.CheckAndMutate
	if cond.Filter != nil {
		f, err := c.conditionFilter(cam, cond.Filter, phys)
		if err != nil {
			return nil, err
		}
		cond.Filter = f
		if ncam, err = hrpc.NewCheckAndMutateWithFilter(nm, pbFilter{f}); err != nil {
			return nil, fmt.Errorf("dropin: %s %q: %w", call, table, err)
		}
	} else {
		ncam, err = hrpc.NewCheckAndMutate(nm, string(cond.Family), string(cond.Qualifier),
			cond.GetCompareType(), pbComparator{cond.Comparator})
		if err != nil {
			return nil, fmt.Errorf("dropin: %s %q: %w", call, table, err)
		}
	}
	want.Mutation.Row, cond.Row = phys, phys
	if d := protoDiff(normalize(want), normalize(requestProto(ncam))); len(d) > 0 {
		return nil, unsupported(call, table, "cannot carry over "+strings.Join(d, ", "))
	}
	return ncam, nil
}

// conditionFilter is the filter of a CheckAndMutate's condition on the salted row phys: what a Get
// of the row would send, except that a condition needs a filter to stay a filter condition, so a
// PrefixFilter the row passes becomes one that passes every row (HBase: an empty prefix).
func (c *Client) conditionFilter(cam *hrpc.CheckAndMutate, f *pb.Filter, phys []byte) (*pb.Filter, error) {
	const call = "CheckAndMutate"
	table := string(cam.Table())
	t, err := c.table(cam.Context(), table)
	if err != nil {
		return nil, err
	}
	if unsalted(t.salter) {
		return f, nil
	}
	rest, pre, err := prefixes(f)
	if err != nil {
		return nil, unsupported(call, table, err.Error())
	}
	if err := checkFilter(rest, false); err != nil {
		return nil, unsupported(call, table, err.Error())
	}
	switch {
	case len(pre) == 0:
		return rest, nil
	case !hasPrefixes(cam.Key(), pre):
		return noRowFilter(phys), nil
	case rest == nil:
		return everyRowFilter(), nil
	}
	return rest, nil
}

// pbComparator hands an already built protobuf comparator to hrpc.NewCheckAndMutate.
type pbComparator struct{ c *pb.Comparator }

func (p pbComparator) ConstructPBComparator() (*pb.Comparator, error) { return p.c, nil }
