package tablestoretest

import (
	"math"
	"sort"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
)

// defaultDeviation is the service's max_time_deviation when CreateTable leaves it
// unset: written timestamps must be within a day of the server's clock.
const defaultDeviation = 86400

func (s *Server) createTable(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.CreateTableRequest)
	meta := req.GetTableMeta()
	name := meta.GetTableName()
	if !validName(name) {
		return nil, errParam("Invalid table name: '%s'.", name)
	}
	if n := len(meta.PrimaryKey); n < 1 || n > s.limits.PKColumns {
		return nil, errParam("The number of primary key columns must be in range: [1, %d].", s.limits.PKColumns)
	}
	if len(req.IndexMetas) > 0 || len(meta.IndexMeta) > 0 {
		return nil, errUnsupported("Secondary index")
	}
	if len(req.Partitions) > 0 {
		return nil, errUnsupported("Pre-split partitions")
	}
	if req.GetStreamSpec().GetEnableStream() {
		return nil, errUnsupported("Stream")
	}
	t := newTable(name)
	seen := map[string]bool{}
	for i, pk := range meta.PrimaryKey {
		if !validName(pk.GetName()) {
			return nil, errParam("Invalid column name: '%s'.", pk.GetName())
		}
		if seen[pk.GetName()] {
			return nil, errParam("Duplicated primary key name: '%s'.", pk.GetName())
		}
		seen[pk.GetName()] = true
		switch pk.GetType() {
		case otsprotocol.PrimaryKeyType_INTEGER, otsprotocol.PrimaryKeyType_STRING, otsprotocol.PrimaryKeyType_BINARY:
		default:
			return nil, errParam("%s is an invalid type for the primary key.", pk.GetType())
		}
		ps := pkSchema{name: pk.GetName(), typ: pk.GetType()}
		if pk.Option != nil {
			if pk.GetOption() != otsprotocol.PrimaryKeyOption_AUTO_INCREMENT {
				return nil, errParam("Invalid primary key option: %d.", pk.GetOption())
			}
			if pk.GetType() != otsprotocol.PrimaryKeyType_INTEGER {
				return nil, errParam("AUTO_INCREMENT primary key must be integer.")
			}
			if i == 0 {
				return nil, errParam("First primary key can't be auto increment, table: '%s'.", name)
			}
			for _, prev := range t.schema {
				if prev.autoInc {
					return nil, errParam("AUTO_INCREMENT primary key count must <= 1.")
				}
			}
			ps.autoInc = true
		}
		t.schema = append(t.schema, ps)
	}
	for _, d := range meta.DefinedColumn {
		if !validName(d.GetName()) {
			return nil, errParam("Invalid column name: '%s'.", d.GetName())
		}
		if seen[d.GetName()] {
			return nil, errParam("Duplicated attribute column name with primary key column: '%s'.", d.GetName())
		}
		t.definedCols = append(t.definedCols, &otsprotocol.DefinedColumnSchema{Name: d.Name, Type: d.Type})
	}
	if len(t.definedCols) > 32 {
		return nil, errParam("The number of defined columns must be in range: [0, 32].")
	}
	opts := req.GetTableOptions()
	if opts == nil || opts.TimeToLive == nil {
		return nil, errParam("Time-to-live is missing while creating table.")
	}
	if opts.MaxVersions == nil {
		return nil, errParam("MaxVersions is missing while creating table.")
	}
	if oerr := t.setOptions(opts); oerr != nil {
		return nil, oerr
	}
	if t.deviation == 0 {
		t.deviation = defaultDeviation
	}
	cu := req.GetReservedThroughput().GetCapacityUnit()
	if cu.GetRead() < 0 || cu.GetWrite() < 0 {
		return nil, errParam("Invalid Capacity Unit: (%d, %d). Capacity Unit must be nonnegative.", cu.GetRead(), cu.GetWrite())
	}
	t.readCU, t.writeCU = cu.GetRead(), cu.GetWrite()
	t.created, t.lastIncrease = rc.now, rc.now

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.tables[name]; ok {
		return nil, newError(CodeObjectAlreadyExist, "Requested table already exists.")
	}
	if len(s.tables) >= s.limits.Tables {
		return nil, newError(CodeQuotaExhausted, "Number of tables exceeded the quota.")
	}
	s.tables[name] = t
	return &otsprotocol.CreateTableResponse{}, nil
}

