package dropin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/salting"
)

// ScanV2 is Scan in gohbase's lower-level form: each bucket is read by gohbase's ScanV2 scanner,
// the buckets' results (rows, or parts of rows where the server returned partial results) are merged
// by logical key, and the merged results are handed back in responses. gohbase's responses are one
// region server's answers; a merge of buckets has no such unit, so a response holds the next
// results in logical order, at most NumberOfRows of them (Scan(rows): rows) and about MaxResultSize
// bytes of cells, as the server bounds its answers. Region is nil, since the results come from
// several regions, and MoreResultsInRegion says whether more results follow (false: the scan is
// done). Partial results are passed on unmerged, in order, as gohbase's ScannerV2 passes them.
func (c *Client) ScanV2(s *hrpc.Scan) hrpc.ScannerV2 {
	if s == nil {
		return &scannerV2{err: fmt.Errorf("dropin: ScanV2: %w: nil request", backends.ErrInvalidArgument)}
	}
	ctx := s.Context()
	if err := c.begin(ctx); err != nil {
		return &scannerV2{err: err}
	}
	seq, p, err := c.scanV2(s)
	if err != nil {
		return &scannerV2{err: c.asGohbase(ctx, err)}
	}
	next, stop := iter.Pull2(seq)
	sc := &scannerV2{ctx: ctx, next: next, stop: stop, metrics: p.metrics, rows: s.NumberOfRows(),
		size: p.want.GetScan().GetMaxResultSize(), fix: func(err error) error { return c.asGohbase(ctx, err) }}
	return sc
}

func (c *Client) scanV2(s *hrpc.Scan) (iter.Seq2[hrpc.ResultV2, error], scanPlan, error) {
	p, err := c.planScan(s)
	if err != nil {
		return nil, p, err
	}
	if p.reversed {
		return resultsV2(p.reverse), p, nil
	}
	if p.empty {
		return func(func(hrpc.ResultV2, error) bool) {}, p, nil
	}
	t, hide := p.t, p.hide
	stream := func(ctx context.Context, r salting.BucketRange) iter.Seq2[hrpc.ResultV2, error] {
		return func(yield func(hrpc.ResultV2, error) bool) {
			bs, err := p.bucketScan(ctx, r)
			if err != nil {
				yield(hrpc.ResultV2{}, fmt.Errorf("bucket %d: %w", r.Bucket, err))
				return
			}
			sc := c.inner.ScanV2(bs)
			defer func() {
				sc.Close()
				p.metrics.add(sc.GetScanMetrics())
			}()
			for {
				resp, err := sc.Next()
				if errors.Is(err, io.EOF) {
					return
				}
				if err != nil {
					yield(hrpc.ResultV2{}, fmt.Errorf("bucket %d: %w", r.Bucket, gohbaseError{err}))
					return
				}
				for _, res := range resp.Results {
					if hide {
						res.Cells = visibleV2(t, res.Cells)
					}
					if len(res.Cells) == 0 {
						continue
					}
					if res, err = logicalResultV2(t.salter, res); err != nil {
						yield(hrpc.ResultV2{}, fmt.Errorf("bucket %d: %w", r.Bucket, err))
						return
					}
					if !yield(res, nil) {
						return
					}
				}
			}
		}
	}
	return merge(s.Context(), c, p.table, p.ranges, stream, rowOfV2, false), p, nil
}

func rowOfV2(r hrpc.ResultV2) []byte { return r.Cells[0].Row() }

// visibleV2 drops t's version column from cells, in place.
func visibleV2(t tableInfo, cells []hrpc.CellV2) []hrpc.CellV2 {
	kept := cells[:0]
	for _, cell := range cells {
		if !t.isVersion(cell.Family(), cell.Qualifier()) {
			kept = append(kept, cell)
		}
	}
	return kept
}

// logicalResultV2 rebuilds every cell of res (one row, or part of one) under the logical row key: a
// CellV2 holds its row inside its encoded bytes.
func logicalResultV2(salter salting.Salter, res hrpc.ResultV2) (hrpc.ResultV2, error) {
	phys := res.Cells[0].Row()
	logical, err := salter.AppendLogical(nil, phys)
	if err != nil {
		return res, err
	}
	cells := make([]hrpc.CellV2, len(res.Cells))
	for i, cell := range res.Cells {
		if !bytes.Equal(cell.Row(), phys) {
			return res, fmt.Errorf("one result holds rows %q and %q", phys, cell.Row())
		}
		if cells[i], err = hrpc.NewCellV2(logical, cell.Family(), cell.Qualifier(), cell.Timestamp(), cell.Value(), cell.CellType()); err != nil {
			return res, err
		}
	}
	return hrpc.ResultV2{Cells: cells, Partial: res.Partial}, nil
}

