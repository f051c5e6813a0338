package hbase

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
)

// TestMultiPutCellBlocks sends a multiPut through gohbase's own region client to a listener that
// reads the request off the wire as a region server does. gohbase sends cell blocks only for a call
// whose SerializeCellBlocks has the signature of its own (unexported) interface, and falls back to
// ToProto's protobuf cells without a word otherwise: this fails if that happens, whatever the
// signature gohbase asks for next.
func TestMultiPutCellBlocks(t *testing.T) {
	muts := []backends.Mutation{
		{Key: []byte("a"), Cells: []backends.Cell{{Family: "d", Qualifier: "q", Value: []byte("1"), Timestamp: 7}}},
		{Key: []byte("b"), Cells: []backends.Cell{
			{Family: "d", Qualifier: "q", Value: []byte("2")},
			{Family: "d", Qualifier: "r", Value: bytes.Repeat([]byte("v"), 100)},
		}},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type sent struct {
		header *pb.RequestHeader
		req    *pb.MultiRequest
		block  []byte
		err    error
	}
	got := make(chan sent, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- sent{err: err}
			return
		}
		defer conn.Close()
		h, r, b, err := readRequest(bufio.NewReader(conn))
		got <- sent{h, r, b, err}
	}()

	rc := region.NewClient(ln.Addr().String(), region.RegionClient, &region.RegionClientOptions{
		ReadTimeout: 10 * time.Second, Logger: slog.New(slog.DiscardHandler), // it logs the closed connection
	})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rc.Dial(ctx); err != nil {
		t.Fatal(err)
	}
	call := &multiPut{callBase: newCallBase(ctx, []byte("t"), muts[0].Key), muts: muts, rows: []int{0, 1}}
	call.SetRegion(region.NewInfo(1, nil, []byte("t"), []byte("t,,1"), nil, nil))
	rc.QueueRPC(call)

	var s sent
	select {
	case s = <-got:
	case <-ctx.Done():
		t.Fatal("the region client sent nothing")
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	if s.header.GetMethodName() != "Multi" {
		t.Fatalf("method %q, want Multi", s.header.GetMethodName())
	}
	if s.header.GetCellBlockMeta().GetLength() == 0 || int(s.header.GetCellBlockMeta().GetLength()) != len(s.block) {
		t.Fatalf("cell block meta %v with %d bytes after the request: gohbase sent protobuf cells", s.header.GetCellBlockMeta(), len(s.block))
	}
	actions := s.req.GetRegionAction()[0].GetAction()
	if len(actions) != len(muts) {
		t.Fatalf("%d actions, want %d", len(actions), len(muts))
	}
	for i, a := range actions {
		if m := a.GetMutation(); len(m.GetColumnValue()) != 0 || int(m.GetAssociatedCellCount()) != len(muts[i].Cells) {
			t.Errorf("action %d: %d protobuf columns, %d cells in the block; want 0 and %d", i, len(m.GetColumnValue()), m.GetAssociatedCellCount(), len(muts[i].Cells))
		}
	}
	if rows := decodeCellBlock(t, s.block); len(rows) != len(muts) || len(rows[1].Cells) != 2 {
		t.Errorf("cell block holds %v, want the cells of %v", rows, muts)
	}
	select {
	case res := <-call.ResultChan():
		if res.Error == nil {
			t.Error("the call succeeded against a server that closed the connection")
		}
	case <-ctx.Done():
		t.Fatal("no result after the connection closed")
	}
}

// readRequest reads the connection preamble and one call as HBase's RPC server does: "HBas", the
// version and auth bytes, the length-prefixed ConnectionHeader; then the call's total length, the
// varint-delimited RequestHeader and request, and the cell block filling the rest.
func readRequest(r *bufio.Reader) (*pb.RequestHeader, *pb.MultiRequest, []byte, error) {
	pre := make([]byte, 6)
	if _, err := io.ReadFull(r, pre); err != nil {
		return nil, nil, nil, err
	}
	if _, err := readFrame(r); err != nil { // the ConnectionHeader
		return nil, nil, nil, err
	}
	frame, err := readFrame(r)
	if err != nil {
		return nil, nil, nil, err
	}
	var header pb.RequestHeader
	rest, err := consumeDelimited(frame, &header)
	if err != nil {
		return nil, nil, nil, err
	}
	var req pb.MultiRequest
	block, err := consumeDelimited(rest, &req)
	if err != nil {
		return nil, nil, nil, err
	}
	return &header, &req, block, nil
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}

func consumeDelimited(b []byte, m proto.Message) ([]byte, error) {
	n, l := protowire.ConsumeVarint(b)
	if l < 0 {
		return nil, protowire.ParseError(l)
	}
	b = b[l:]
	if uint64(len(b)) < n {
		return nil, io.ErrUnexpectedEOF
	}
	return b[n:], proto.Unmarshal(b[:n], m)
}

var _ hrpc.Call = (*multiPut)(nil)
