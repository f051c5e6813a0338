package tablestoretest

import (
	"math"
	"slices"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// pkMode says what a primary key is used for, which decides the placeholders it
// may hold: INF_MIN/INF_MAX only in GetRange bounds, AUTO_INCREMENT only in puts.
type pkMode int

const (
	pkRead pkMode = iota
	pkRange
	pkPut
	pkModify // update and delete
)

// checkPK validates a request's primary-key cells against the table schema and
// returns the values in schema order. autoInc is the index of an AUTO_INCREMENT
// placeholder still to be assigned, or -1.
func (s *Server) checkPK(t *table, cells []pbCell, mode pkMode) (pk []value, autoInc int, oerr *otsError) {
	autoInc = -1
	if len(cells) != len(t.schema) {
		return nil, -1, errInvalidPK("Validate PK size fail. Input: %d, Meta: %d.", len(cells), len(t.schema))
	}
	pk = make([]value, len(cells))
	for i, c := range cells {
		sc := t.schema[i]
		if c.name != sc.name {
			return nil, -1, errInvalidPK("Validate PK name fail. Input: %s, Meta: %s.", c.name, sc.name)
		}
		if c.hasType {
			return nil, -1, errParam("OpType cannot be given for primary key name :'%s'.", c.name)
		}
		if c.hasTS {
			return nil, -1, errParam("Timestamp cannot be given for primary key name:'%s'.", c.name)
		}
		if !c.hasValue {
			return nil, -1, errParam("No value is given for primary key name:'%s'.", c.name)
		}
		v := c.val
		switch {
		case v.typ == vtAutoIncrement && sc.autoInc:
			switch mode {
			case pkPut:
				autoInc = i
			case pkRead, pkRange:
				return nil, -1, errParam("PKAutoIncr can't be used for read operations.")
			default:
				return nil, -1, errParam("Invalid row to delete which with pk auto increment.")
			}
		case v.isInf() && mode == pkRange:
		case v.typ != sc.valueType():
			return nil, -1, errInvalidPK("Validate PK type fail. Input: %s, Meta: %s.", typeName(v.typ), typeName(sc.valueType()))
		}
		if n := len(v.b); n > s.limits.PKValueBytes {
			return nil, -1, errParam("The length of primary key column: '%s' exceeds the MaxLength:%d with CurrentLength:%d.",
				c.name, s.limits.PKValueBytes, n)
		}
		pk[i] = v
	}
	return pk, autoInc, nil
}

// decodeKey decodes a primary-key-only PlainBuffer (GetRow, BatchGetRow, GetRange).
func (s *Server) decodeKey(t *table, raw []byte, mode pkMode) ([]value, *otsError) {
	row, oerr := decodeRow(raw)
	if oerr != nil {
		return nil, oerr
	}
	if len(row.cells) > 0 {
		return nil, errParam("Attribute column cannot be given while reading data.")
	}
	if row.deleteMarker {
		return nil, errParam("Delete marker cannot be given.")
	}
	pk, _, oerr := s.checkPK(t, row.pk, mode)
	return pk, oerr
}

// change is a validated row mutation, ready to apply.
type change struct {
	op      otsprotocol.OperationType
	pk      []value
	autoInc int
	cells   []pbCell
	cond    *otsprotocol.Condition
	filter  *colFilter
	ret     *otsprotocol.ReturnContent
	size    int
}

func opName(op otsprotocol.OperationType) string {
	switch op {
	case otsprotocol.OperationType_PUT:
		return "PutRow"
	case otsprotocol.OperationType_UPDATE:
		return "UpdateRow"
	}
	return "DeleteRow"
}

// prepareChange decodes and validates one row change against the table, without
// looking at the stored row.
func (s *Server) prepareChange(t *table, op otsprotocol.OperationType, raw []byte, cond *otsprotocol.Condition,
	ret *otsprotocol.ReturnContent, now time.Time) (*change, *otsError) {
	row, oerr := decodeRow(raw)
	if oerr != nil {
		return nil, oerr
	}
	c := &change{op: op, cells: row.cells, cond: cond, ret: ret}
	mode := pkModify
	switch op {
	case otsprotocol.OperationType_PUT:
		mode = pkPut
		if row.deleteMarker {
			return nil, errParam("Invalid request of put/update row: unexpected RowDeleteMarker in request.")
		}
	case otsprotocol.OperationType_UPDATE:
		if row.deleteMarker {
			return nil, errParam("Invalid request of put/update row: unexpected RowDeleteMarker in request.")
		}
		if len(row.cells) == 0 {
			return nil, errParam("Invalid update row request: missing cells in request.")
		}
	case otsprotocol.OperationType_DELETE:
		if !row.deleteMarker {
			return nil, errParam("Invalid request of delete row: missing RowDeleteMarker in request.")
		}
		if len(row.cells) > 0 {
			return nil, errParam("Invalid delete row request: unexpected cells in request.")
		}
	default:
		return nil, errParam("The type of row in batch write operation is invalid.")
	}
	if c.pk, c.autoInc, oerr = s.checkPK(t, row.pk, mode); oerr != nil {
		return nil, oerr
	}
	for _, v := range c.pk {
		c.size += v.size()
	}
	for i := range row.pk {
		c.size += len(row.pk[i].name)
	}
	if oerr := s.checkCells(t, c, now); oerr != nil {
		return nil, oerr
	}
	if c.size > s.limits.RowBytes && op != otsprotocol.OperationType_DELETE {
		return nil, errParam("The total data size of %s request exceeds the limit, limit size: %d, data size: %d.",
			opName(op), s.limits.RowBytes, c.size)
	}
	if cond == nil {
		return nil, errParam("Invalid condition: missing row existence expectation.")
	}
	switch cond.GetRowExistence() {
	case otsprotocol.RowExistenceExpectation_IGNORE, otsprotocol.RowExistenceExpectation_EXPECT_EXIST:
	case otsprotocol.RowExistenceExpectation_EXPECT_NOT_EXIST:
		switch op {
		case otsprotocol.OperationType_UPDATE:
			return nil, errParam("Invalid condition: EXPECT_NOT_EXIST while updating row.")
		case otsprotocol.OperationType_DELETE:
			return nil, errParam("Invalid condition: EXPECT_NOT_EXIST while deleting row.")
		}
	default:
		return nil, errParam("Invalid row-existence expectation: %d.", cond.GetRowExistence())
	}
	if c.autoInc >= 0 {
		if cond.GetRowExistence() != otsprotocol.RowExistenceExpectation_IGNORE {
			return nil, errParam("Invalid expect:%s when modify row with pk auto increment.", cond.GetRowExistence())
		}
		if len(cond.ColumnCondition) > 0 {
			return nil, errParam("Can't set condition when modify row with pk auto increment.")
		}
	}
	if len(cond.ColumnCondition) > 0 {
		if c.filter, oerr = parseFilter(cond.ColumnCondition, false); oerr != nil {
			return nil, oerr
		}
	}
	if ret != nil {
		switch ret.GetReturnType() {
		case otsprotocol.ReturnType_RT_NONE, otsprotocol.ReturnType_RT_PK, otsprotocol.ReturnType_RT_AFTER_MODIFY:
		default:
			return nil, errParam("Invalid return type: %d.", ret.GetReturnType())
		}
	}
	return c, nil
}

// checkCells validates the attribute cells of a put or update.
func (s *Server) checkCells(t *table, c *change, now time.Time) *otsError {
	if n := len(c.cells); n > s.limits.ColumnsPerWrite {
		return errParam("The number of attribute columns exceeds the limit, limit count: %d, column count: %d.",
			s.limits.ColumnsPerWrite, n)
	}
	nowMS := now.UnixMilli()
	lo, hi := nowMS-t.deviation*1000, nowMS+t.deviation*1000
	if t.ttl > 0 {
		lo = max(lo, nowMS-int64(t.ttl)*1000)
	}
	for _, cell := range c.cells {
		if !validName(cell.name) {
			return errParam("Invalid column name: '%s'.", cell.name)
		}
		for _, p := range t.schema {
			if p.name == cell.name {
				return errParam("Duplicated attribute column name with primary key column: '%s'.", cell.name)
			}
		}
		if cell.hasValue {
			if cell.val.isInf() || cell.val.typ == vtAutoIncrement {
				return errParam("%s is an invalid type for the attribute column.", typeName(cell.val.typ))
			}
			if n := len(cell.val.b); n > s.limits.AttrValueBytes {
				return errParam("The length of attribute column: '%s' exceeds the MaxLength:%d with CurrentLength:%d.",
					cell.name, s.limits.AttrValueBytes, n)
			}
		}
		if cell.hasTS && (cell.ts < 0 || cell.ts >= math.MaxInt64/1000) {
			return errParam("Timestamp must be in range [0, INT64_MAX/1000).")
		}
		c.size += len(cell.name) + cell.val.size()
		if c.op == otsprotocol.OperationType_PUT {
			if cell.hasType {
				return errParam("OpType cannot be given for column name:'%s' in PutRow.", cell.name)
			}
			if !cell.hasValue {
				return errParam("Invalid request of put row: find cells without values.")
			}
		}
		switch {
		case !cell.hasType:
			if !cell.hasValue {
				return errParam("Invalid cell: '%s'. Reason: missing value.", cell.name)
			}
			// Only explicit versions are checked: server-assigned ones are "now".
			if cell.hasTS && (cell.ts < lo || cell.ts >= hi) {
				return errParam("Invalid timestamp. Cell:'%s'.", cell.name)
			}
		case cell.cellType == cellDeleteOneVersion:
			if cell.hasValue {
				return errParam("Column value cannot be given when type is DELETE_ONE_VERSION,DELETE_ALL_VERSION.")
			}
			if !cell.hasTS {
				return errParam("Timestamp must be given when type is DELETE_ONE_VERSION.")
			}
		case cell.cellType == cellDeleteAllVersions:
			if cell.hasValue {
				return errParam("Column value cannot be given when type is DELETE_ONE_VERSION,DELETE_ALL_VERSION.")
			}
			if cell.hasTS {
				return errParam("Timestamp cannot be given when type is DELETE_ALL_VERSION.")
			}
		case cell.cellType == cellIncrement:
			if !cell.hasValue || cell.val.typ != vtInteger {
				return errParam("Invalid cell: '%s'. Reason: increment value must be INTEGER.", cell.name)
			}
			if cell.hasTS {
				return errParam("Timestamp cannot be given when type is INCREMENT.")
			}
		default:
			return errParam("Invalid op type of cell: %d.", cell.cellType)
		}
	}
	return nil
}

// applyChange checks the condition against the stored row and applies the change;
// the caller holds s.mu for writing. It returns the return-content row (nil when
// none was asked for) and the capacity consumed.
func (s *Server) applyChange(t *table, c *change, now time.Time) (retRow []byte, readCU, writeCU int32, oerr *otsError) {
	if c.autoInc >= 0 {
		t.lastAutoInc = max(t.lastAutoInc+1, now.UnixMicro())
		c.pk = slices.Clone(c.pk)
		c.pk[c.autoInc] = intValue(t.lastAutoInc)
	}
	cur, _ := t.get(c.pk)
	checked := c.cond.GetRowExistence() != otsprotocol.RowExistenceExpectation_IGNORE || c.filter != nil
	if checked {
		readCU = 1
		exists := t.exists(cur, now)
		switch c.cond.GetRowExistence() {
		case otsprotocol.RowExistenceExpectation_EXPECT_EXIST:
			if !exists {
				return nil, readCU, 0, errConditionFailed()
			}
		case otsprotocol.RowExistenceExpectation_EXPECT_NOT_EXIST:
			if exists {
				return nil, readCU, 0, errConditionFailed()
			}
		}
		if c.filter != nil {
			minTS := t.minLiveTS(now)
			if !c.filter.match(func(col string) []cellVersion {
				if cur == nil {
					return nil
				}
				return (&readSpec{}).versionsFor(cur.cols[col], minTS)
			}) {
				return nil, readCU, 0, errConditionFailed()
			}
		}
	}
	nowMS := now.UnixMilli()
	var next *storedRow
	switch c.op {
	case otsprotocol.OperationType_PUT:
		next = &storedRow{pk: c.pk, cols: make(map[string][]cellVersion), marker: len(c.cells) == 0}
		for _, cell := range c.cells {
			ts := nowMS
			if cell.hasTS {
				ts = cell.ts
			}
			t.putVersion(next, cell.name, cellVersion{ts: ts, v: cell.val})
		}
	case otsprotocol.OperationType_UPDATE:
		if cur != nil {
			next = cloneRow(cur)
		} else {
			next = &storedRow{pk: c.pk, cols: make(map[string][]cellVersion)}
		}
		minTS := t.minLiveTS(now)
		for _, cell := range c.cells {
			switch {
			case !cell.hasType:
				ts := nowMS
				if cell.hasTS {
					ts = cell.ts
				}
				t.putVersion(next, cell.name, cellVersion{ts: ts, v: cell.val})
			case cell.cellType == cellDeleteOneVersion:
				t.deleteVersion(next, cell.name, cell.ts)
			case cell.cellType == cellDeleteAllVersions:
				delete(next.cols, cell.name)
			case cell.cellType == cellIncrement:
				sum, ts := cell.val.i, nowMS
				if vs := (&readSpec{}).versionsFor(next.cols[cell.name], minTS); len(vs) > 0 {
					if vs[0].v.typ != vtInteger {
						return nil, readCU, 0, errParam("Invalid cell: '%s'. Reason: increment on a non-INTEGER value.", cell.name)
					}
					sum += vs[0].v.i
					// The result must be the newest version even when the current
					// one carries a future client timestamp.
					ts = max(ts, vs[0].ts)
				}
				t.putVersion(next, cell.name, cellVersion{ts: ts, v: intValue(sum)})
			}
		}
	}
	if next == nil || next.empty() {
		t.rows.Delete(&storedRow{pk: c.pk})
	} else {
		t.rows.ReplaceOrInsert(next)
	}
	writeCU = capacityUnits(c.size)
	if c.ret == nil {
		return nil, readCU, writeCU, nil
	}
	switch c.ret.GetReturnType() {
	case otsprotocol.ReturnType_RT_PK:
		return encodePK(t.pkCols(c.pk)), readCU, writeCU, nil
	case otsprotocol.ReturnType_RT_AFTER_MODIFY:
		var cells []outCell
		if next != nil {
			for _, name := range c.ret.ReturnColumnNames {
				if vs := next.cols[name]; len(vs) > 0 {
					cells = append(cells, outCell{name: name, val: vs[0].v, ts: vs[0].ts})
				}
			}
		}
		e := newEncoder()
		e.writeRow(t.pkCols(c.pk), cells)
		return e.bytes(), readCU, writeCU, nil
	}
	return nil, readCU, writeCU, nil
}

// writeOne runs a single-row write operation (PutRow, UpdateRow, DeleteRow).
func (s *Server) writeOne(rc *reqCtx, tableName string, op otsprotocol.OperationType, raw []byte,
	cond *otsprotocol.Condition, ret *otsprotocol.ReturnContent, txn *string) ([]byte, *otsprotocol.ConsumedCapacity, *otsError) {
	if txn != nil {
		return nil, nil, errUnsupported("Local transaction")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Timestamps are taken under the lock so versions follow commit order; an
	// earlier reading could let a later increment land below an older version.
	rc.now = s.now()
	t, oerr := s.lookup(tableName)
	if oerr != nil {
		return nil, nil, oerr
	}
	c, oerr := s.prepareChange(t, op, raw, cond, ret, rc.now)
	if oerr != nil {
		return nil, nil, oerr
	}
	row, r, w, oerr := s.applyChange(t, c, rc.now)
	if oerr != nil {
		return nil, nil, oerr
	}
	s.stats.rows(rc.op, 0, 1, 0)
	return row, consumed(r, w), nil
}

func (s *Server) putRow(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.PutRowRequest)
	row, cu, oerr := s.writeOne(rc, req.GetTableName(), otsprotocol.OperationType_PUT, req.Row, req.Condition, req.ReturnContent, req.TransactionId)
	if oerr != nil {
		return nil, oerr
	}
	return &otsprotocol.PutRowResponse{Consumed: cu, Row: row}, nil
}

func (s *Server) updateRow(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.UpdateRowRequest)
	row, cu, oerr := s.writeOne(rc, req.GetTableName(), otsprotocol.OperationType_UPDATE, req.RowChange, req.Condition, req.ReturnContent, req.TransactionId)
	if oerr != nil {
		return nil, oerr
	}
	return &otsprotocol.UpdateRowResponse{Consumed: cu, Row: row}, nil
}