// resultsV2 turns whole rows into ResultV2s (a reversed ScanV2, read through the driver).
func resultsV2(rows iter.Seq2[*hrpc.Result, error]) iter.Seq2[hrpc.ResultV2, error] {
	return func(yield func(hrpc.ResultV2, error) bool) {
		for r, err := range rows {
			if err != nil {
				yield(hrpc.ResultV2{}, err)
				return
			}
			res := hrpc.ResultV2{Cells: make([]hrpc.CellV2, len(r.Cells))}
			for i, cell := range r.Cells {
				typ := pb.CellType_PUT
				if cell.CellType != nil {
					typ = *cell.CellType
				}
				if res.Cells[i], err = hrpc.NewCellV2(cell.Row, cell.Family, cell.Qualifier, (*pb.Cell)(cell).GetTimestamp(), cell.Value, typ); err != nil {
					yield(hrpc.ResultV2{}, err)
					return
				}
			}
			if !yield(res, nil) {
				return
			}
		}
	}
}

// scannerV2 is the hrpc.ScannerV2 of one ScanV2: a pull over the merged buckets, one result ahead so
// that a response knows whether more follow. Like gohbase's, it is for one goroutine at a time.
type scannerV2 struct {
	ctx     context.Context // the Scan's; nil for a scanner that only reports err
	next    func() (hrpc.ResultV2, error, bool)
	stop    func()
	fix     func(error) error
	err     error // the next call's error: a refused request, or a failure after results already returned
	done    bool
	ahead   *hrpc.ResultV2
	rows    uint32 // results per response (NumberOfRows)
	size    uint64 // bytes of cells per response, about (MaxResultSize)
	metrics *scanMetrics
}

// Next returns the next response: see ScanV2.
func (s *scannerV2) Next() (*hrpc.ScanResponseV2, error) { return s.Scan(0) }

// Scan is Next with at most rows results (0: the Scan's NumberOfRows). It never returns a response
// without results: the merged buckets have none to report on their own.
func (s *scannerV2) Scan(rows uint32) (*hrpc.ScanResponseV2, error) {
	if s.err != nil {
		err := s.err
		s.err = nil
		s.Close()
		return nil, err
	}
	if s.done && s.ahead == nil {
		return nil, io.EOF
	}
	if err := s.ctx.Err(); err != nil {
		s.Close()
		return nil, err
	}
	if rows == 0 {
		rows = s.rows
	}
	resp := &hrpc.ScanResponseV2{}
	for uint32(len(resp.Results)) < rows && (s.size == 0 || uint64(resp.ResponseSize) < s.size) {
		res, ok := s.pull()
		if !ok {
			break
		}
		resp.Results = append(resp.Results, res)
		resp.ResponseSize += resultSize(res)
	}
	if len(resp.Results) == 0 {
		if s.err != nil {
			return s.Scan(rows)
		}
		return nil, io.EOF
	}
	if r, ok := s.pull(); ok {
		s.ahead = &r
	}
	resp.MoreResultsInRegion = s.ahead != nil
	return resp, nil
}

// pull is the next merged result; false at the end or on an error, which it keeps for the next call
// (results pulled before it are returned first).
func (s *scannerV2) pull() (hrpc.ResultV2, bool) {
	if s.ahead != nil {
		r := *s.ahead
		s.ahead = nil
		return r, true
	}
	if s.done {
		return hrpc.ResultV2{}, false
	}
	r, err, ok := s.next()
	if !ok || err != nil {
		s.stopAll()
		if err != nil {
			s.err = s.fix(err)
		}
		return hrpc.ResultV2{}, false
	}
	return r, true
}

// resultSize is the size of res's cells in HBase's cell block encoding, as ResponseSize counts it.
func resultSize(res hrpc.ResultV2) int {
	n := 0
	for _, c := range res.Cells {
		n += 4 + 4 + 4 + 2 + len(c.Row()) + 1 + len(c.Family()) + len(c.Qualifier()) + 8 + 1 + len(c.Value())
	}
	return n
}

func (s *scannerV2) stopAll() {
	s.done = true
	if s.stop != nil {
		s.stop()
	}
}

// Close stops every bucket scan and returns once their goroutines have ended; a result already
// pulled ahead is dropped.
func (s *scannerV2) Close() error {
	s.stopAll()
	s.ahead = nil
	return nil
}

// GetScanMetrics is the sum of the buckets' scanners' metrics (nil unless the Scan has
// TrackScanMetrics), complete once the scanner is closed or at io.EOF.
func (s *scannerV2) GetScanMetrics() map[string]int64 { return s.metrics.get() }