// setOptions validates and applies the set fields of TableOptions.
func (t *table) setOptions(o *otsprotocol.TableOptions) *otsError {
	if o.TimeToLive != nil {
		if ttl := o.GetTimeToLive(); ttl == 0 || ttl < -1 {
			return errParam("TimeToLive cannot be 0 or less than -1.")
		}
	}
	if o.MaxVersions != nil && o.GetMaxVersions() <= 0 {
		return errParam("The maximum versions cannot be less than or equal to 0.")
	}
	if o.DeviationCellVersionInSec != nil {
		if d := o.GetDeviationCellVersionInSec(); d < 0 || d > math.MaxInt64/1000000 {
			return errParam("The maximum deviation must be in range [0, INT64_MAX/1000000].")
		}
	}
	if o.TimeToLive != nil {
		t.ttl = o.GetTimeToLive()
	}
	if o.MaxVersions != nil {
		t.maxVersions = o.GetMaxVersions()
	}
	if o.DeviationCellVersionInSec != nil && o.GetDeviationCellVersionInSec() > 0 {
		t.deviation = o.GetDeviationCellVersionInSec()
	}
	return nil
}

func (s *Server) listTable(_ protoadapt.MessageV1, _ *reqCtx) (protoadapt.MessageV1, *otsError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return &otsprotocol.ListTableResponse{TableNames: names}, nil
}

func (s *Server) describeTable(m protoadapt.MessageV1, _ *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.DescribeTableRequest)
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, oerr := s.lookup(req.GetTableName())
	if oerr != nil {
		return nil, oerr
	}
	return &otsprotocol.DescribeTableResponse{
		TableMeta:                 t.meta(),
		ReservedThroughputDetails: t.throughput(),
		TableOptions:              t.options(),
		TableStatus:               otsprotocol.TableStatus_ACTIVE.Enum(),
		StreamDetails:             t.streamDetails(),
	}, nil
}

func (s *Server) updateTable(m protoadapt.MessageV1, rc *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.UpdateTableRequest)
	s.mu.Lock()
	defer s.mu.Unlock()
	t, oerr := s.lookup(req.GetTableName())
	if oerr != nil {
		return nil, oerr
	}
	if req.TableOptions == nil && req.ReservedThroughput == nil && req.StreamSpec == nil {
		return nil, errParam("No parameter is specified in table options.")
	}
	if req.GetStreamSpec().GetEnableStream() {
		return nil, errUnsupported("Stream")
	}
	if o := req.GetTableOptions(); o != nil {
		// Validate on a copy so a bad request changes nothing.
		probe := *t
		if oerr := probe.setOptions(o); oerr != nil {
			return nil, oerr
		}
		t.ttl, t.maxVersions, t.deviation = probe.ttl, probe.maxVersions, probe.deviation
	}
	if rt := req.GetReservedThroughput(); rt != nil {
		cu := rt.GetCapacityUnit()
		if cu.GetRead() < 0 || cu.GetWrite() < 0 {
			return nil, errParam("Invalid Capacity Unit for UpdateTable: Either read(%d) or write(%d) should be non-negative.", cu.GetRead(), cu.GetWrite())
		}
		if cu.Read != nil {
			if cu.GetRead() > t.readCU {
				t.lastIncrease = rc.now
			} else if cu.GetRead() < t.readCU {
				t.lastDecrease = rc.now
			}
			t.readCU = cu.GetRead()
		}
		if cu.Write != nil {
			if cu.GetWrite() > t.writeCU {
				t.lastIncrease = rc.now
			} else if cu.GetWrite() < t.writeCU {
				t.lastDecrease = rc.now
			}
			t.writeCU = cu.GetWrite()
		}
	}
	return &otsprotocol.UpdateTableResponse{
		ReservedThroughputDetails: t.throughput(),
		TableOptions:              t.options(),
		StreamDetails:             t.streamDetails(),
	}, nil
}

func (s *Server) deleteTable(m protoadapt.MessageV1, _ *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.DeleteTableRequest)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, oerr := s.lookup(req.GetTableName()); oerr != nil {
		return nil, oerr
	}
	delete(s.tables, req.GetTableName())
	return &otsprotocol.DeleteTableResponse{}, nil
}

// computeSplits answers ComputeSplitPointsBySize with a single split: there is one
// "partition" here, and a single split is always a valid answer.
func (s *Server) computeSplits(m protoadapt.MessageV1, _ *reqCtx) (protoadapt.MessageV1, *otsError) {
	req := m.(*otsprotocol.ComputeSplitPointsBySizeRequest)
	if req.GetSplitSize() <= 0 {
		return nil, errParam("Invalid split size: %d.", req.GetSplitSize())
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t, oerr := s.lookup(req.GetTableName())
	if oerr != nil {
		return nil, oerr
	}
	return &otsprotocol.ComputeSplitPointsBySizeResponse{
		Consumed: consumed(1, 0),
		Schema:   t.meta().PrimaryKey,
		Locations: []*otsprotocol.ComputeSplitPointsBySizeResponse_SplitLocation{
			{Location: proto.String("tablestoretest"), Repeat: proto.Int64(1)},
		},
	}, nil
}

func consumed(read, write int32) *otsprotocol.ConsumedCapacity {
	return &otsprotocol.ConsumedCapacity{CapacityUnit: &otsprotocol.CapacityUnit{Read: proto.Int32(read), Write: proto.Int32(write)}}
}
