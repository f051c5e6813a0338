package dropin

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// SendBatch sends batch as gohbase's SendBatch does, each call rebuilt on its salted key: one
// result per call, in batch's order, allOK when every call succeeded. A batch gohbase would refuse
// whole (a call twice, calls of two tables, a call that cannot be batched) is refused with
// gohbase's own errors in the calls' slots and gohbase.NotExecutedError in the others, before
// anything is sent; so is a batch with a call the wrapper refuses (ErrUnsupported, a bad key, a
// write to a table with indexes): that call's slot holds why, the others NotExecutedError. The
// results' messages (*pb.GetResponse, *pb.MutateResponse) carry logical row keys.
func (c *Client) SendBatch(ctx context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	if len(batch) == 0 {
		return nil, true
	}
	res := make([]hrpc.RPCResult, len(batch))
	fail := func(err error) ([]hrpc.RPCResult, bool) {
		for i := range res {
			res[i].Error = err
		}
		return res, false
	}
	if err := c.begin(ctx); err != nil {
		return fail(err)
	}
	if !checkBatch(batch, res) {
		return res, false
	}
	plans := make([]batchPlan, len(batch))
	calls := make([]hrpc.Call, len(batch))
	for i, call := range batch {
		p, err := c.rewriteBatched(call)
		if err != nil {
			for j := range res {
				res[j].Error = gohbase.NotExecutedError
			}
			res[i].Error = c.asGohbase(ctx, err)
			return res, false
		}
		plans[i], calls[i] = p, p.call
	}
	got, allOK := c.inner.SendBatch(ctx, calls)
	if len(got) != len(batch) {
		return fail(fmt.Errorf("dropin: SendBatch: gohbase returned %d results for %d calls", len(got), len(batch)))
	}
	for i, r := range got {
		res[i] = hrpc.RPCResult{Msg: r.Msg, Error: c.asGohbase(ctx, r.Error)}
		if r.Error != nil {
			continue
		}
		if err := plans[i].toLogical(r.Msg); err != nil {
			res[i] = hrpc.RPCResult{Error: err}
			allOK = false
		}
	}
	return res, allOK
}

// checkBatch is gohbase's check of a batch (rpc.go, SendBatch), with its messages: it fills res and
// says whether the batch may be sent.
func checkBatch(batch []hrpc.Call, res []hrpc.RPCResult) bool {
	ok := true
	table := batch[0].Table()
	seen := make(map[hrpc.Call]int, len(batch))
	for i, call := range batch {
		if j, dup := seen[call]; dup {
			res[i].Error = fmt.Errorf("duplicate call in batch at index %d", j)
			ok = false
			continue
		}
		seen[call] = i
		res[i].Error = gohbase.NotExecutedError
		if !bytes.Equal(call.Table(), table) {
			res[i].Error = fmt.Errorf("multiple tables in batch request: %q and %q", string(table), string(call.Table()))
			ok = false
		} else if !hrpc.CanBatch(call) {
			res[i].Error = errors.New("non-batchable call passed to SendBatch")
			ok = false
		}
	}
	return ok
}

// batchPlan is one call of a batch rebuilt on its salted key, and how its result is shown.
type batchPlan struct {
	call    hrpc.Call
	what    string
	table   string
	phys    []byte
	logical []byte
	get     *getPlan // a Get's plan (hidden column, existence); nil for a mutation
}

// rewriteBatched rebuilds one call of a batch: the batchable calls are Gets and mutations.
func (c *Client) rewriteBatched(call hrpc.Call) (batchPlan, error) {
	if err := call.Context().Err(); err != nil {
		return batchPlan{}, err
	}
	switch r := call.(type) {
	case *hrpc.Get:
		plan, err := c.rewriteGet(r)
		if err != nil {
			return batchPlan{}, err
		}
		return batchPlan{call: plan.get, what: "Get", table: string(r.Table()), phys: plan.phys,
			logical: cloneKey(r.Key()), get: &plan}, nil
	case *hrpc.Mutate:
		what := "SendBatch " + r.Description()
		nm, phys, err := c.rewriteMutate(what, r)
		if err != nil {
			return batchPlan{}, err
		}
		return batchPlan{call: nm, what: what, table: string(r.Table()), phys: phys, logical: cloneKey(r.Key())}, nil
	}
	return batchPlan{}, unsupported("SendBatch", string(call.Table()), fmt.Sprintf("call of type %T", call))
}

// toLogical puts the logical row key into a call's result message, after checking that its cells are
// of the row asked for, and hides what a Get hides.
func (p batchPlan) toLogical(msg proto.Message) error {
	var r *pb.Result
	switch m := msg.(type) {
	case *pb.GetResponse:
		r = m.GetResult()
	case *pb.MutateResponse:
		r = m.GetResult()
	case nil:
		return nil
	default:
		return fmt.Errorf("dropin: %s %q: unexpected response %T", p.what, p.table, msg)
	}
	if r == nil {
		return nil
	}
	for _, cell := range r.Cell {
		if !bytes.Equal(cell.Row, p.phys) {
			return fmt.Errorf("dropin: %s %q: the server returned a cell of row %q for row %q", p.what, p.table, cell.Row, p.phys)
		}
		cell.Row = p.logical
	}
	if g := p.get; g != nil && g.hide {
		kept := r.Cell[:0]
		for _, cell := range r.Cell {
			if !g.t.isVersion(cell.Family, cell.Qualifier) {
				kept = append(kept, cell)
			}
		}
		r.Cell = kept
	}
	if g := p.get; g != nil && g.exists {
		r.Exists, r.Cell = proto.Bool(len(r.Cell) > 0), nil
	}
	return nil
}
