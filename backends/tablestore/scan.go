package tablestore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"iter"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
)

// Scan reads [r.Start, r.End) with GetRange, FORWARD, or BACKWARD from r.End (exclusive) down to
// r.Start (inclusive). Unbounded ends become INF_MIN/INF_MAX. Tablestore's range is [start, end) in
// the scan direction, so a BACKWARD scan starts at r.End (the row equal to it, if any, is dropped) and
// ends just below r.Start. Pages follow NextStartPrimaryKey; each asks for at most the rows still
// wanted (opts.Limit) or opts.BatchSize. Rows without a selected cell are not returned.
func (b *Backend) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		if err := b.scan(ctx, table, r, opts, yield); err != nil {
			b.forgetOnNotFound(table, err)
			yield(backends.Row{}, err)
		}
	}
}

// scan yields rows and returns the error to yield last, if any.
func (b *Backend) scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions, yield func(backends.Row, error) bool) error {
	if opts.Limit < 0 || opts.BatchSize < 0 {
		return fmt.Errorf("tablestore: scan %q: %w: negative limit or batch size", table, backends.ErrInvalidArgument)
	}
	s, err := b.schema(ctx, table)
	if err != nil {
		return err
	}
	sel, err := newSelector(s, opts.ReadOptions)
	if err != nil {
		return fmt.Errorf("tablestore: scan %q: %w", table, err)
	}
	if len(r.End) > 0 && bytes.Compare(r.Start, r.End) >= 0 {
		return nil
	}
	dir := ots.FORWARD
	if opts.Reverse {
		dir = ots.BACKWARD
	}
	start, end, ok := s.rangeBounds(r.Start, r.End, opts.Reverse)
	if !ok {
		return nil // no key the schema accepts lies in r
	}
	var names []string
	if sel.names != nil {
		// The key columns are named too, so that a row comes back with its key whatever it holds.
		names = append(s.keyNames(), sel.names...)
	}
	remaining := opts.Limit
	get := func(page int, crit *ots.RangeRowQueryCriteria) (*ots.GetRangeResponse, error) {
		if page > 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("tablestore: scan %q: %w", table, err)
			}
		}
		limit := pageLimit(remaining, opts.BatchSize)
		if page == 0 && opts.Reverse && len(r.End) > 0 && limit > 0 {
			limit = min(limit+1, pageRowsCap) // room for the row at r.End, which is dropped
		}
		crit.Limit = int32(limit)
		resp, err := sdkCall(ctx, b, func() (*ots.GetRangeResponse, error) {
			return b.client.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: crit})
		})
		if err != nil {
			return nil, mapError(fmt.Sprintf("scan %q", table), err, true)
		}
		return resp, nil
	}
	keyOf := func(pk *ots.PrimaryKey) ([]byte, error) {
		key, err := s.keyOf(pk)
		if err != nil {
			return nil, fmt.Errorf("scan %q: %w", table, err)
		}
		return key, nil
	}
	crit := ots.RangeRowQueryCriteria{
		TableName: table, StartPrimaryKey: s.primaryKey(start), EndPrimaryKey: s.primaryKey(end), Direction: dir,
		MaxVersion: sel.versions, TimeRange: sel.timeRange, ColumnsToGet: names, Filter: sel.server,
	}
	for rr, err := range PageRange(crit, r.Start, r.End, get, keyOf) {
		if err != nil {
			return err
		}
		cells := sel.cells(rr.Row.Columns)
		if len(cells) == 0 {
			continue
		}
		if !yield(backends.Row{Key: rr.Key, Cells: cells}, nil) {
			return nil
		}
		if remaining > 0 {
			if remaining--; remaining == 0 {
				return nil
			}
		}
	}
	return nil
}

// pageLimit is the row limit of the next GetRange request; 0 leaves the service's own page size.
func pageLimit(remaining, batch int) int {
	limit := remaining
	if batch > 0 && (limit == 0 || batch < limit) {
		limit = batch
	}
	return min(limit, pageRowsCap)
}

// compareTuples orders primary-key tuples the way Tablestore does, INF_MIN and INF_MAX included.
func compareTuples(a, b []pkVal) int {
	for i := range min(len(a), len(b)) {
		if c := compareVals(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

func compareVals(a, b pkVal) int {
	if a.inf != 0 || b.inf != 0 {
		return cmp.Compare(a.inf, b.inf)
	}
	switch x := a.v.(type) {
	case int64:
		return cmp.Compare(x, b.v.(int64))
	case string:
		return cmp.Compare(x, string(bytesOf(b)))
	}
	return bytes.Compare(bytesOf(a), bytesOf(b))
}
