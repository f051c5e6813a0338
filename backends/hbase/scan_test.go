package hbase

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
)

func TestCoversUpTo(t *testing.T) {
	tests := []struct {
		end, hi string
		want    bool
	}{
		{"", "", true}, {"", "m", true}, {"m", "", false}, {"m", "m", true}, {"n", "m", true}, {"l", "m", false},
	}
	for _, tc := range tests {
		if got := coversUpTo([]byte(tc.end), []byte(tc.hi)); got != tc.want {
			t.Errorf("coversUpTo(%q, %q) = %v, want %v", tc.end, tc.hi, got, tc.want)
		}
	}
}

// result builds a scan result of one cell, partial or not.
func result(row string, partial bool) *pb.Result {
	return &pb.Result{
		Cell:    []*pb.Cell{{Row: []byte(row), Family: []byte("d"), Qualifier: []byte(fmt.Sprint(partial)), CellType: pb.CellType_PUT.Enum()}},
		Partial: proto.Bool(partial),
	}
}

// cellBlock is batch as a server sends it to a client that names a cell codec: the rows' cells in
// the cell block, their counts and partial flags in the response; decoded by gohbase's own
// hrpc.Scan.DeserializeCellBlocks, as the region client does.
func cellBlock(t *testing.T, batch []*pb.Result) (*pb.ScanResponse, *hrpc.ScanResponseV2) {
	t.Helper()
	msg := &pb.ScanResponse{}
	var block []byte
	for _, r := range batch {
		m := backends.Mutation{}
		for _, c := range r.Cell {
			m.Key = c.Row
			m.Cells = append(m.Cells, backends.Cell{Family: string(c.Family), Qualifier: string(c.Qualifier), Value: c.Value, Timestamp: 1})
		}
		block = appendCellBlock(block, m)
		msg.CellsPerResult = append(msg.CellsPerResult, uint32(len(r.Cell)))
		msg.PartialFlagPerResult = append(msg.PartialFlagPerResult, r.GetPartial())
	}
	sc := new(hrpc.Scan)
	n, err := sc.DeserializeCellBlocks(msg, block)
	if err != nil || int(n) != len(block) {
		t.Fatalf("DeserializeCellBlocks read %d of %d bytes: %v", n, len(block), err)
	}
	return msg, sc.Response
}

func TestScanConsume(t *testing.T) {
	tests := []struct {
		name    string
		r       backends.Range
		reverse bool
		limit   int
		batches [][]*pb.Result
		want    []string // "key:cells"
		stopped bool
	}{
		{
			name:    "partials coalesce across responses",
			batches: [][]*pb.Result{{result("a", false), result("b", true)}, {result("b", true)}, {result("b", false), result("c", false)}},
			want:    []string{"a:1", "b:3", "c:1"},
		},
		{
			name:    "reverse drops the row equal to End and stops below Start",
			r:       backends.Range{Start: []byte("b"), End: []byte("d")},
			reverse: true,
			batches: [][]*pb.Result{{result("d", false), result("c", false), result("b", false), result("a", false)}},
			want:    []string{"c:1", "b:1"},
			stopped: true,
		},
		{
			name:    "forward stops at End",
			r:       backends.Range{End: []byte("c")},
			batches: [][]*pb.Result{{result("a", false), result("b", false), result("c", false)}},
			want:    []string{"a:1", "b:1"},
			stopped: true,
		},
		{
			name:    "limit",
			limit:   2,
			batches: [][]*pb.Result{{result("a", false), result("b", false), result("c", false)}},
			want:    []string{"a:1", "b:1"},
			stopped: true,
		},
		{
			name:    "heartbeat and empty results",
			batches: [][]*pb.Result{{}, {{Cell: nil}}, {result("a", false)}},
			want:    []string{"a:1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			s := &scanState{
				r: tc.r, reverse: tc.reverse, left: -1, cursor: tc.r.Start, hi: tc.r.End,
				yield: func(row backends.Row, err error) bool {
					got = append(got, fmt.Sprintf("%s:%d", row.Key, len(row.Cells)))
					return true
				},
			}
			if tc.limit > 0 {
				s.left = tc.limit
			}
			var pending []hrpc.CellV2
			for _, batch := range tc.batches {
				var err error
				msg, resp := cellBlock(t, batch)
				if pending, err = s.consume(msg, resp, pending); err != nil {
					t.Fatal(err)
				}
				if s.stopped {
					break
				}
			}
			if len(pending) > 0 && !s.stopped {
				s.emit(pending)
			}
			if !slices.Equal(got, tc.want) || s.stopped != tc.stopped {
				t.Errorf("rows %v stopped=%v, want %v stopped=%v", got, s.stopped, tc.want, tc.stopped)
			}
		})
	}
}

