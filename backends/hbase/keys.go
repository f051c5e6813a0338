package hbase

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// Limits on names and keys. HBase itself takes row keys up to 32767 bytes (a Java short holds the
// length), but gohbase locates a key's region by scanning hbase:meta from "<table>,<key>,:", and that
// start row must fit in 32767 bytes too: a longer one could never be located (gohbase would retry the
// lookup until ctx ends). With table names capped at MaxTableNameLen, every key up to MaxKeyLen can be.
const (
	MaxTableNameLen = 255
	MaxKeyLen       = 32767 - MaxTableNameLen - len(",,:")
)

// Table descriptor attributes that hold TableOptions.Meta. HBase drops an attribute whose value is
// empty, so an empty value is kept as a marker under its own prefix.
const (
	metaPrefix      = "brine.meta."
	metaEmptyPrefix = "brine.meta-empty."
)

// checkKey refuses a key HBase would not take (driverkit.CheckKey's rule, with HBase's limit).
func checkKey(key []byte) error {
	if err := driverkit.CheckKey(key, MaxKeyLen); err != nil {
		return fmt.Errorf("hbase: %w", err)
	}
	return nil
}

// checkTable accepts HBase table names: a qualifier by HBase's rules, in the default namespace or
// after a namespace of its own ("ns:table", "hbase:meta").
func checkTable(name string) error {
	ns, q, hasNS := strings.Cut(name, ":")
	if !hasNS {
		ns, q = "", name
	}
	bad := q == "" || q[0] == '.' || q[0] == '-' || len(name) > MaxTableNameLen || hasNS && ns == ""
	for i := 0; i < len(q) && !bad; i++ {
		c := q[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.')
	}
	for i := 0; i < len(ns) && !bad; i++ {
		c := ns[i]
		bad = !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')
	}
	if bad {
		return fmt.Errorf("hbase: %w: table name %q (want [namespace:]qualifier: namespace [A-Za-z0-9_]+, qualifier [A-Za-z0-9_.-]+ not starting with '.' or '-')", backends.ErrInvalidArgument, name)
	}
	return nil
}

// tableName is name as HBase's protobuf TableName. gohbase's admin requests always say "default", so
// brine builds the ones that name a table itself.
func tableName(name string) *pb.TableName {
	ns, q, ok := strings.Cut(name, ":")
	if !ok {
		ns, q = "default", name
	}
	return &pb.TableName{Namespace: []byte(ns), Qualifier: []byte(q)}
}

// sameTable says whether a TableName from the server names the table called name.
func sameTable(tn *pb.TableName, name string) bool {
	want := tableName(name)
	ns := string(tn.GetNamespace())
	if ns == "" {
		ns = "default"
	}
	return ns == string(want.Namespace) && string(tn.GetQualifier()) == string(want.Qualifier)
}

// checkFamily applies HBase's rules for a column family name.
func checkFamily(f string) error {
	bad := f == "" || f[0] == '.'
	for i := 0; i < len(f) && !bad; i++ {
		bad = f[i] < 0x20 || f[i] == 0x7f || f[i] == ':' || f[i] == '\\' || f[i] == '/'
	}
	if bad {
		return fmt.Errorf("hbase: %w: column family %q", backends.ErrInvalidArgument, f)
	}
	return nil
}

// familyAttributes turns a family's settings into the descriptor attributes HBase reads (gohbase's
// hrpc.NewCreateTable fills in the rest with its own defaults).
func familyAttributes(o backends.FamilyOptions) map[string]string {
	attrs := map[string]string{"VERSIONS": strconv.Itoa(max(1, o.MaxVersions))}
	if o.TTL > 0 {
		attrs["TTL"] = strconv.FormatInt(int64(o.TTL/time.Second), 10)
	}
	if o.Compression != "" {
		attrs["COMPRESSION"] = strings.ToUpper(o.Compression)
	}
	if o.BlockCache != nil {
		attrs["BLOCKCACHE"] = strconv.FormatBool(*o.BlockCache)
	}
	if o.BloomFilter != "" {
		attrs["BLOOMFILTER"] = strings.ToUpper(o.BloomFilter)
	}
	return attrs
}

// familiesOption turns brine's column selection into gohbase's: a Column with an empty Qualifier
// selects its whole family, which wins over single qualifiers of the same family.
func familiesOption(cols []backends.Column) (map[string][]string, error) {
	if len(cols) == 0 {
		return nil, nil
	}
	whole := map[string]bool{}
	fams := map[string][]string{}
	for _, c := range cols {
		if err := checkFamily(c.Family); err != nil {
			return nil, err
		}
		if c.Qualifier == "" {
			whole[c.Family] = true
			continue
		}
		fams[c.Family] = append(fams[c.Family], c.Qualifier)
	}
	for f := range whole {
		fams[f] = nil
	}
	return fams, nil
}

// readOptions turns brine's read options into gohbase's: the columns, the versions and the time
// range, checked before anything is sent.
func readOptions(opts backends.ReadOptions) ([]func(hrpc.Call) error, []backends.Filter, error) {
	fams, err := familiesOption(opts.Columns)
	if err != nil {
		return nil, nil, err
	}
	tr := opts.TimeRange
	if opts.MaxVersions < 0 || tr.From < 0 || tr.To < 0 || (tr.To != 0 && tr.To <= tr.From) {
		return nil, nil, fmt.Errorf("hbase: %w: max versions %d, time range [%d, %d)", backends.ErrInvalidArgument, opts.MaxVersions, tr.From, tr.To)
	}
	if err := driverkit.CheckFilter(opts.Filter, opts.Columns); err != nil {
		return nil, nil, fmt.Errorf("hbase: %w", err)
	}
	var out []func(hrpc.Call) error
	server, trim := serverFilters(opts.Filter, opts.MaxVersions)
	if server != nil {
		out = append(out, hrpc.Filters(server))
	}
	if fams != nil {
		out = append(out, hrpc.Families(fams))
	}
	if opts.MaxVersions > 1 {
		out = append(out, hrpc.MaxVersions(uint32(opts.MaxVersions)))
	}
	if tr != (backends.TimeRange{}) {
		to := uint64(math.MaxInt64) // HBase's own "no upper bound"
		if tr.To != 0 {
			to = uint64(tr.To)
		}
		out = append(out, hrpc.TimeRangeUint64(uint64(tr.From), to))
	}
	return out, trim, nil
}

// metaAttributes encodes TableOptions.Meta as table descriptor attributes, in a stable order.
func metaAttributes(meta map[string]string) ([]*pb.BytesBytesPair, error) {
	attrs := make([]*pb.BytesBytesPair, 0, len(meta))
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if k == "" {
			return nil, fmt.Errorf("hbase: %w: empty table meta key", backends.ErrInvalidArgument)
		}
		if meta[k] == "" {
			attrs = append(attrs, &pb.BytesBytesPair{First: []byte(metaEmptyPrefix + k), Second: []byte("-")})
			continue
		}
		attrs = append(attrs, &pb.BytesBytesPair{First: []byte(metaPrefix + k), Second: []byte(meta[k])})
	}
	return attrs, nil
}

