package hbase

import (
	"context"
	"fmt"
	"slices"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// CheckAndMutate sends HBase's CheckAndMutate: the server tests cond and applies m under the row's
// lock. A delete is stamped as Apply stamps it (deleteRow), or with the server's clock when it finds
// nothing to delete.
func (b *Backend) CheckAndMutate(ctx context.Context, table string, cond backends.Condition, m backends.Mutation) (bool, error) {
	if err := checkTable(table); err != nil {
		return false, err
	}
	if err := checkMutation(m); err != nil {
		return false, fmt.Errorf("hbase: check and mutate %q: %w", table, err)
	}
	if err := checkFamily(cond.Family); err != nil {
		return false, fmt.Errorf("hbase: check and mutate %q: condition: %w", table, err)
	}
	// An empty expected value tells the server to test that the column is absent (or empty).
	cmp, err := filter.NewBinaryComparator(filter.NewByteArrayComparable(cond.Value)).ConstructPBComparator()
	if err != nil {
		return false, fmt.Errorf("hbase: check and mutate %q: %w", table, err)
	}
	cn, rctx, done := b.begin(ctx)
	defer done()
	var stamp int64
	if m.Delete {
		if stamp, err = deleteStamp(rctx, cn.client, table, m); err != nil {
			return false, b.rpcErr(ctx, cn, "check and mutate", table, err)
		}
	}
	msg, err := cn.rpc.SendRPC(&checkAndMutate{
		cellMutate: cellMutate{callBase: newCallBase(rctx, []byte(table), m.Key), mutation: mutationProto(m, stamp)},
		cond: &pb.Condition{
			Row: m.Key, Family: []byte(cond.Family), Qualifier: []byte(cond.Qualifier),
			CompareType: pb.CompareType_EQUAL.Enum(), Comparator: cmp,
		},
	})
	if err != nil {
		return false, b.rpcErr(ctx, cn, "check and mutate", table, err)
	}
	resp, ok := msg.(*pb.MutateResponse)
	if !ok {
		return false, fmt.Errorf("hbase: check and mutate %q: unexpected response %T", table, msg)
	}
	return resp.GetProcessed(), nil
}

// Increment sends HBase's Increment, atomic on the row, and returns the new values in the order asked.
func (b *Backend) Increment(ctx context.Context, table string, key []byte, incs []backends.Increment) ([]backends.Cell, error) {
	if err := checkTable(table); err != nil {
		return nil, err
	}
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("hbase: increment %q: %w", table, err)
	}
	if err := driverkit.CheckIncrements(incs); err != nil {
		return nil, fmt.Errorf("hbase: increment %q: %w", table, err)
	}
	values := map[string]map[string][]byte{}
	for _, inc := range incs {
		if err := checkFamily(inc.Family); err != nil {
			return nil, fmt.Errorf("hbase: increment %q: %w", table, err)
		}
		if values[inc.Family] == nil {
			values[inc.Family] = map[string][]byte{}
		}
		values[inc.Family][inc.Qualifier] = driverkit.CounterBytes(inc.Delta)
	}
	cn, rctx, done := b.begin(ctx)
	defer done()
	call, err := hrpc.NewInc(rctx, []byte(table), key, values)
	if err != nil {
		return nil, fmt.Errorf("hbase: increment %q: %w", table, err)
	}
	msg, err := cn.rpc.SendRPC(call)
	if err != nil {
		return nil, b.rpcErr(ctx, cn, "increment", table, err)
	}
	resp, ok := msg.(*pb.MutateResponse)
	if !ok {
		return nil, fmt.Errorf("hbase: increment %q: unexpected response %T", table, msg)
	}
	got := rowFromCells(key, pbCells(hrpc.ToLocalResult(resp.GetResult()))).Cells
	out := make([]backends.Cell, len(incs))
	for i, inc := range incs {
		j := slices.IndexFunc(got, func(c backends.Cell) bool { return c.Family == inc.Family && c.Qualifier == inc.Qualifier })
		if j < 0 {
			return nil, fmt.Errorf("hbase: increment %q: the server returned no value for %s:%s", table, inc.Family, inc.Qualifier)
		}
		out[i] = got[j]
	}
	return out, nil
}
