package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
)

// decodeCellBlock reads KeyValueCodec cells back, as the server does.
func decodeCellBlock(t *testing.T, b []byte) []backends.Mutation {
	t.Helper()
	var out []backends.Mutation
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("cell block: %d trailing bytes", len(b))
		}
		total := int(binary.BigEndian.Uint32(b))
		kv := b[4 : 4+total]
		b = b[4+total:]
		keyLen := int(binary.BigEndian.Uint32(kv))
		valLen := int(binary.BigEndian.Uint32(kv[4:]))
		if 8+keyLen+valLen != total {
			t.Fatalf("cell of %d bytes holds a key of %d and a value of %d", total, keyLen, valLen)
		}
		key := kv[8 : 8+keyLen]
		rowLen := int(binary.BigEndian.Uint16(key))
		row := key[2 : 2+rowLen]
		famLen := int(key[2+rowLen])
		fam := key[3+rowLen : 3+rowLen+famLen]
		qual := key[3+rowLen+famLen : keyLen-9]
		ts := int64(binary.BigEndian.Uint64(key[keyLen-9:]))
		if typ := key[keyLen-1]; typ != keyValuePut {
			t.Fatalf("cell type %d, want a put", typ)
		}
		if ts == math.MaxInt64 {
			ts = 0
		}
		c := backends.Cell{Family: string(fam), Qualifier: string(qual), Value: kv[8+keyLen:], Timestamp: ts}
		if n := len(out); n > 0 && bytes.Equal(out[n-1].Key, row) {
			out[n-1].Cells = append(out[n-1].Cells, c)
		} else {
			out = append(out, backends.Mutation{Key: row, Cells: []backends.Cell{c}})
		}
	}
	return out
}

func TestMultiPutRequest(t *testing.T) {
	muts := []backends.Mutation{
		{Key: []byte("c"), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("3")}}},
		{Key: []byte("a"), Cells: []backends.Cell{
			{Family: "d", Qualifier: "q", Value: []byte("1"), Timestamp: 7},
			{Family: "m", Qualifier: "", Value: nil, Timestamp: 9},
		}},
		{Key: []byte("b"), Cells: []backends.Cell{{Family: "d", Qualifier: "long-qualifier", Value: bytes.Repeat([]byte("v"), 300)}}},
	}
	rows := []int{1, 2, 0} // sorted by key: a, b, c
	tests := []struct {
		name   string
		region hrpc.RegionInfo
		want   int // rows in the request
	}{
		{"no region set", nil, 3},
		{"last region", region.NewInfo(1, nil, []byte("t"), []byte("t,,1"), nil, nil), 3},
		{"region ends after the rows", region.NewInfo(1, nil, []byte("t"), []byte("t,,1"), nil, []byte("d")), 3},
		{"region ends inside", region.NewInfo(1, nil, []byte("t"), []byte("t,,1"), []byte("a"), []byte("c")), 2},
		{"region ends at the second row", region.NewInfo(1, nil, []byte("t"), []byte("t,,1"), nil, []byte("b")), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &multiPut{callBase: newCallBase(context.Background(), []byte("t"), muts[rows[0]].Key), muts: muts, rows: rows}
			c.SetRegion(tt.region)
			msg, blocks, size := c.SerializeCellBlocks(nil)
			if got := int(c.sent.Load()); got != tt.want {
				t.Fatalf("sent %d rows, want %d", got, tt.want)
			}
			req := msg.(*pb.MultiRequest)
			if len(req.RegionAction) != 1 {
				t.Fatalf("%d region actions, want 1", len(req.RegionAction))
			}
			if tt.region != nil && !bytes.Equal(req.RegionAction[0].GetRegion().GetValue(), tt.region.Name()) {
				t.Errorf("region %q, want %q", req.RegionAction[0].GetRegion().GetValue(), tt.region.Name())
			}
			actions := req.RegionAction[0].Action
			if len(actions) != tt.want {
				t.Fatalf("%d actions, want %d", len(actions), tt.want)
			}
			var wantRows []backends.Mutation
			for j, a := range actions {
				m := muts[rows[j]]
				wantRows = append(wantRows, m)
				if a.GetIndex() != uint32(j+1) || !bytes.Equal(a.GetMutation().GetRow(), m.Key) ||
					a.GetMutation().GetMutateType() != pb.MutationProto_PUT ||
					int(a.GetMutation().GetAssociatedCellCount()) != len(m.Cells) || len(a.GetMutation().ColumnValue) != 0 {
					t.Errorf("action %d = %v, want row %q with %d cells in the cell block", j, a, m.Key, len(m.Cells))
				}
			}
			var block []byte
			for _, b := range blocks {
				block = append(block, b...)
			}
			if int(size) != len(block) {
				t.Errorf("cell block size %d, holds %d bytes", size, len(block))
			}
			got := decodeCellBlock(t, block)
			if !slices.EqualFunc(got, wantRows, func(x, y backends.Mutation) bool {
				return bytes.Equal(x.Key, y.Key) && slices.EqualFunc(x.Cells, y.Cells, func(a, b backends.Cell) bool {
					return a.Family == b.Family && a.Qualifier == b.Qualifier && bytes.Equal(a.Value, b.Value) && a.Timestamp == b.Timestamp
				})
			}) {
				t.Errorf("cell block holds %v, want %v", got, wantRows)
			}

			plain := c.ToProto().(*pb.MultiRequest).RegionAction[0].Action
			if len(plain) != tt.want {
				t.Fatalf("ToProto: %d actions, want %d", len(plain), tt.want)
			}
			for j, a := range plain {
				if want := mutationProto(muts[rows[j]], 0); !proto.Equal(a.GetMutation(), want) {
					t.Errorf("ToProto action %d = %v, want %v", j, a.GetMutation(), want)
				}
			}
		})
	}
}

func TestMultiWritten(t *testing.T) {
	exc := &pb.NameBytesPair{Name: proto.String("org.apache.hadoop.hbase.NotServingRegionException")}
	ok := func(i uint32) *pb.ResultOrException {
		return &pb.ResultOrException{Index: proto.Uint32(i), Result: &pb.Result{}}
	}
	failed := func(i uint32) *pb.ResultOrException {
		return &pb.ResultOrException{Index: proto.Uint32(i), Exception: exc}
	}
	tests := []struct {
		name    string
		results []*pb.RegionActionResult
		want    []bool
		wantErr bool
	}{
		{"all written", []*pb.RegionActionResult{{ResultOrException: []*pb.ResultOrException{ok(2), ok(1), ok(3)}}}, []bool{true, true, true}, false},
		{"one row refused", []*pb.RegionActionResult{{ResultOrException: []*pb.ResultOrException{ok(1), failed(2), ok(3)}}}, []bool{true, false, true}, false},
		{"a row with no outcome is not written", []*pb.RegionActionResult{{ResultOrException: []*pb.ResultOrException{ok(1), ok(3)}}}, []bool{true, false, true}, false},
		{"region refused", []*pb.RegionActionResult{{Exception: exc}}, []bool{false, false, false}, false},
		{"index out of range", []*pb.RegionActionResult{{ResultOrException: []*pb.ResultOrException{ok(4)}}}, nil, true},
		{"index zero", []*pb.RegionActionResult{{ResultOrException: []*pb.ResultOrException{ok(0)}}}, nil, true},
		{"two regions", []*pb.RegionActionResult{{}, {}}, nil, true},
		{"no region", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := multiWritten(&pb.MultiResponse{RegionActionResult: tt.results}, 3)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("written = %v, want %v", got, tt.want)
			}
		})
	}
}
