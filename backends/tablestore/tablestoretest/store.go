package tablestoretest

import (
	"slices"
	"sort"
	"time"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore/otsprotocol"
	"github.com/google/btree"
	"google.golang.org/protobuf/proto"
)

// pkSchema is one primary-key column of a table.
type pkSchema struct {
	name    string
	typ     otsprotocol.PrimaryKeyType
	autoInc bool
}

func (p pkSchema) valueType() byte {
	switch p.typ {
	case otsprotocol.PrimaryKeyType_INTEGER:
		return vtInteger
	case otsprotocol.PrimaryKeyType_STRING:
		return vtString
	}
	return vtBlob
}

// cellVersion is one timestamped version of an attribute column.
type cellVersion struct {
	ts int64
	v  value
}

// storedRow is a row as kept in the tree. marker records a row written by PutRow
// without attribute columns: it exists (reads return its primary key) although it
// has no cells.
type storedRow struct {
	pk     []value
	cols   map[string][]cellVersion // versions newest first
	marker bool
}

func (r *storedRow) empty() bool { return len(r.cols) == 0 && !r.marker }

func lessRow(a, b *storedRow) bool { return compareKeys(a.pk, b.pk) < 0 }

func compareKeys(a, b []value) int {
	for i := range min(len(a), len(b)) {
		if c := comparePK(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// table holds a table's schema, settings and rows.
type table struct {
	name         string
	schema       []pkSchema
	definedCols  []*otsprotocol.DefinedColumnSchema
	ttl          int32 // seconds, -1 = forever
	maxVersions  int32
	deviation    int64 // seconds a written timestamp may differ from now
	readCU       int32
	writeCU      int32
	created      time.Time
	lastIncrease time.Time
	lastDecrease time.Time
	rows         *btree.BTreeG[*storedRow]
	lastAutoInc  int64
}

func newTable(name string) *table {
	return &table{name: name, rows: btree.NewG(16, lessRow)}
}

func (t *table) get(pk []value) (*storedRow, bool) {
	return t.rows.Get(&storedRow{pk: pk})
}

func (t *table) pkCols(pk []value) []pkCol {
	out := make([]pkCol, len(pk))
	for i, v := range pk {
		out[i] = pkCol{name: t.schema[i].name, val: v}
	}
	return out
}

func (t *table) meta() *otsprotocol.TableMeta {
	m := &otsprotocol.TableMeta{TableName: proto.String(t.name)}
	for _, s := range t.schema {
		ps := &otsprotocol.PrimaryKeySchema{Name: proto.String(s.name), Type: s.typ.Enum()}
		if s.autoInc {
			ps.Option = otsprotocol.PrimaryKeyOption_AUTO_INCREMENT.Enum()
		}
		m.PrimaryKey = append(m.PrimaryKey, ps)
	}
	for _, d := range t.definedCols {
		m.DefinedColumn = append(m.DefinedColumn, &otsprotocol.DefinedColumnSchema{Name: d.Name, Type: d.Type})
	}
	return m
}

func (t *table) options() *otsprotocol.TableOptions {
	return &otsprotocol.TableOptions{
		TimeToLive:                proto.Int32(t.ttl),
		MaxVersions:               proto.Int32(t.maxVersions),
		DeviationCellVersionInSec: proto.Int64(t.deviation),
	}
}

func (t *table) throughput() *otsprotocol.ReservedThroughputDetails {
	d := &otsprotocol.ReservedThroughputDetails{
		CapacityUnit:     &otsprotocol.CapacityUnit{Read: proto.Int32(t.readCU), Write: proto.Int32(t.writeCU)},
		LastIncreaseTime: proto.Int64(t.lastIncrease.Unix()),
	}
	if !t.lastDecrease.IsZero() {
		d.LastDecreaseTime = proto.Int64(t.lastDecrease.Unix())
	}
	return d
}

// streamDetails reports streams off: enabling one is refused (errUnsupported), so none is ever on.
func (t *table) streamDetails() *otsprotocol.StreamDetails {
	return &otsprotocol.StreamDetails{EnableStream: proto.Bool(false)}
}

// minLiveTS is the oldest timestamp (ms) still visible under the table's TTL.
func (t *table) minLiveTS(now time.Time) int64 {
	if t.ttl <= 0 {
		return 0
	}
	return now.UnixMilli() - int64(t.ttl)*1000
}

// readSpec is the read-side selection shared by GetRow, BatchGetRow and GetRange.
type readSpec struct {
	columns     []string // nil = all attribute columns
	maxVersions int32    // 0 = no version limit beyond the time range
	timeRange   bool
	start, end  int64 // [start, end) in ms
	startColumn string
	endColumn   string
	filter      *colFilter
}

// versionsFor returns the versions of one column visible to a read: live under
// TTL, inside the time range, at most maxVersions, newest first.
func (s *readSpec) versionsFor(vs []cellVersion, minTS int64) []cellVersion {
	var out []cellVersion
	for _, v := range vs {
		if v.ts < minTS {
			continue
		}
		if s.timeRange && (v.ts < s.start || v.ts >= s.end) {
			continue
		}
		out = append(out, v)
		if s.maxVersions > 0 && int32(len(out)) == s.maxVersions {
			break
		}
	}
	return out
}

// project applies a read to a stored row. ok is false when the service would
// answer "no row": nothing selected, or the filter rejected the row.
func (t *table) project(r *storedRow, s *readSpec, now time.Time) (cells []outCell, ok bool) {
	minTS := t.minLiveTS(now)
	if s.filter != nil && !s.filter.match(func(col string) []cellVersion {
		return s.versionsFor(r.cols[col], minTS)
	}) {
		return nil, false
	}
	names := make([]string, 0, len(r.cols))
	for name := range r.cols {
		if s.columns != nil && !slices.Contains(s.columns, name) {
			continue
		}
		if s.startColumn != "" && name < s.startColumn {
			continue
		}
		if s.endColumn != "" && name >= s.endColumn {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var pageOffset, pageLimit int32 = 0, -1
	if s.filter != nil && s.filter.kind == filterPagination {
		pageOffset, pageLimit = s.filter.offset, s.filter.limit
	}
	var seen int32
	for _, name := range names {
		vs := s.versionsFor(r.cols[name], minTS)
		if len(vs) == 0 {
			continue
		}
		seen++
		if seen <= pageOffset {
			continue
		}
		if pageLimit >= 0 && seen > pageOffset+pageLimit {
			break
		}
		for _, v := range vs {
			cells = append(cells, outCell{name: name, val: v.v, ts: v.ts})
		}
	}
	if len(cells) > 0 {
		return cells, true
	}
	// A plain read (no columns_to_get, column range or filter) still returns a row
	// that exists with its primary key and no columns: one PutRow created without
	// attributes, or one whose live versions all lie outside the read's time range
	// (the service does so; the SDK's TestBatchGetRow and TestGetRange expect it).
	plain := s.columns == nil && s.startColumn == "" && s.endColumn == "" && s.filter == nil
	return nil, plain && t.exists(r, now)
}

// liveColumns lists the columns with at least one version alive under TTL.
func liveColumns(r *storedRow, minTS int64) []string {
	var out []string
	for name, vs := range r.cols {
		if len(vs) > 0 && vs[0].ts >= minTS {
			out = append(out, name)
		}
	}
	return out
}

// exists reports whether a row counts as present for row-existence conditions.
func (t *table) exists(r *storedRow, now time.Time) bool {
	if r == nil {
		return false
	}
	return r.marker || len(liveColumns(r, t.minLiveTS(now))) > 0
}

// putVersion inserts a version, replacing one with the same timestamp, and trims
// the column to the table's max_versions.
func (t *table) putVersion(r *storedRow, name string, v cellVersion) {
	vs := r.cols[name]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].ts <= v.ts })
	if i < len(vs) && vs[i].ts == v.ts {
		vs[i] = v
	} else {
		vs = slices.Insert(vs, i, v)
	}
	if t.maxVersions > 0 && len(vs) > int(t.maxVersions) {
		vs = vs[:t.maxVersions]
	}
	r.cols[name] = vs
}

func (t *table) deleteVersion(r *storedRow, name string, ts int64) {
	vs := r.cols[name]
	vs = slices.DeleteFunc(vs, func(v cellVersion) bool { return v.ts == ts })
	if len(vs) == 0 {
		delete(r.cols, name)
		return
	}
	r.cols[name] = vs
}

func cloneRow(r *storedRow) *storedRow {
	c := &storedRow{pk: r.pk, cols: make(map[string][]cellVersion, len(r.cols)), marker: r.marker}
	for k, v := range r.cols {
		c.cols[k] = slices.Clone(v)
	}
	return c
}

// rowSize approximates a row's data size the way the service counts it (names
// plus values) for capacity units and page byte caps.
func rowSize(pk []pkCol, cells []outCell) int {
	n := 0
	for _, c := range pk {
		n += len(c.name) + c.val.size()
	}
	for _, c := range cells {
		n += len(c.name) + c.val.size() + 8
	}
	return n
}

// capacityUnits rounds a data size up to 4 KB units, at least one.
func capacityUnits(size int) int32 {
	return int32(max(1, (size+4095)/4096))
}

func validName(name string) bool {
	if name == "" || len(name) > 255 {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
