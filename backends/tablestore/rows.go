package tablestore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/internal/wait"
)

// maxColumnsPerWrite is the service's limit on attribute columns in one row operation.
const maxColumnsPerWrite = 1024

// selector is a validated ReadOptions.Columns: what to ask the server for and what to keep.
type selector struct {
	all      bool
	exact    map[string]bool
	families map[string]bool
	// names is columns_to_get; nil when the selection cannot be pushed down (a whole family: Tablestore
	// selects columns by name only), in which case every column is fetched and filtered here.
	names []string
	// versions and timeRange are the criteria's max_versions and time_range (nil: none).
	versions  int32
	timeRange *ots.TimeRange
	// filter is evaluated on every row's cells; server is the part sent to the service (filter.go).
	filter *backends.Filter
	server ots.ColumnFilter
}

func newSelector(s *keySchema, opts backends.ReadOptions) (*selector, error) {
	cols := opts.Columns
	if err := driverkit.CheckRead(s.families, opts); err != nil {
		return nil, err
	}
	tr := opts.TimeRange
	if opts.MaxVersions < 0 || opts.MaxVersions > math.MaxInt32 || tr.From < 0 || tr.To < 0 || (tr.To != 0 && tr.To <= tr.From) {
		return nil, fmt.Errorf("%w: max versions %d, time range [%d, %d)", backends.ErrInvalidArgument, opts.MaxVersions, tr.From, tr.To)
	}
	sel := &selector{all: len(cols) == 0, exact: map[string]bool{}, families: map[string]bool{}}
	for _, c := range cols {
		if c.Qualifier == "" {
			// A whole family: check it could name columns at all.
			if c.Family != "" {
				if _, err := ColumnName(c.Family, "x"); err != nil {
					return nil, err
				}
			}
			sel.families[c.Family] = true
			continue
		}
		name, err := ColumnName(c.Family, c.Qualifier)
		if err != nil {
			return nil, err
		}
		if s.hasColumn(name) {
			return nil, fmt.Errorf("tablestore: column %q: %w: it is a primary-key column", name, backends.ErrInvalidArgument)
		}
		if !sel.exact[name] {
			sel.exact[name] = true
			sel.names = append(sel.names, name)
		}
	}
	if len(sel.names)+len(s.cols) > maxColumnsToGet {
		return nil, fmt.Errorf("tablestore: %d columns requested: %w: Tablestore returns at most %d named columns (primary key included)",
			len(sel.names), backends.ErrInvalidArgument, maxColumnsToGet-len(s.cols))
	}
	if len(sel.families) > 0 {
		sel.names = nil
	}
	sel.filter = opts.Filter
	server, err := serverFilter(opts)
	if err != nil {
		return nil, err
	}
	sel.server = server
	// Always max_versions: with a time range alone the service returns every version in it.
	sel.versions = int32(driverkit.Versions(opts.MaxVersions))
	if tr != (backends.TimeRange{}) {
		sel.timeRange = &ots.TimeRange{Start: tr.From, End: tr.To}
		if tr.To == 0 {
			sel.timeRange.End = math.MaxInt64
		}
	}
	return sel, nil
}

func (sel *selector) match(name string) bool {
	if sel.all || sel.exact[name] {
		return true
	}
	fam, _ := SplitColumnName(name)
	return sel.families[fam]
}

// cells converts the attribute columns of one row, keeps the selected ones and sorts them by family,
// qualifier, then newest first; none when the read's filter fails the row or trims all its cells.
func (sel *selector) cells(cols []*ots.AttributeColumn) []backends.Cell {
	var out []backends.Cell
	for _, c := range cols {
		if c == nil || !sel.match(c.ColumnName) {
			continue
		}
		fam, qual := SplitColumnName(c.ColumnName)
		out = append(out, backends.Cell{Family: fam, Qualifier: qual, Value: valueBytes(c.Value), Timestamp: c.Timestamp})
	}
	slices.SortStableFunc(out, func(a, b backends.Cell) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Qualifier, b.Qualifier), cmp.Compare(b.Timestamp, a.Timestamp))
	})
	return driverkit.Apply(sel.filter, out)
}

// valueBytes turns an attribute value into bytes. brine writes BINARY; values of other types (tables
// written by other programs) convert as: STRING its bytes, INTEGER and DOUBLE 8 bytes big-endian
// (DOUBLE as its IEEE 754 bits), BOOLEAN one byte 0 or 1.
func valueBytes(v any) []byte {
	switch x := v.(type) {
	case []byte:
		if x == nil {
			return []byte{}
		}
		return x
	case string:
		return []byte(x)
	case int64:
		return binary.BigEndian.AppendUint64(nil, uint64(x))
	case float64:
		return binary.BigEndian.AppendUint64(nil, math.Float64bits(x))
	case bool:
		if x {
			return []byte{1}
		}
		return []byte{0}
	}
	return []byte{}
}