// metaFromSchema reads brine's entries back from a table descriptor.
func metaFromSchema(s *pb.TableSchema) map[string]string {
	meta := map[string]string{}
	for _, a := range s.GetAttributes() {
		if k, ok := strings.CutPrefix(string(a.GetFirst()), metaPrefix); ok {
			meta[k] = string(a.GetSecond())
		} else if k, ok := strings.CutPrefix(string(a.GetFirst()), metaEmptyPrefix); ok {
			meta[k] = ""
		}
	}
	return meta
}

// rowFromCells converts one row's cells (all of the same row) to brine's form, sorted by family then
// qualifier as the contract requires (sortCells).
func rowFromCells(key []byte, cells []*pb.Cell) backends.Row {
	row := backends.Row{Key: key}
	if len(cells) == 0 {
		return row
	}
	row.Cells = make([]backends.Cell, 0, len(cells))
	for _, c := range cells {
		if c.GetCellType() != pb.CellType_PUT {
			continue // a server never returns delete markers to a plain read; be safe anyway
		}
		row.Cells = append(row.Cells, backends.Cell{
			Family:    string(c.GetFamily()),
			Qualifier: string(c.GetQualifier()),
			Value:     c.GetValue(),
			Timestamp: int64(c.GetTimestamp()),
		})
	}
	sortCells(row.Cells)
	return row
}

