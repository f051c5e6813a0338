package dropin

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// getPlan is a Get rebuilt on the salted key, and how its result is shown to the caller.
type getPlan struct {
	get  *hrpc.Get
	phys []byte
	t    tableInfo
	// hide: drop the version column of a table with indexes (tableInfo.hides).
	hide bool
	// exists: the caller asked for existence only, and get reads the cells instead, since a row
	// holding the hidden column alone does not exist for the caller.
	exists bool
}

// rewriteGet rebuilds g on the salted key and checks that nothing else changed.
func (c *Client) rewriteGet(g *hrpc.Get) (getPlan, error) {
	table := string(g.Table())
	t, err := c.table(g.Context(), table)
	if err != nil {
		return getPlan{}, err
	}
	s := t.salter
	phys, err := physical(s, "Get", table, g.Key())
	if err != nil {
		return getPlan{}, err
	}
	want, ok := requestProto(g).(*pb.GetRequest)
	if !ok || want.Get == nil {
		return getPlan{}, unsupported("Get", table, "request of unexpected form")
	}
	plan := getPlan{phys: phys, t: t, hide: t.hides(want.Get.Column)}
	opts := g.Options()
	if !unsalted(s) {
		rest, pre, err := prefixes(want.Get.Filter)
		if err != nil {
			return getPlan{}, unsupported("Get", table, err.Error())
		}
		if err := checkFilter(rest, false); err != nil {
			return getPlan{}, unsupported("Get", table, err.Error())
		}
		if len(pre) > 0 {
			if !hasPrefixes(g.Key(), pre) {
				rest = noRowFilter(phys) // gohbase's Get would return no cells
			}
			want.Get.Filter = rest
			opts = append(opts, hrpc.Filters(pbFilter{rest}))
		}
	}
	ng, err := hrpc.NewGet(g.Context(), g.Table(), phys, opts...)
	if err != nil {
		return getPlan{}, fmt.Errorf("dropin: Get %q: %w", table, err)
	}
	switch {
	case want.Get.GetExistenceOnly() && plan.hide:
		plan.exists = true
		want.Get.ExistenceOnly = nil
	case want.Get.GetExistenceOnly():
		ng.ExistsOnly() // set by a method, not an option
	}
	want.Get.Row = phys
	if d := protoDiff(normalize(want), normalize(requestProto(ng))); len(d) > 0 {
		return getPlan{}, unsupported("Get", table, "cannot carry over "+strings.Join(d, ", "))
	}
	if g.SkipBatch() != ng.SkipBatch() {
		return getPlan{}, unsupported("Get", table, "cannot carry over skip_batch")
	}
	plan.get = ng
	return plan, nil
}

// rewriteMutate rebuilds m, of any mutation type, on the salted key and checks that nothing else
// changed. call names the Client method, for errors.
func (c *Client) rewriteMutate(call string, m *hrpc.Mutate) (*hrpc.Mutate, []byte, error) {
	if m == nil {
		return nil, nil, fmt.Errorf("dropin: %s: nil request", call)
	}
	table := string(m.Table())
	t, err := c.table(m.Context(), table)
	if err != nil {
		return nil, nil, err
	}
	if err := t.refuseWrite(call, table); err != nil {
		return nil, nil, err
	}
	phys, err := physical(t.salter, call, table, m.Key())
	if err != nil {
		return nil, nil, err
	}
	var build func(ctx context.Context, table, key []byte, values map[string]map[string][]byte, options ...func(hrpc.Call) error) (*hrpc.Mutate, error)
	switch m.Description() {
	case pb.MutationProto_PUT.String():
		build = hrpc.NewPut
	case pb.MutationProto_DELETE.String():
		build = hrpc.NewDel
	case pb.MutationProto_APPEND.String():
		build = hrpc.NewApp
	case pb.MutationProto_INCREMENT.String():
		build = hrpc.NewInc
	default:
		return nil, nil, unsupported(call, table, "mutation type "+m.Description())
	}
	nm, err := build(m.Context(), m.Table(), phys, m.Values(), m.Options()...)
	if err != nil {
		return nil, nil, fmt.Errorf("dropin: %s %q: %w", call, table, err)
	}
	want, ok := requestProto(m).(*pb.MutateRequest)
	if !ok || want.Mutation == nil {
		return nil, nil, unsupported(call, table, "request of unexpected form")
	}
	want.Mutation.Row = phys
	if d := protoDiff(normalize(want), normalize(requestProto(nm))); len(d) > 0 {
		return nil, nil, unsupported(call, table, "cannot carry over "+strings.Join(d, ", "))
	}
	// gohbase's conditional calls mark their mutation unbatchable themselves (CheckAndPut when it
	// sends, NewCheckAndMutate when it builds); anything else must match.
	if m.SkipBatch() != nm.SkipBatch() && !conditional[call] {
		return nil, nil, unsupported(call, table, "cannot carry over skip_batch")
	}
	return nm, phys, nil
}

// conditional names the calls whose mutation gohbase marks unbatchable itself.
var conditional = map[string]bool{"CheckAndPut": true, "CheckAndPutWithCompareType": true, "CheckAndMutate": true}

func unsupported(call, table, why string) error {
	return fmt.Errorf("dropin: %s %q: %w: %s", call, table, ErrUnsupported, why)
}

