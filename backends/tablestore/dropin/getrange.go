package dropin

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/fanout"
	"github.com/brine-kv/brine/internal/saltscan"
	"github.com/brine-kv/brine/salting"
)

// GetRange is the SDK's GetRange over a salted table: it reads every bucket that may hold rows of the
// range, follows each bucket's pages, and returns at most Limit rows (0: the client's page size) in
// logical order, with logical primary keys. NextStartPrimaryKey is the logical key of the next row in
// the range, nil when there is none: pass it back as StartPrimaryKey to continue.
func (c *Client) GetRange(req *ots.GetRangeRequest) (*ots.GetRangeResponse, error) {
	const op = "GetRange"
	if req == nil || req.RangeRowQueryCriteria == nil {
		return nil, badRequest(op, "", fmt.Errorf("%w: no RangeRowQueryCriteria", backends.ErrInvalidArgument))
	}
	crit := req.RangeRowQueryCriteria
	limit := int(crit.Limit)
	if limit == 0 {
		limit = c.pageRows
	}
	acc := &accounting{}
	resp := &ots.GetRangeResponse{ConsumedCapacityUnit: &ots.ConsumedCapacityUnit{}}
	// One row more than the page tells where the next page starts.
	for row, err := range c.scan(context.Background(), op, crit, limit+1, acc) {
		if err != nil {
			return nil, err
		}
		if len(resp.Rows) == limit {
			resp.NextStartPrimaryKey = row.PrimaryKey
			break
		}
		resp.Rows = append(resp.Rows, row)
	}
	resp.ConsumedCapacityUnit.Read, resp.ConsumedCapacityUnit.Write, resp.RequestId = acc.totals()
	return resp, nil
}

// Scan returns every row of crit's range (at most crit.Limit when it is set) in logical order, with
// logical primary keys: GetRange without pages. It yields at most one error, last; breaking out of the
// loop stops every bucket read.
func (c *Client) Scan(ctx context.Context, crit *ots.RangeRowQueryCriteria) iter.Seq2[*ots.Row, error] {
	limit := 0
	if crit != nil {
		limit = int(crit.Limit)
	}
	return c.scan(ctx, "Scan", crit, limit, &accounting{})
}

// accounting sums the capacity the bucket requests consumed.
type accounting struct {
	mu          sync.Mutex
	read, write int32
	requestID   string
}

func (a *accounting) add(resp *ots.GetRangeResponse) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cu := resp.ConsumedCapacityUnit; cu != nil {
		a.read += cu.Read
		a.write += cu.Write
	}
	a.requestID = resp.RequestId
}

func (a *accounting) totals() (read, write int32, requestID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.read, a.write, a.requestID
}

// item is a row with its logical key, which orders the merge.
type item struct {
	key []byte
	row *ots.Row
}

// scan reads the range of crit, at most limit rows (0: all).
func (c *Client) scan(ctx context.Context, op string, crit *ots.RangeRowQueryCriteria, limit int, acc *accounting) iter.Seq2[*ots.Row, error] {
	return func(yield func(*ots.Row, error) bool) {
		fail := func(err error) { yield(nil, err) }
		if crit == nil {
			fail(badRequest(op, "", fmt.Errorf("%w: no RangeRowQueryCriteria", backends.ErrInvalidArgument)))
			return
		}
		if crit.Limit < 0 {
			fail(badRequest(op, crit.TableName, fmt.Errorf("%w: negative limit %d", backends.ErrInvalidArgument, crit.Limit)))
			return
		}
		if crit.MaxVersion == 0 && crit.TimeRange == nil {
			fail(badRequest(op, crit.TableName, fmt.Errorf("%w: set MaxVersion or TimeRange", backends.ErrInvalidArgument)))
			return
		}
		t, err := c.table(ctx, op, crit.TableName)
		if err != nil {
			fail(err)
			return
		}
		if err := t.checkFilter("filter", crit.Filter); err != nil {
			fail(badRequest(op, t.name, err))
			return
		}
		lo, hi, empty, err := t.logicalRange(crit.StartPrimaryKey, crit.EndPrimaryKey, crit.Direction)
		if err != nil {
			fail(badRequest(op, t.name, err))
			return
		}
		if empty {
			return
		}
		ranges, err := t.salter.BucketRanges(lo, hi)
		if err != nil {
			if errors.Is(err, salting.ErrUnorderedRange) {
				err = fmt.Errorf("%w: %w", ErrUnsupported, err)
			}
			fail(badRequest(op, t.name, err))
			return
		}
		read := func(sctx context.Context, br salting.BucketRange) iter.Seq2[item, error] {
			return c.bucket(sctx, t, crit, br, limit, acc)
		}
		key := func(it item) []byte { return it.key }
		merged := saltscan.Merge(ctx, ranges, read, key, crit.Direction == ots.BACKWARD, fanout.Options{
			Concurrency: c.concurrency, Prefetch: c.prefetch, Limit: limit,
		})
		for it, err := range merged {
			if err != nil {
				c.forgetOnNotFound(t.name, err)
				var oe *ots.OtsError
				if errors.As(err, &oe) {
					fail(oe) // as the SDK returns it
				} else {
					fail(fmt.Errorf("dropin: %s %q: %w", op, t.name, err))
				}
				return
			}
			if !yield(it.row, nil) {
				return
			}
		}
	}
}

// bucket reads one bucket's physical range page by page, keeping the caller's criteria but the keys,
// and turns each row's key back into the logical one.
func (c *Client) bucket(ctx context.Context, t *table, crit *ots.RangeRowQueryCriteria, br salting.BucketRange, limit int, acc *accounting) iter.Seq2[item, error] {
	return func(yield func(item, error) bool) {
		start, end, ok := t.layout.RangeKeys(br.Start, br.End, crit.Direction)
		if !ok {
			return
		}
		reverse := crit.Direction == ots.BACKWARD
		got := 0
		get := func(page int, q *ots.RangeRowQueryCriteria) (*ots.GetRangeResponse, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			q.Limit = bucketPageRows
			if limit > 0 {
				q.Limit = int32(min(limit-got, bucketPageRows))
				if page == 0 && reverse && len(br.End) > 0 {
					q.Limit++ // room for the row at the range's end, which is dropped
				}
			}
			resp, err := call(func() (*ots.GetRangeResponse, error) {
				return c.sdk.GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: q})
			})
			if err != nil {
				return nil, fmt.Errorf("bucket %d: %w", br.Bucket, err)
			}
			acc.add(resp)
			return resp, nil
		}
		keyOf := func(pk *ots.PrimaryKey) ([]byte, error) {
			phys, err := t.layout.Key(pk)
			if err != nil {
				return nil, fmt.Errorf("bucket %d: %w", br.Bucket, err)
			}
			return phys, nil
		}
		q := *crit
		q.StartPrimaryKey, q.EndPrimaryKey = start, end
		hide := t.hides(crit.ColumnsToGet)
		for rr, err := range tablestore.PageRange(q, br.Start, br.End, get, keyOf) {
			if err != nil {
				yield(item{}, err)
				return
			}
			cols := rr.Row.Columns
			if hide {
				var gone bool
				if cols, gone = t.visible(cols); gone {
					continue
				}
			}
			pk, logical, err := t.logicalPK(rr.Row.PrimaryKey)
			if err != nil {
				yield(item{}, fmt.Errorf("bucket %d: %w", br.Bucket, err))
				return
			}
			if !yield(item{key: logical, row: &ots.Row{PrimaryKey: pk, Columns: cols}}, nil) {
				return
			}
			if got++; limit > 0 && got >= limit {
				return
			}
		}
	}
}