// rowFromCellsV2 is rowFromCells for the cells of a scan response (hrpc.CellV2, views into the
// response's cell block).
func rowFromCellsV2(key []byte, cells []hrpc.CellV2) backends.Row {
	row := backends.Row{Key: key}
	if len(cells) == 0 {
		return row
	}
	row.Cells = make([]backends.Cell, 0, len(cells))
	for _, c := range cells {
		if c.CellType() != pb.CellType_PUT {
			continue
		}
		row.Cells = append(row.Cells, backends.Cell{
			Family:    string(c.Family()),
			Qualifier: string(c.Qualifier()),
			Value:     c.Value(),
			Timestamp: int64(c.Timestamp()),
		})
	}
	sortCells(row.Cells)
	return row
}

// sortCells puts one row's cells in the contract's order, family then qualifier. HBase returns them
// in that order already; sorting costs nothing then, and keeps the promise if a server ever does not.
func sortCells(cells []backends.Cell) {
	slices.SortStableFunc(cells, func(a, b backends.Cell) int {
		return cmp.Or(strings.Compare(a.Family, b.Family), strings.Compare(a.Qualifier, b.Qualifier))
	})
}

// pbCells views gohbase's result cells as protobuf cells (hrpc.Cell is a pb.Cell).
func pbCells(r *hrpc.Result) []*pb.Cell {
	if r == nil {
		return nil
	}
	out := make([]*pb.Cell, len(r.Cells))
	for i, c := range r.Cells {
		out[i] = (*pb.Cell)(c)
	}
	return out
}

// regionSpan is one online region of a table: [Start, End), End empty for the last region, and the
// region server serving it when asked for (RegionServers).
type regionSpan struct {
	Start, End []byte
	Server     string
	Name       string // the region's name (its hbase:meta row), when read from hbase:meta
}

// spanFromMetaRow parses an hbase:meta row's info:regioninfo cell ("PBUF" + RegionInfo). ok is false
// for rows that do not describe an online region of table: split parents and offlined regions stay in
// meta for a while after a split, and a scan over "table," could in theory meet other tables.
func spanFromMetaRow(table string, cells []*pb.Cell) (span regionSpan, ok bool, err error) {
	for _, c := range cells {
		if string(c.GetFamily()) != "info" || string(c.GetQualifier()) != "regioninfo" {
			continue
		}
		v := c.GetValue()
		if len(v) < 4 || binary.BigEndian.Uint32(v[:4]) != 0x50425546 { // "PBUF"
			return regionSpan{}, false, fmt.Errorf("hbase: unexpected region info in hbase:meta row %q", c.GetRow())
		}
		var ri pb.RegionInfo
		if err := proto.Unmarshal(v[4:], &ri); err != nil {
			return regionSpan{}, false, fmt.Errorf("hbase: decode region info of hbase:meta row %q: %w", c.GetRow(), err)
		}
		if !sameTable(ri.GetTableName(), table) || ri.GetOffline() || ri.GetSplit() || ri.GetReplicaId() != 0 {
			return regionSpan{}, false, nil
		}
		return regionSpan{Start: ri.GetStartKey(), End: ri.GetEndKey()}, true, nil
	}
	return regionSpan{}, false, nil
}

// metaScanRange is the hbase:meta row range holding the regions of a table: rows
// "[ns:]table,<start key>,<region id>..." sort, by hbase:meta's own comparator, from "table,," to
// just before "table ,," (a space sorts below ',' and cannot occur in a table name).
func metaScanRange(table string) (start, stop []byte) {
	return []byte(table + ",,"), []byte(table + " ,,")
}
