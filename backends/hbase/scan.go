package hbase

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"sort"
	"time"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/keys"
)

// maxScanRestarts bounds how often one Scan reopens a scanner after a region moved, split or lost
// the scanner (UnknownScannerException) under it.
const maxScanRestarts = 5

// Scan streams the rows of r, driving HBase's scanner protocol region by region (see the package
// comment for why not gohbase's Scanner). Forward, each region is routed by the scan's current start
// key and scanned up to r.End. Reverse, the region holding the greatest key below the current upper
// bound hi (r.End at first, then each scanned region's start key) is found in hbase:meta, routed to by
// its start key, and scanned from hi downwards; a row equal to r.End is dropped, and an
// InclusiveStopFilter makes the server stop at r.Start. Every RPC asks for at most the rows still
// wanted, and with opts.FirstBatch the batches start small and grow (see scanState.rows). A scanner
// left open (consumer stopped, limit reached, error) is closed before Scan returns.
func (b *Backend) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		if err := b.scan(ctx, table, r, opts, yield); err != nil {
			yield(backends.Row{}, err)
		}
	}
}

// scanState is one Scan in progress.
type scanState struct {
	b       *Backend
	ctx     context.Context
	table   string
	r       backends.Range
	reverse bool
	batch   int
	first   int // > 0: the first RPC's rows; later ones grow with read (ScanOptions.FirstBatch)
	read    int // rows yielded so far
	left    int // rows still wanted; -1 when unlimited
	options []func(hrpc.Call) error
	yield   func(backends.Row, error) bool
	trim    []backends.Filter // cell leaves the driver applies (cellfilter.go)

	// Forward: the next row to read is >= cursor. Reverse: the next row to read is < hi (nil: +inf).
	cursor, hi []byte
	// lastKey is the last row yielded, nil before the first; a restarted scanner resumes after it.
	lastKey []byte
	// hiRow: a reverse scan's next region scanner, opened at hi inclusive, may return the row equal
	// to hi (r.End, or lastKey after a restart), which is then dropped: ask for one row more.
	hiRow   bool
	stopped bool // the consumer said stop, or the limit is reached, or the range is exhausted
}

// errStaleRegions makes the reverse scan look its table's regions up again.
var errStaleRegions = errors.New("hbase: region boundaries changed under a reverse scan")

func (b *Backend) scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions, yield func(backends.Row, error) bool) error {
	if err := checkTable(table); err != nil {
		return err
	}
	if opts.Limit < 0 || opts.BatchSize < 0 || opts.FirstBatch < 0 {
		return fmt.Errorf("hbase: scan %q: %w: negative limit or batch size", table, backends.ErrInvalidArgument)
	}
	readOpts, trim, err := readOptions(opts.ReadOptions)
	if err != nil {
		return err
	}
	// No key is longer than MaxKeyLen, and gohbase could not locate the region of a longer bound.
	r, ok := driverkit.ClampRange(r, MaxKeyLen)
	if !ok {
		return nil
	}
	s := &scanState{
		b: b, ctx: ctx, table: table, r: r, reverse: opts.Reverse, yield: yield,
		batch: opts.BatchSize, first: opts.FirstBatch, left: -1, cursor: r.Start, hi: r.End, hiRow: len(r.End) > 0,
		trim: trim,
	}
	if s.batch == 0 {
		s.batch = b.opts.ScanBatch
	}
	if opts.Limit > 0 {
		s.left = opts.Limit
	}
	s.options = append(s.options, readOpts...)
	if s.reverse {
		s.options = append(s.options, hrpc.Reversed())
		server, _ := serverFilters(opts.Filter, opts.MaxVersions)
		if len(r.Start) > 0 {
			var stop filter.Filter = filter.NewInclusiveStopFilter(r.Start)
			if server != nil { // one Filters option per call: the last replaces the row filter
				stop = filter.NewList(filter.MustPassAll, stop, server)
			}
			s.options = append(s.options, hrpc.Filters(stop))
		} else if server != nil {
			s.options = append(s.options, hrpc.Filters(reverseFilter(server)))
		}
	}
	return s.run()
}

func (s *scanState) run() error {
	restarts := 0
	refresh := false
	for !s.stopped {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("hbase: scan %q: %w", s.table, err)
		}
		done, err := s.region(refresh)
		refresh = false
		switch {
		case err == nil:
			if done {
				return nil
			}
			restarts = 0
		case errors.Is(err, errStaleRegions) && restarts < maxScanRestarts:
			restarts++
			refresh = true
			driverkit.CountRetry(s.ctx)
			s.b.log.DebugContext(s.ctx, "hbase: region boundaries changed; reading them again", "table", s.table)
		case classify(err) == kindRetryable && s.ctx.Err() == nil && restarts < maxScanRestarts:
			// The region moved or split, or the server forgot the scanner: reopen after lastKey.
			restarts++
			driverkit.CountRetry(s.ctx)
			s.b.log.DebugContext(s.ctx, "hbase: reopening scanner", "table", s.table, "after", s.lastKey, "err", err)
			if s.lastKey != nil {
				s.resumeAfter(s.lastKey)
			}
		default:
			return err
		}
	}
	return nil
}