// Read fetches rows with BatchGetRow, at most 100 keys per request and up to Options.Concurrency
// requests at a time. Rows that fail inside a batch with a retryable code are asked for again (only
// them) with backoff, at most Options.RowAttempts times; any other row failure fails the Read.
func (b *Backend) Read(ctx context.Context, table string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	for _, k := range keys {
		if len(k) == 0 {
			return nil, fmt.Errorf("tablestore: read %q: %w: empty key", table, backends.ErrInvalidKey)
		}
	}
	s, err := b.schema(ctx, table)
	if err != nil {
		return nil, err
	}
	sel, err := newSelector(s, opts)
	if err != nil {
		return nil, fmt.Errorf("tablestore: read %q: %w", table, err)
	}
	rows := make([]backends.Row, len(keys))
	// One request per distinct key: the service refuses a batch that names a row twice.
	slot := map[string]int{}
	var pks []*ots.PrimaryKey
	owner := make([]int, len(keys))
	for i, k := range keys {
		rows[i].Key = bytes.Clone(k) // callers may reuse their buffers
		if j, ok := slot[string(k)]; ok {
			owner[i] = j
			continue
		}
		vals, err := s.values(k)
		if err != nil {
			return nil, err
		}
		slot[string(k)] = len(pks)
		owner[i] = len(pks)
		pks = append(pks, s.primaryKey(vals))
	}
	got := make([][]backends.Cell, len(pks))
	chunks := chunk(len(pks), maxBatchGet)
	err = b.parallel(ctx, len(chunks), func(ctx context.Context, c int) error {
		lo, hi := chunks[c][0], chunks[c][1]
		return b.readBatch(ctx, table, sel, pks[lo:hi], got[lo:hi])
	})
	if err != nil {
		b.forgetOnNotFound(table, err)
		return nil, err
	}
	for i := range rows {
		rows[i].Cells = got[owner[i]]
	}
	return rows, nil
}

// chunk cuts [0, n) into [lo, hi) pairs of at most size.
func chunk(n, size int) [][2]int {
	var out [][2]int
	for lo := 0; lo < n; lo += size {
		out = append(out, [2]int{lo, min(lo+size, n)})
	}
	return out
}

// parallel runs fn(0..n-1) with at most Options.Concurrency at a time and returns the first error;
// after one, the calls not yet started are skipped.
func (b *Backend) parallel(ctx context.Context, n int, fn func(context.Context, int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		next  atomic.Int64
	)
	for range min(n, b.opts.Concurrency) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err() // only the parent's cancellation can show here: ours comes with an error
	}
	return first
}

func (b *Backend) readBatch(ctx context.Context, table string, sel *selector, pks []*ots.PrimaryKey, out [][]backends.Cell) error {
	pending := make([]int, len(pks))
	for i := range pending {
		pending[i] = i
	}
	for attempt := 1; ; attempt++ {
		crit := &ots.MultiRowQueryCriteria{TableName: table, MaxVersion: int(sel.versions), TimeRange: sel.timeRange, ColumnsToGet: sel.names, Filter: sel.server}
		for _, i := range pending {
			crit.AddRow(pks[i])
		}
		req := &ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{crit}}
		resp, err := sdkCall(ctx, b, func() (*ots.BatchGetRowResponse, error) { return b.client.BatchGetRow(req) })
		if err != nil {
			return mapError(fmt.Sprintf("read %d rows of %q", len(pending), table), err, true)
		}
		results := resp.TableToRowsResult[table]
		if len(results) != len(pending) {
			return fmt.Errorf("tablestore: read %q: the service answered %d of %d rows", table, len(results), len(pending))
		}
		var again []int
		var lastErr error
		for j, r := range results {
			i := pending[j]
			if r.IsSucceed {
				out[i] = sel.cells(r.Columns)
				continue
			}
			oe := &ots.OtsError{Code: r.Error.Code, Message: r.Error.Message, RequestId: resp.RequestId}
			rerr := codeError(fmt.Sprintf("read row of %q", table), oe, true)
			if !retryableCode(oe.Code, true) {
				return rerr
			}
			again = append(again, i)
			lastErr = rerr
		}
		if len(again) == 0 {
			return nil
		}
		if attempt >= b.opts.RowAttempts {
			return fmt.Errorf("%d rows still failing after %d attempts: %w", len(again), attempt, lastErr)
		}
		b.log.DebugContext(ctx, "tablestore: retrying rows", "op", "read", "table", table, "rows", len(again), "attempt", attempt, "err", lastErr)
		if err := wait.Sleep(ctx, b.backoff(attempt)); err != nil {
			return err
		}
		pending = again
	}
}