func (s *Server) deleteRow(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.DeleteRowRequest)
	row, cu, oerr := s.writeOne(rc, req.GetTableName(), otsprotocol.OperationType_DELETE, req.PrimaryKey, req.Condition, req.ReturnContent, req.TransactionId)
	if oerr != nil {
		return nil, oerr
	}
	return &otsprotocol.DeleteRowResponse{Consumed: cu, Row: row}, nil
}

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

func rowError(e *otsError) *otsprotocol.Error {
	return &otsprotocol.Error{Code: proto.String(e.code), Message: proto.String(e.message)}
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

func (s *Server) batchWriteRow(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.BatchWriteRowRequest)
	if req.TransactionId != nil {
		return nil, errUnsupported("Local transaction")
	}
	if len(req.Tables) == 0 {
		return nil, errParam("No row is specified in BatchWriteRow.")
	}
	total, bytes := 0, 0
	seen := map[string]bool{}
	for _, tb := range req.Tables {
		if len(tb.Rows) == 0 {
			return nil, errParam("No operation is specified for table: '%s'.", tb.GetTableName())
		}
		if seen[tb.GetTableName()] {
			return nil, errParam("Duplicated table name: '%s'.", tb.GetTableName())
		}
		seen[tb.GetTableName()] = true
		total += len(tb.Rows)
		for _, r := range tb.Rows {
			bytes += len(r.RowChange)
			switch r.GetType() {
			case otsprotocol.OperationType_PUT, otsprotocol.OperationType_UPDATE, otsprotocol.OperationType_DELETE:
			default:
				return nil, errParam("The type of row in batch write operation is invalid.")
			}
		}
	}
	if total > s.limits.BatchWriteRows {
		return nil, errParam("Rows count exceeds the upper limit: %d.", s.limits.BatchWriteRows)
	}
	if bytes > s.limits.BatchWriteBytes {
		return nil, errParam("The total data size of BatchWriteRow request exceeds the limit, limit size: %d, data size: %d.",
			s.limits.BatchWriteBytes, bytes)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	rc.now = s.now() // under the lock, as in writeOne
	// Validate every row first: per-row problems become row errors, while repeated
	// rows with conditions fail the whole request, as on the service.
	type prepared struct {
		c   *change
		err *otsError
	}
	preps := make([][]prepared, len(req.Tables))
	for i, tb := range req.Tables {
		t, tableErr := s.lookup(tb.GetTableName())
		keys := map[string][]int{}
		preps[i] = make([]prepared, len(tb.Rows))
		for j, r := range tb.Rows {
			if tableErr != nil {
				preps[i][j].err = tableErr
				continue
			}
			c, oerr := s.prepareChange(t, r.GetType(), r.RowChange, r.Condition, r.ReturnContent, rc.now)
			preps[i][j] = prepared{c: c, err: oerr}
			if oerr == nil && c.autoInc < 0 {
				k := string(encodePK(t.pkCols(c.pk)))
				keys[k] = append(keys[k], j)
			}
		}
		for _, idx := range keys {
			if len(idx) < 2 {
				continue
			}
			for _, j := range idx {
				c := preps[i][j].c
				if c.filter != nil {
					return nil, errParam("Repeated rows do not support row condition check in BatchModify.")
				}
				if c.cond.GetRowExistence() != otsprotocol.RowExistenceExpectation_IGNORE {
					return nil, errParam("Repeated rows do not support row exist expectation check in BatchModify.")
				}
			}
		}
	}
	resp := &otsprotocol.BatchWriteRowResponse{}
	written, failed := 0, 0
	for i, tb := range req.Tables {
		out := &otsprotocol.TableInBatchWriteRowResponse{TableName: proto.String(tb.GetTableName())}
		t := s.tables[tb.GetTableName()]
		for j := range tb.Rows {
			p := preps[i][j]
			oerr := p.err
			if oerr == nil {
				if f := s.faults.rowFault(rc.op, tb.GetTableName(), j); f != nil {
					oerr = f.err()
				}
			}
			var row []byte
			var r, w int32
			if oerr == nil {
				row, r, w, oerr = s.applyChange(t, p.c, rc.now)
			}
			if oerr != nil {
				failed++
				out.Rows = append(out.Rows, &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(false), Error: rowError(oerr)})
				continue
			}
			written++
			out.Rows = append(out.Rows, &otsprotocol.RowInBatchWriteRowResponse{IsOk: proto.Bool(true), Consumed: consumed(r, w), Row: row})
		}
		resp.Tables = append(resp.Tables, out)
	}
	s.stats.rows(rc.op, 0, written, failed)
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
