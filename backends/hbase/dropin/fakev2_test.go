package dropin

import (
	"context"
	"io"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// The fake's methods of today's gohbase.Client: conditional writes, batches, ScanV2 and region caching.

func (f *fakeHBase) CheckAndPutWithCompareType(p *hrpc.Mutate, _, _ string, _ []byte, _ pb.CompareType) (bool, error) {
	f.record(p)
	return true, nil
}

// CheckAndMutate records the request and applies its mutation, the condition held.
func (f *fakeHBase) CheckAndMutate(cam *hrpc.CheckAndMutate) (bool, error) {
	f.record(cam)
	if _, err := f.mutate(cam.Mutate); err != nil {
		return false, err
	}
	return true, nil
}

func (f *fakeHBase) CacheRegions(table []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cached = append(f.cached, string(table))
	return nil
}

// SendBatch runs each call as the fake's Get or mutation, and answers with the message gohbase's
// batch would (a GetResponse, a MutateResponse); a call in f.batchFail fails with errFakeScan and
// makes allOK false.
func (f *fakeHBase) SendBatch(_ context.Context, batch []hrpc.Call) ([]hrpc.RPCResult, bool) {
	res := make([]hrpc.RPCResult, len(batch))
	ok := true
	for i, call := range batch {
		if f.batchFails(call.Key()) {
			f.record(call)
			res[i].Error, ok = errFakeScan, false
			continue
		}
		switch r := call.(type) {
		case *hrpc.Get:
			g, _ := f.Get(r)
			res[i].Msg = &pb.GetResponse{Result: pbResult(g)}
		case *hrpc.Mutate:
			m, _ := f.mutate(r)
			res[i].Msg = &pb.MutateResponse{Result: pbResult(m)}
		default:
			res[i].Error, ok = gohbase.NotExecutedError, false
		}
	}
	return res, ok
}

func (f *fakeHBase) batchFails(key []byte) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.batchFail != nil && string(key) == string(f.batchFail)
}

func pbResult(r *hrpc.Result) *pb.Result {
	out := &pb.Result{}
	for _, c := range r.Cells {
		out.Cell = append(out.Cell, (*pb.Cell)(c))
	}
	if len(out.Cell) == 0 {
		out.Exists = proto.Bool(false)
	}
	return out
}

// ScanV2 answers the rows of the range in responses of NumberOfRows rows (every row, when unset);
// with TrackScanMetrics, its metrics count the rows it returned as ROWS_SCANNED.
func (f *fakeHBase) ScanV2(s *hrpc.Scan) hrpc.ScannerV2 {
	return &fakeScannerV2{sc: f.Scan(s).(*fakeScanner)}
}

type fakeScannerV2 struct{ sc *fakeScanner }

func (v *fakeScannerV2) Next() (*hrpc.ScanResponseV2, error) { return v.Scan(0) }

func (v *fakeScannerV2) Scan(rows uint32) (*hrpc.ScanResponseV2, error) {
	if rows == 0 {
		rows = v.sc.s.NumberOfRows()
	}
	resp := &hrpc.ScanResponseV2{}
	for uint32(len(resp.Results)) < rows {
		r, err := v.sc.Next()
		if err == io.EOF && len(resp.Results) > 0 {
			break
		}
		if err != nil {
			return nil, err
		}
		var res hrpc.ResultV2
		for _, c := range r.Cells {
			cell, err := hrpc.NewCellV2(c.Row, c.Family, c.Qualifier, *c.Timestamp, c.Value, *c.CellType)
			if err != nil {
				return nil, err
			}
			res.Cells = append(res.Cells, cell)
		}
		resp.Results = append(resp.Results, res)
	}
	return resp, nil
}

func (v *fakeScannerV2) Close() error                     { return v.sc.Close() }
func (v *fakeScannerV2) GetScanMetrics() map[string]int64 { return v.sc.GetScanMetrics() }

// GetScanMetrics counts the rows the scanner returned, as HBase's ROWS_SCANNED would without filters.
func (sc *fakeScanner) GetScanMetrics() map[string]int64 {
	if !sc.s.TrackScanMetrics() {
		return nil
	}
	return map[string]int64{"ROWS_SCANNED": int64(sc.pos), "ROWS_FILTERED": 0}
}
