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
// reads back as the Condition HBase expects; a deferred row's mutation says ASYNC_WAL.
func TestMultiCondWire(t *testing.T) {
	muts, conds := wireRows(t)
	call := &multiCond{batch: &condBatch{muts: muts, conds: conds, deferred: []bool{false, true}, stamps: []int64{0, 42}}, rows: []int{0, 1}}
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
	for i, want := range []pb.MutationProto_Durability{pb.MutationProto_USE_DEFAULT, pb.MutationProto_ASYNC_WAL} {
		if got := req.GetRegionAction()[i].GetAction()[0].GetMutation().GetDurability(); got != want {
			t.Errorf("region action %d: durability %v, want %v (deferred: %v)", i, got, want, i == 1)
		}
	}
}

// TestMultiCondBarrier: a call of two or more rows, one of them not deferred, sends its rows with
// ASYNC_WAL and ends with the WAL sync barrier, on its first row; a call of one row, or of deferred
// rows only, or without a barrier family, has none.
func TestMultiCondBarrier(t *testing.T) {
	muts, conds := wireRows(t)
	const async, sync = pb.MutationProto_ASYNC_WAL, pb.MutationProto_USE_DEFAULT
	for _, tt := range []struct {
		name     string
		rows     []int
		deferred []bool
		family   string
		want     []pb.MutationProto_Durability // of the rows
		barrier  bool
	}{
		{"two rows", []int{0, 1}, []bool{false, false}, "f", []pb.MutationProto_Durability{async, async}, true},
		{"one deferred", []int{0, 1}, []bool{true, false}, "f", []pb.MutationProto_Durability{async, async}, true},
		{"all deferred", []int{0, 1}, []bool{true, true}, "f", []pb.MutationProto_Durability{async, async}, false},
		{"one row", []int{1}, []bool{false, false}, "f", []pb.MutationProto_Durability{sync}, false},
		{"no family", []int{0, 1}, []bool{false, true}, "", []pb.MutationProto_Durability{sync, async}, false},
	} {
		call := &multiCond{batch: &condBatch{muts: muts, conds: conds, deferred: tt.deferred, stamps: []int64{0, 42}, syncFamily: tt.family}, rows: tt.rows}
		wire, err := proto.MarshalOptions{AllowPartial: true}.Marshal(call.ToProto())
		if err != nil {
			t.Fatal(err)
		}
		var req pb.MultiRequest
		if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(wire, &req); err != nil {
			t.Fatal(err)
		}
		ras := req.GetRegionAction()
		if call.barrier.Load() != tt.barrier || len(ras) != len(tt.rows)+btoi(tt.barrier) {
			t.Fatalf("%s: %d region actions, barrier %v; want %d rows, barrier %v", tt.name, len(ras), call.barrier.Load(), len(tt.rows), tt.barrier)
		}
		for j, want := range tt.want {
			if got := ras[j].GetAction()[0].GetMutation().GetDurability(); got != want {
				t.Errorf("%s: row %d durability %v, want %v", tt.name, j, got, want)
			}
		}
		if !tt.barrier {
			continue
		}
		b := ras[len(ras)-1]
		m := b.GetAction()[0].GetMutation()
		cv := m.GetColumnValue()
		if b.GetAtomic() || len(b.ProtoReflect().GetUnknown()) != 0 || m.GetDurability() != sync || m.GetMutateType() != pb.MutationProto_DELETE ||
			!bytes.Equal(m.GetRow(), muts[tt.rows[0]].Key) || len(cv) != 1 || string(cv[0].GetFamily()) != tt.family ||
			len(cv[0].GetQualifierValue()) != 1 || string(cv[0].GetQualifierValue()[0].GetQualifier()) != syncQualifier ||
			cv[0].GetQualifierValue()[0].GetTimestamp() != 1 || cv[0].GetQualifierValue()[0].GetDeleteType() != pb.MutationProto_DELETE_ONE_VERSION {
			t.Errorf("%s: barrier %v, want a synced delete of %s:%q stamped 1 on the first row, without condition", tt.name, b, tt.family, syncQualifier)
		}
	}
}

// wireRows are the two rows of the wire tests, a put and a row delete, and their conditions on d:q,
// "0" for the first and "1" for the second.
func wireRows(t *testing.T) ([]backends.Mutation, [][]byte) {
	t.Helper()
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
	return muts, conds
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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
	got, synced, err := multiProcessed(resp, 5, false)
	if err != nil || synced != nil {
		t.Fatal(err, synced)
	}
	if !got[0].processed || got[1].processed || got[4].processed || got[0].err != nil || got[4].err != nil {
		t.Errorf("answers = %+v", got)
	}
	if classify(got[2].err) != kindRetryable || !errors.Is(wrapErr("x", "t", got[3].err), backends.ErrInvalidArgument) {
		t.Errorf("exceptions read as %v, %v", got[2].err, got[3].err)
	}
	if _, _, err := multiProcessed(resp, 4, false); err == nil {
		t.Error("5 results for 4 actions: no error")
	}
	if _, _, err := multiProcessed(resp, 5, true); err == nil {
		t.Error("5 results for 5 actions and a barrier: no error")
	}

	// The barrier's answer: a result (synced), an exception of its action or of its region.
	barrier := func(roe *pb.ResultOrException, region string) *pb.RegionActionResult {
		r := &pb.RegionActionResult{}
		if roe != nil {
			r.ResultOrException = []*pb.ResultOrException{roe}
		}
		if region != "" {
			r.Exception = &pb.NameBytesPair{Name: proto.String(region), Value: []byte("trace")}
		}
		return r
	}
	for _, tt := range []struct {
		name   string
		result *pb.RegionActionResult
		kind   errKind // of the barrier's failure; -1: synced
	}{
		{"applied", barrier(&pb.ResultOrException{Index: proto.Uint32(1), Result: &pb.Result{}}, ""), -1},
		{"action failed", barrier(&pb.ResultOrException{Index: proto.Uint32(1),
			Exception: &pb.NameBytesPair{Name: proto.String("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException")}}, ""), kindInvalid},
		{"region failed", barrier(nil, "org.apache.hadoop.hbase.NotServingRegionException"), kindRetryable},
		{"no result", barrier(nil, ""), kindOther},
	} {
		resp := &pb.MultiResponse{RegionActionResult: []*pb.RegionActionResult{result(&yes, ""), result(&no, ""), tt.result}}
		got, synced, err := multiProcessed(resp, 2, true)
		if err != nil || !got[0].processed || got[1].processed {
			t.Errorf("%s: answers %+v, %v", tt.name, got, err)
		}
		switch {
		case tt.kind < 0 && synced != nil:
			t.Errorf("%s: barrier failed: %v", tt.name, synced)
		case tt.kind >= 0 && (synced == nil || classify(synced) != tt.kind):
			t.Errorf("%s: barrier failure %v, want kind %v", tt.name, synced, tt.kind)
		}
	}
}
