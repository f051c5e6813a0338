package tablestoretest

import (
	"math"
	"slices"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
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