// resumeAfter moves the scan's bound past key, the last row already yielded.
func (s *scanState) resumeAfter(key []byte) {
	if s.reverse {
		s.hi, s.hiRow = key, true
		return
	}
	s.cursor = keys.Successor(key)
}

// rows is how many rows the next RPC asks for: the batch, or fewer when the limit is closer (limit
// pushdown), plus one if a row the scan will drop may come first. With a first batch, it is the first
// batch, then as many rows as the scan has yielded so far, until that reaches the batch: HBase's own
// client grows its scanner caching in the same spirit. The doubling keeps a scan the caller stops
// early within about twice the rows it yielded, and since the scan only sends the next RPC when its
// consumer takes the row after the last one received, a fan-out bucket whose rows the merge does not
// need is not read at all.
func (s *scanState) rows(extra bool) uint32 {
	n := s.batch
	if s.first > 0 {
		n = min(n, max(s.first, s.read))
	}
	if s.left >= 0 {
		want := s.left
		if extra {
			want++
		}
		n = min(n, want)
	}
	return uint32(max(n, 1))
}

// region scans one region (the one holding cursor, or the one below hi) to its end or until the scan
// stops. done reports that no region is left to scan.
func (s *scanState) region(refresh bool) (done bool, err error) {
	routeKey, startRow := s.cursor, s.cursor
	var stopRow []byte
	if s.reverse {
		spans, err := s.b.spans(s.ctx, s.table, refresh)
		if err != nil {
			return false, err
		}
		// The region holding the greatest key below hi: the last one starting below hi.
		i := sort.Search(len(spans), func(i int) bool {
			return len(s.hi) > 0 && bytes.Compare(spans[i].Start, s.hi) >= 0
		}) - 1
		if i < 0 {
			return true, nil
		}
		routeKey, startRow = spans[i].Start, s.hi
	} else {
		stopRow = s.r.End
	}

	cn, rctx, finish := s.b.begin(s.ctx)
	defer finish()
	opts := append([]func(hrpc.Call) error{hrpc.NumberOfRows(s.rows(s.reverse && s.hiRow))}, s.options...)
	sc, err := hrpc.NewScanRange(rctx, []byte(s.table), routeKey, stopRow, opts...)
	if err != nil {
		return false, fmt.Errorf("hbase: scan %q: %w", s.table, err)
	}
	call := &openScan{Scan: sc, startRow: startRow}
	resp, err := cn.rpc.SendRPC(call)
	if err != nil {
		return false, s.b.rpcErr(s.ctx, cn, "scan", s.table, err)
	}
	reg := call.Region()
	open, ok := resp.(*pb.ScanResponse)
	if !ok {
		return false, fmt.Errorf("hbase: scan %q: unexpected response %T", s.table, resp)
	}
	scannerID := open.GetScannerId()
	more := open.GetMoreResultsInRegion() && open.ScannerId != nil
	defer func() {
		if more {
			s.b.closeScanner(s.ctx, s.table, routeKey, scannerID)
		}
	}()

	if s.reverse && !coversUpTo(reg.StopKey(), s.hi) {
		// The cached boundaries were stale (a split): this region ends below hi, and the rows between
		// its end and hi live in a region the cache does not know yet.
		return false, errStaleRegions
	}

	var pending []hrpc.CellV2
	msg, results := open, call.Response
	for {
		if pending, err = s.consume(msg, results, pending); err != nil {
			return false, err
		}
		if s.stopped {
			return true, nil
		}
		if !more || (msg.MoreResults != nil && !msg.GetMoreResults()) {
			break
		}
		cn, rctx, finish := s.b.begin(s.ctx)
		next, err := hrpc.NewScanRange(rctx, []byte(s.table), routeKey, nil,
			hrpc.ScannerID(scannerID), hrpc.NumberOfRows(s.rows(false)))
		if err != nil {
			finish()
			return false, fmt.Errorf("hbase: scan %q: %w", s.table, err)
		}
		out, err := cn.rpc.SendRPC(next)
		finish()
		if err != nil {
			return false, s.b.rpcErr(s.ctx, cn, "scan", s.table, err)
		}
		if msg, ok = out.(*pb.ScanResponse); !ok {
			return false, fmt.Errorf("hbase: scan %q: unexpected response %T", s.table, out)
		}
		results = next.Response
		more = msg.GetMoreResultsInRegion()
	}
	if len(pending) > 0 {
		s.emit(pending)
		if s.stopped {
			return true, nil
		}
	}
	if msg.MoreResults != nil && !msg.GetMoreResults() {
		return true, nil // the server says the whole scan is done (the stop filter fired)
	}

	// Step to the next region in scan order, unless this one reaches past the range.
	if s.reverse {
		start := reg.StartKey()
		if len(start) == 0 || bytes.Compare(start, s.r.Start) <= 0 {
			return true, nil
		}
		s.hi, s.hiRow = start, false // the row equal to a region's start key lives in the region above
		return false, nil
	}
	end := reg.StopKey()
	if len(end) == 0 || (len(s.r.End) > 0 && bytes.Compare(end, s.r.End) >= 0) {
		return true, nil
	}
	s.cursor = end
	return false, nil
}