// protoRegion stands in for the region of a call that was never sent: ToProto reads the region's
// name, and a call's region is nil until gohbase routes it.
type protoRegion struct{ hrpc.RegionInfo }

func (protoRegion) Name() []byte { return nil }

// requestProto returns call's protobuf message without routing it. A call that was never sent gets a
// stand-in region for the duration (and then none again, as before).
func requestProto(call hrpc.Call) proto.Message {
	if call.Region() == nil {
		call.SetRegion(protoRegion{})
		defer call.SetRegion(nil)
	}
	return call.ToProto()
}

// normalize returns a copy of a request with what may legitimately differ between two builds of the
// same request removed: the region, and the order of columns (gohbase lists them from Go maps).
func normalize(m proto.Message) proto.Message {
	m = proto.Clone(m)
	sortColumns := func(cols []*pb.Column) {
		slices.SortFunc(cols, func(a, b *pb.Column) int { return bytes.Compare(a.Family, b.Family) })
	}
	switch r := m.(type) {
	case *pb.GetRequest:
		r.Region = nil
		if r.Get != nil {
			sortColumns(r.Get.Column)
		}
	case *pb.ScanRequest:
		r.Region = nil
		if r.Scan != nil {
			sortColumns(r.Scan.Column)
		}
	case *pb.MutateRequest:
		r.Region = nil
		if r.Mutation != nil {
			cvs := r.Mutation.ColumnValue
			slices.SortFunc(cvs, func(a, b *pb.MutationProto_ColumnValue) int { return bytes.Compare(a.Family, b.Family) })
			for _, cv := range cvs {
				slices.SortFunc(cv.QualifierValue, func(a, b *pb.MutationProto_ColumnValue_QualifierValue) int {
					return cmp.Or(bytes.Compare(a.Qualifier, b.Qualifier), bytes.Compare(a.Value, b.Value))
				})
			}
		}
	}
	return m
}

// protoDiff names the fields (as dotted paths) in which two messages of the same type differ.
func protoDiff(a, b proto.Message) []string {
	var out []string
	diffMessage(a.ProtoReflect(), b.ProtoReflect(), "", &out)
	return out
}

func diffMessage(a, b protoreflect.Message, path string, out *[]string) {
	fields := a.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := path + string(fd.Name())
		ha, hb := a.Has(fd), b.Has(fd)
		switch {
		case !ha && !hb:
		case ha && hb && fd.Kind() == protoreflect.MessageKind && fd.Cardinality() != protoreflect.Repeated:
			diffMessage(a.Get(fd).Message(), b.Get(fd).Message(), name+".", out)
		case ha != hb || !a.Get(fd).Equal(b.Get(fd)):
			*out = append(*out, name)
		}
	}
	if !bytes.Equal(a.GetUnknown(), b.GetUnknown()) {
		*out = append(*out, path+"<unknown fields>")
	}
}

const filterPath = "org.apache.hadoop.hbase.filter."

// Filters whose outcome for a row does not depend on its key, nor on rows before it in the scan.
var keyFreeFilters = map[string]bool{
	"ColumnCountGetFilter": true, "ColumnPaginationFilter": true, "ColumnPrefixFilter": true,
	"ColumnRangeFilter": true, "DependentColumnFilter": true, "FamilyFilter": true,
	"FirstKeyOnlyFilter": true, "FirstKeyValueMatchingQualifiersFilter": true, "KeyOnlyFilter": true,
	"MultipleColumnPrefixFilter": true, "QualifierFilter": true, "RandomRowFilter": true,
	"SingleColumnValueFilter": true, "SingleColumnValueExcludeFilter": true,
	"TimestampsFilter": true, "ValueFilter": true, "FilterAllFilter": true,
}

// checkFilter refuses filters the server would apply to physical keys, and, in a scan, filters that
// count or stop per region scanner (a bucket fan-out has more scanners than one unsalted scan).
func checkFilter(f *pb.Filter, scan bool) error {
	if f == nil {
		return nil
	}
	name, ok := strings.CutPrefix(f.GetName(), filterPath)
	if !ok {
		return fmt.Errorf("filter %s is not one of HBase's own", f.GetName())
	}
	var inner []*pb.Filter
	switch name {
	case "FilterList":
		var l pb.FilterList
		if err := proto.Unmarshal(f.SerializedFilter, &l); err != nil {
			return fmt.Errorf("filter %s: %w", name, err)
		}
		inner = l.Filters
	case "SkipFilter", "WhileMatchFilter", "FilterWrapper":
		if name == "WhileMatchFilter" && scan {
			return fmt.Errorf("filter %s in a Scan: it stops each bucket's scan on its own", name)
		}
		var w pb.FilterWrapper // SkipFilter and WhileMatchFilter have the same wire form
		if err := proto.Unmarshal(f.SerializedFilter, &w); err != nil {
			return fmt.Errorf("filter %s: %w", name, err)
		}
		inner = []*pb.Filter{w.Filter}
	case "PageFilter":
		if scan {
			return fmt.Errorf("filter %s in a Scan: it counts rows per region scanner, and buckets add scanners", name)
		}
	default:
		if !keyFreeFilters[name] {
			return fmt.Errorf("filter %s compares row keys (or is unknown), which are salted on the server", name)
		}
	}
	for _, in := range inner {
		if err := checkFilter(in, scan); err != nil {
			return err
		}
	}
	return nil
}
