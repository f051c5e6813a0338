package tablestoretest

import (
	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

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

func rowError(e *otsError) *otsprotocol.Error {
	return &otsprotocol.Error{Code: proto.String(e.code), Message: proto.String(e.message)}
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