// coversUpTo reports whether a region ending at end (empty: +inf) holds every key just below hi
// (empty: +inf).
func coversUpTo(end, hi []byte) bool {
	if len(end) == 0 {
		return true
	}
	return len(hi) > 0 && bytes.Compare(end, hi) >= 0
}

// consume yields the complete rows of one scan response and returns the cells of the row still
// being assembled: with partial results on (gohbase always asks for them) a wide row can arrive in
// pieces, each flagged partial but the last. The rows come in the response's cell block, which gohbase
// decodes into the call's Response (hrpc.Scan.DeserializeCellBlocks), never into msg's Results: a
// server answers a client that names a cell codec (gohbase always does) with cell blocks, and one
// that put rows in msg anyway would have them dropped here, so that is an error.
func (s *scanState) consume(msg *pb.ScanResponse, resp *hrpc.ScanResponseV2, pending []hrpc.CellV2) ([]hrpc.CellV2, error) {
	if len(msg.GetResults()) > 0 {
		return nil, fmt.Errorf("hbase: scan %q: %d rows as protobuf results, not in a cell block", s.table, len(msg.GetResults()))
	}
	if resp == nil {
		return pending, nil
	}
	for _, res := range resp.Results {
		if len(res.Cells) == 0 {
			continue
		}
		switch {
		case len(pending) == 0:
			pending = res.Cells
		case bytes.Equal(pending[0].Row(), res.Cells[0].Row()):
			pending = append(pending, res.Cells...)
		default:
			s.emit(pending)
			if s.stopped {
				return nil, nil
			}
			pending = res.Cells
		}
		if !res.Partial {
			s.emit(pending)
			pending = nil
			if s.stopped {
				return nil, nil
			}
		}
	}
	return pending, nil
}

// emit yields one complete row if it lies in the range, and notes where the scan stands.
func (s *scanState) emit(cells []hrpc.CellV2) {
	key := cells[0].Row()
	if s.reverse {
		if len(s.hi) > 0 && bytes.Compare(key, s.hi) >= 0 {
			return // the row equal to r.End (the reverse start row is inclusive), or one already yielded
		}
		if bytes.Compare(key, s.r.Start) < 0 {
			s.stopped = true
			return
		}
	} else {
		if bytes.Compare(key, s.cursor) < 0 {
			return // already yielded before a restart
		}
		if len(s.r.End) > 0 && bytes.Compare(key, s.r.End) >= 0 {
			s.stopped = true
			return
		}
	}
	s.lastKey = key
	row := rowFromCellsV2(key, cells)
	if s.trim != nil {
		if row.Cells = driverkit.TrimCells(s.trim, row.Cells); len(row.Cells) == 0 {
			return // trimmed away: not yielded, not counted towards the limit
		}
	}
	s.read++
	if !s.yield(row, nil) {
		s.stopped = true
		return
	}
	if s.left > 0 {
		s.left--
		if s.left == 0 {
			s.stopped = true
		}
	}
}

// closeScanner releases a region scanner the scan did not read to its end. It runs even when the
// caller's ctx is done, briefly: the server would drop the scanner on lease expiry anyway. ctx's
// values stay (its trace span, so that the close nests under the scan), its end does not.
func (b *Backend) closeScanner(ctx context.Context, table string, routeKey []byte, id uint64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	rpc, err := hrpc.NewScanRange(ctx, []byte(table), routeKey, nil,
		hrpc.ScannerID(id), hrpc.CloseScanner(), hrpc.NumberOfRows(0))
	if err == nil {
		_, err = b.cur.Load().rpc.SendRPC(rpc)
	}
	if err != nil {
		b.log.Debug("hbase: closing scanner failed; the server drops it when its lease expires", "table", table, "err", err)
	}
}