// Apply writes mutations with BatchWriteRow, at most 200 rows and 4 MB per request, and reports each
// row's outcome at its index. Invalid mutations fail alone, before anything is sent for them. Rows that
// fail inside a batch with a retryable code are sent again (only them) with backoff, at most
// Options.RowAttempts times; a timeout counts as retryable only for puts whose cells all carry
// timestamps. Batches run Options.Concurrency at a time, or one by one when a key repeats: then they
// also keep the caller's order, and no batch names a row twice (the service refuses that).
func (b *Backend) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	if len(muts) == 0 {
		return nil, nil
	}
	s, err := b.schema(ctx, table)
	if err != nil {
		return nil, err
	}
	rowErrs := make([]error, len(muts))
	anyErr := false
	muts, done, err := b.expandFamilyDeletes(ctx, table, s, muts, rowErrs)
	if err != nil {
		return nil, err
	}
	var ps []*prepared
	for i, m := range muts {
		if done[i] {
			anyErr = anyErr || rowErrs[i] != nil
			continue
		}
		p, err := b.prepare(s, table, i, m)
		if err != nil {
			rowErrs[i] = err
			anyErr = true
			continue
		}
		ps = append(ps, p)
	}
	batches, dup := splitBatches(ps)

	var (
		succeeded atomic.Int64
		mu        sync.Mutex
		reqErr    error // the first request-level failure: later batches are not sent
	)
	conc := b.opts.Concurrency
	if dup {
		conc = 1
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(conc, len(batches)) {
		wg.Go(func() {
			for {
				n := int(next.Add(1) - 1)
				if n >= len(batches) {
					return
				}
				mu.Lock()
				stop := reqErr
				mu.Unlock()
				if stop == nil {
					stop = ctx.Err()
				}
				if stop != nil {
					for _, p := range batches[n] {
						rowErrs[p.idx] = fmt.Errorf("not sent: %w", stop)
					}
					continue
				}
				if err := b.writeBatch(ctx, table, batches[n], rowErrs, &succeeded); err != nil {
					mu.Lock()
					if reqErr == nil {
						reqErr = err
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if reqErr == nil && len(ps) > 0 {
		reqErr = ctx.Err() // batches left unsent
	}
	if reqErr != nil {
		b.forgetOnNotFound(table, reqErr)
		if succeeded.Load() == 0 {
			return nil, reqErr
		}
	}
	for _, e := range rowErrs {
		if e != nil {
			anyErr = true
			break
		}
	}
	if !anyErr {
		return nil, nil
	}
	return rowErrs, nil
}

// splitBatches cuts the prepared rows, in order, into batches within the service's limits and with no
// key twice in a batch; dup reports whether any key repeats at all.
func splitBatches(ps []*prepared) (batches [][]*prepared, dup bool) {
	var cur []*prepared
	size := 0
	inBatch := map[string]bool{}
	seen := map[string]bool{}
	for _, p := range ps {
		if seen[p.key] {
			dup = true
		}
		seen[p.key] = true
		if len(cur) == maxBatchWrite || (len(cur) > 0 && size+p.size > maxBatchBytes) || inBatch[p.key] {
			batches = append(batches, cur)
			cur, size = nil, 0
			clear(inBatch)
		}
		cur = append(cur, p)
		size += p.size
		inBatch[p.key] = true
	}
	if len(cur) > 0 {
		batches = append(batches, cur)
	}
	return batches, dup
}

// writeBatch sends one batch and retries its retryable row failures. It returns an error only when a
// request failed as a whole (the rows it carried have that error too).
func (b *Backend) writeBatch(ctx context.Context, table string, batch []*prepared, rowErrs []error, succeeded *atomic.Int64) error {
	pending := batch
	for attempt := 1; ; attempt++ {
		req := &ots.BatchWriteRowRequest{}
		idem := true
		for _, p := range pending {
			req.AddRowChange(p.change)
			idem = idem && p.idempotent
		}
		resp, err := sdkCall(ctx, b, func() (*ots.BatchWriteRowResponse, error) { return b.client.BatchWriteRow(req) })
		if err != nil {
			err = mapError(fmt.Sprintf("write %d rows to %q", len(pending), table), err, idem)
			for _, p := range pending {
				rowErrs[p.idx] = err
			}
			return err
		}
		results := resp.TableToRowsResult[table]
		if len(results) != len(pending) {
			err := fmt.Errorf("tablestore: write %q: the service answered %d of %d rows", table, len(results), len(pending))
			for _, p := range pending {
				rowErrs[p.idx] = err
			}
			return err
		}
		var again []*prepared
		var lastErr error
		for j, r := range results {
			p := pending[j]
			if r.IsSucceed {
				rowErrs[p.idx] = nil
				succeeded.Add(1)
				continue
			}
			oe := &ots.OtsError{Code: r.Error.Code, Message: r.Error.Message, RequestId: resp.RequestId}
			rowErrs[p.idx] = codeError(fmt.Sprintf("write row %q of %q", p.key, table), oe, p.idempotent)
			if retryableCode(oe.Code, p.idempotent) {
				again = append(again, p)
				lastErr = rowErrs[p.idx]
			}
		}
		if len(again) == 0 || attempt >= b.opts.RowAttempts {
			return nil
		}
		b.log.DebugContext(ctx, "tablestore: retrying rows", "op", "write", "table", table, "rows", len(again), "attempt", attempt, "err", lastErr)
		if err := wait.Sleep(ctx, b.backoff(attempt)); err != nil {
			for _, p := range again {
				rowErrs[p.idx] = fmt.Errorf("%w (retry abandoned: %w)", rowErrs[p.idx], err)
			}
			return nil
		}
		pending = again
	}
}
