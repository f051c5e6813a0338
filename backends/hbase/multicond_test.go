package hbase

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
)

// TestMultiCondWire: the condition a RegionAction carries as raw field 4 survives marshalling and
// reads back as the Condition HBase expects.
func TestMultiCondWire(t *testing.T) {
	muts := []backends.Mutation{
		{Key: []byte("a"), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("v")}}},
		{Key: []byte("b"), Delete: true},
	}
	conds := make([][]byte, len(muts))
	for i, m := range muts {
		var err error
		if conds[i], err = conditionProto(backends.Condition{Family: "d", Qualifier: "q", Value: []byte{byte('0' + i)}}, m.Key); err != nil {
			t.Fatal(err)
		}
	}
	call := &multiCond{batch: &condBatch{muts: muts, conds: conds, stamps: []int64{0, 42}}, rows: []int{0, 1}}
	wire, err := proto.MarshalOptions{AllowPartial: true}.Marshal(call.ToProto()) // no region routed here
	if err != nil {
		t.Fatal(err)
	}
	var req pb.MultiRequest
	if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(wire, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.GetRegionAction()) != 2 || call.sent.Load() != 2 {
		t.Fatalf("%d region actions, %d sent; want 2", len(req.GetRegionAction()), call.sent.Load())
	}
	for i, ra := range req.GetRegionAction() {
		raw := ra.ProtoReflect().GetUnknown()
		num, typ, n := protowire.ConsumeTag(raw)
		body, m := protowire.ConsumeBytes(raw[n:])
		var c pb.Condition
		if num != 4 || typ != protowire.BytesType || m != len(raw)-n || proto.Unmarshal(body, &c) != nil {
			t.Fatalf("region action %d: raw fields %x, want only the condition as field 4", i, raw)
		}
		if !ra.GetAtomic() || len(ra.GetAction()) != 1 || !bytes.Equal(c.GetRow(), muts[i].Key) || string(c.GetFamily()) != "d" ||
			c.GetCompareType() != pb.CompareType_EQUAL || !bytes.Equal(ra.GetAction()[0].GetMutation().GetRow(), muts[i].Key) {
			t.Errorf("region action %d = %v with condition %v", i, ra, &c)
		}
	}
	if got := req.GetRegionAction()[1].GetAction()[0].GetMutation().GetTimestamp(); got != 42 {
		t.Errorf("delete stamped %d, want 42", got)
	}
}

func TestMultiProcessed(t *testing.T) {
	result := func(processed *bool, exception string) *pb.RegionActionResult {
		r := &pb.RegionActionResult{}
		if exception != "" {
			r.Exception = &pb.NameBytesPair{Name: proto.String(exception), Value: []byte("trace")}
		}
		if processed != nil {
			v := uint64(0)
			if *processed {
				v = 1
			}
			r.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), v))
		}
		// Through the wire, as the server's answer comes.
		b, _ := proto.Marshal(r)
		out := &pb.RegionActionResult{}
		if err := proto.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	yes, no := true, false
	resp := &pb.MultiResponse{RegionActionResult: []*pb.RegionActionResult{
		result(&yes, ""), result(&no, ""), result(nil, "org.apache.hadoop.hbase.NotServingRegionException"),
		result(nil, "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"), result(nil, ""),
	}}
	got, err := multiProcessed(resp, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !got[0].processed || got[1].processed || got[4].processed || got[0].err != nil || got[4].err != nil {
		t.Errorf("answers = %+v", got)
	}
	if classify(got[2].err) != kindRetryable || !errors.Is(wrapErr("x", "t", got[3].err), backends.ErrInvalidArgument) {
		t.Errorf("exceptions read as %v, %v", got[2].err, got[3].err)
	}
	if _, err := multiProcessed(resp, 4); err == nil {
		t.Error("5 results for 4 actions: no error")
	}
}
