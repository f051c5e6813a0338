package tablestoretest

import (
	"slices"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// readParams are the read options common to GetRow, BatchGetRow and GetRange.
type readParams struct {
	columns     []string
	timeRange   *otsprotocol.TimeRange
	maxVersions *int32
	filter      []byte
	startColumn *string
	endColumn   *string
	token       bool
	txn         *string
}

func (s *Server) parseReadSpec(p readParams) (*readSpec, *otsError) {
	if p.txn != nil {
		return nil, errUnsupported("Local transaction")
	}
	if p.token {
		return nil, errUnsupported("Wide-row read token")
	}
	if n := len(p.columns); n > s.limits.ColumnsToGet {
		return nil, errParam("The number of columns from the request exceeds the limit, limit count: %d, column count: %d.",
			s.limits.ColumnsToGet, n)
	}
	spec := &readSpec{}
	for _, c := range p.columns {
		if !validName(c) {
			return nil, errParam("Invalid column name: '%s'.", c)
		}
		if !slices.Contains(spec.columns, c) {
			spec.columns = append(spec.columns, c)
		}
	}
	if p.maxVersions != nil {
		if *p.maxVersions <= 0 {
			return nil, errParam("Invalid max versions: %d . Reason: Max versions must be positive.", *p.maxVersions)
		}
		spec.maxVersions = *p.maxVersions
	}
	if tr := p.timeRange; tr != nil {
		hasRange := tr.StartTime != nil || tr.EndTime != nil
		switch {
		case tr.SpecificTime != nil && hasRange && p.maxVersions != nil:
			return nil, errParam("Specific timestamp, time range and max versions cannot be given at the same time.")
		case tr.SpecificTime != nil && hasRange:
			return nil, errParam("Specific tiemstamp and time range cannot be given at the same time.")
		case tr.SpecificTime != nil && p.maxVersions != nil:
			return nil, errParam("Specific tiemstamp and max versions cannot be given at the same time.")
		case tr.SpecificTime != nil:
			if tr.GetSpecificTime() < 0 {
				return nil, errParam("Specific timestamp cannot be less than 0.")
			}
			spec.timeRange, spec.start, spec.end = true, tr.GetSpecificTime(), tr.GetSpecificTime()+1
		case tr.StartTime == nil || tr.EndTime == nil:
			return nil, errParam("Start and end time must be given at the same time.")
		default:
			if tr.GetStartTime() < 0 || tr.GetEndTime() <= tr.GetStartTime() {
				return nil, errParam("Invalid time range: [%d, %d). Reason: start must be nonnegative and less than end.",
					tr.GetStartTime(), tr.GetEndTime())
			}
			spec.timeRange, spec.start, spec.end = true, tr.GetStartTime(), tr.GetEndTime()
		}
	}
	if !spec.timeRange && spec.maxVersions == 0 {
		return nil, errParam("No version condition is specified while querying row.")
	}
	if len(p.filter) > 0 {
		f, oerr := parseFilter(p.filter, true)
		if oerr != nil {
			return nil, oerr
		}
		spec.filter = f
	}
	spec.startColumn, spec.endColumn = deref(p.startColumn), deref(p.endColumn)
	return spec, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// readRow reads one row; ok is false when there is nothing to return.
func (t *table) readRow(pk []value, spec *readSpec, now time.Time) (row []byte, size int, ok bool) {
	r, found := t.get(pk)
	if !found {
		return []byte{}, 0, false
	}
	cells, ok := t.project(r, spec, now)
	if !ok {
		return []byte{}, 0, false
	}
	pkc := t.pkCols(r.pk)
	e := newEncoder()
	e.writeRow(pkc, cells)
	return e.bytes(), rowSize(pkc, cells), true
}

func (s *Server) getRow(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.GetRowRequest)
	spec, oerr := s.parseReadSpec(readParams{
		columns: req.ColumnsToGet, timeRange: req.TimeRange, maxVersions: req.MaxVersions, filter: req.Filter,
		startColumn: req.StartColumn, endColumn: req.EndColumn, token: len(req.Token) > 0, txn: req.TransactionId,
	})
	if oerr != nil {
		return nil, oerr
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, oerr := s.lookup(req.GetTableName())
	if oerr != nil {
		return nil, oerr
	}
	pk, oerr := s.decodeKey(t, req.PrimaryKey, pkRead)
	if oerr != nil {
		return nil, oerr
	}
	row, size, ok := t.readRow(pk, spec, rc.now)
	if ok {
		s.stats.rows(rc.op, 1, 0, 0)
	}
	return &otsprotocol.GetRowResponse{Consumed: consumed(capacityUnits(size), 0), Row: row}, nil
}

func (s *Server) batchGetRow(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.BatchGetRowRequest)
	if len(req.Tables) == 0 {
		return nil, errParam("No row specified in the request of BatchGetRow.")
	}
	total := 0
	seen := map[string]bool{}
	specs := make([]*readSpec, len(req.Tables))
	for i, tb := range req.Tables {
		if seen[tb.GetTableName()] {
			return nil, errParam("Duplicated table name: '%s'.", tb.GetTableName())
		}
		seen[tb.GetTableName()] = true
		total += len(tb.PrimaryKey)
		spec, oerr := s.parseReadSpec(readParams{
			columns: tb.ColumnsToGet, timeRange: tb.TimeRange, maxVersions: tb.MaxVersions, filter: tb.Filter,
			startColumn: tb.StartColumn, endColumn: tb.EndColumn, token: len(tb.Token) > 0,
		})
		if oerr != nil {
			return nil, oerr
		}
		specs[i] = spec
	}
	if total > s.limits.BatchGetRows {
		return nil, errParam("Rows count exceeds the upper limit: %d.", s.limits.BatchGetRows)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	resp := &otsprotocol.BatchGetRowResponse{}
	read, failed := 0, 0
	for i, tb := range req.Tables {
		out := &otsprotocol.TableInBatchGetRowResponse{TableName: proto.String(tb.GetTableName())}
		t, tableErr := s.lookup(tb.GetTableName())
		for j, raw := range tb.PrimaryKey {
			oerr := tableErr
			if oerr == nil {
				if f := s.faults.rowFault(rc.op, tb.GetTableName(), j); f != nil {
					oerr = f.err()
				}
			}
			var pk []value
			if oerr == nil {
				pk, oerr = s.decodeKey(t, raw, pkRead)
			}
			if oerr != nil {
				failed++
				out.Rows = append(out.Rows, &otsprotocol.RowInBatchGetRowResponse{IsOk: proto.Bool(false), Error: rowError(oerr)})
				continue
			}
			row, size, ok := t.readRow(pk, specs[i], rc.now)
			if ok {
				read++
			}
			out.Rows = append(out.Rows, &otsprotocol.RowInBatchGetRowResponse{
				IsOk: proto.Bool(true), Consumed: consumed(capacityUnits(size), 0), Row: row,
			})
		}
		resp.Tables = append(resp.Tables, out)
	}
	s.stats.rows(rc.op, read, 0, failed)
	return resp, nil
}

func (s *Server) getRange(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.GetRangeRequest)
	spec, oerr := s.parseReadSpec(readParams{
		columns: req.ColumnsToGet, timeRange: req.TimeRange, maxVersions: req.MaxVersions, filter: req.Filter,
		startColumn: req.StartColumn, endColumn: req.EndColumn, token: len(req.Token) > 0, txn: req.TransactionId,
	})
	if oerr != nil {
		return nil, oerr
	}
	limit := s.limits.PageRows
	if req.Limit != nil {
		if req.GetLimit() <= 0 {
			return nil, errParam("The limit must be greater than 0.")
		}
		limit = min(limit, int(req.GetLimit()))
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, oerr := s.lookup(req.GetTableName())
	if oerr != nil {
		return nil, oerr
	}
	start, oerr := s.decodeKey(t, req.InclusiveStartPrimaryKey, pkRange)
	if oerr != nil {
		return nil, oerr
	}
	end, oerr := s.decodeKey(t, req.ExclusiveEndPrimaryKey, pkRange)
	if oerr != nil {
		return nil, oerr
	}
	forward := req.GetDirection() == otsprotocol.Direction_FORWARD
	cmp := compareKeys(start, end)
	if forward && cmp >= 0 {
		return nil, errParam("Begin key must less than end key in FORWARD.")
	}
	if !forward && cmp <= 0 {
		return nil, errParam("Begin key must more than end key in BACKWARD.")
	}

	e := newEncoder()
	count, bytes := 0, 0
	var next []value
	visit := func(r *storedRow) bool {
		c := compareKeys(r.pk, end)
		if (forward && c >= 0) || (!forward && c <= 0) {
			return false
		}
		if count >= limit {
			next = r.pk
			return false
		}
		cells, ok := t.project(r, spec, rc.now)
		if !ok {
			return true
		}
		pkc := t.pkCols(r.pk)
		size := rowSize(pkc, cells)
		if count > 0 && bytes+size > s.limits.PageBytes {
			next = r.pk
			return false
		}
		e.writeRow(pkc, cells)
		count++
		bytes += size
		return true
	}
	probe := &storedRow{pk: start}
	if forward {
		t.rows.AscendGreaterOrEqual(probe, visit)
	} else {
		t.rows.DescendLessOrEqual(probe, visit)
	}
	resp := &otsprotocol.GetRangeResponse{Consumed: consumed(capacityUnits(bytes), 0), Rows: []byte{}}
	if count > 0 {
		resp.Rows = e.bytes()
	}
	if next != nil {
		resp.NextStartPrimaryKey = encodePK(t.pkCols(next))
	}
	s.stats.rows(rc.op, count, 0, 0)
	return resp, nil
}