func TestScanConsumerStop(t *testing.T) {
	n := 0
	s := &scanState{left: -1, yield: func(backends.Row, error) bool { n++; return n < 2 }}
	msg, resp := cellBlock(t, []*pb.Result{result("a", false), result("b", false), result("c", false)})
	if _, err := s.consume(msg, resp, nil); err != nil {
		t.Fatal(err)
	}
	if n != 2 || !s.stopped || string(s.lastKey) != "b" {
		t.Errorf("yielded %d rows, stopped=%v, lastKey=%q; want 2, true, b", n, s.stopped, s.lastKey)
	}
	s.resumeAfter([]byte("b"))
	if !bytes.Equal(s.cursor, []byte("b\x00")) {
		t.Errorf("forward resume cursor = %q", s.cursor)
	}
	s.reverse = true
	s.resumeAfter([]byte("b"))
	if !bytes.Equal(s.hi, []byte("b")) {
		t.Errorf("reverse resume hi = %q", s.hi)
	}
}

// TestScanProtobufResults: rows a server put in the response's protobuf Results, which gohbase no
// longer reads into the call's Response, are an error, not rows silently dropped.
func TestScanProtobufResults(t *testing.T) {
	s := &scanState{table: "t", left: -1, yield: func(backends.Row, error) bool { return true }}
	msg := &pb.ScanResponse{Results: []*pb.Result{result("a", false)}}
	if _, err := s.consume(msg, &hrpc.ScanResponseV2{}, nil); err == nil {
		t.Fatal("consume took a response with protobuf results")
	}
}

func TestScanRowsPerRPC(t *testing.T) {
	tests := []struct {
		batch, left int
		extra       bool
		want        uint32
		first, read int
	}{
		{256, -1, false, 256, 0, 0}, // no limit: the batch
		{256, 10, false, 10, 0, 0},  // limit pushdown
		{256, 10, true, 11, 0, 0},   // one more for the row equal to hi
		{5, 10, true, 5, 0, 0},      // the batch still caps
		{256, 0, false, 1, 0, 0},    // never zero rows (zero would read nothing and keep the scanner)
		// Growing batches (first, read): the first batch, then as many rows as were read, up to the batch.
		{256, -1, false, 1, 1, 0},
		{256, -1, false, 1, 1, 1},
		{256, -1, false, 2, 1, 2},
		{256, -1, false, 8, 8, 3},
		{256, -1, false, 100, 8, 100},
		{256, -1, false, 256, 8, 1000},
		{4, -1, false, 4, 8, 0},   // the batch caps the first batch too
		{256, 3, false, 3, 1, 97}, // and the limit caps the growth
		{256, 3, true, 2, 2, 0},   // the first batch caps the limit plus the row equal to hi
	}
	for _, tc := range tests {
		s := &scanState{batch: tc.batch, left: tc.left, first: tc.first, read: tc.read}
		if got := s.rows(tc.extra); got != tc.want {
			t.Errorf("rows(batch=%d, left=%d, first=%d, read=%d, extra=%v) = %d, want %d",
				tc.batch, tc.left, tc.first, tc.read, tc.extra, got, tc.want)
		}
	}
}
