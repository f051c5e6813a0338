package hbase

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
)

// resendClient answers a conditional Multi as a server would after gohbase wrote it writes times
// (a connection that failed after the call was written makes gohbase write it again): every row's
// condition failed, which after a second writing may be the first one's own write.
type resendClient struct {
	stubClient
	writes int
}

func (c *resendClient) SendRPC(call hrpc.Call) (proto.Message, error) {
	var req *pb.MultiRequest
	for range c.writes {
		call.SetRegion(nil) // gohbase routes the call before each sending
		req = call.ToProto().(*pb.MultiRequest)
	}
	resp := &pb.MultiResponse{}
	for range req.GetRegionAction() {
		r := &pb.RegionActionResult{}
		r.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, regionActionResProcessed, protowire.VarintType), 0))
		wire, _ := proto.Marshal(r)
		out := &pb.RegionActionResult{}
		if err := proto.Unmarshal(wire, out); err != nil {
			return nil, err
		}
		resp.RegionActionResult = append(resp.RegionActionResult, out)
	}
	return resp, nil
}

// TestCheckAndMutateBatchResent: a row whose condition failed is "not applied" only if the call was
// written once; written again, its outcome is unknown (a retryable row error), since the first
// writing may have applied it. The chaos test saw fresh rows' put-if-absent answered "not applied"
// under SIGKILLs.
func TestCheckAndMutateBatchResent(t *testing.T) {
	for _, tt := range []struct {
		writes  int
		unknown bool
	}{{1, false}, {2, true}} {
		b, err := New(&resendClient{writes: tt.writes}, stubAdmin{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		muts, conds := wireRows(t)
		muts[1] = backends.Mutation{Key: []byte("b"), Cells: muts[0].Cells}
		out := &condOutcomes{applied: make([]bool, 2), errs: make([]error, 2)}
		batch := &condBatch{table: "t", muts: muts, conds: conds, deferred: []bool{true, true}, stamps: []int64{0, 0}, out: out}
		var stale atomic.Bool
		if resend := b.sendConds(context.Background(), batch, []int{0, 1}, &stale); len(resend) != 0 {
			t.Fatalf("writes %d: rows %v to send again", tt.writes, resend)
		}
		applied, rowErrs := out.applied, out.errs
		for i := range muts {
			if applied[i] {
				t.Errorf("writes %d: row %d applied", tt.writes, i)
			}
			rowErr := rowErrs[i]
			if got := rowErr != nil && errors.Is(rowErr, backends.ErrRetryable); got != tt.unknown {
				t.Errorf("writes %d: row %d error %v; want an unknown outcome (retryable): %v", tt.writes, i, rowErr, tt.unknown)
			}
		}
	}
}
