package hbase

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"github.com/tsuna/gohbase/region"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

func TestClassify(t *testing.T) {
	java := func(class string) error {
		return fmt.Errorf("HBase Java exception %s:\n%s: details\n\tat somewhere", class, class)
	}
	tests := []struct {
		name string
		err  error
		want errKind
	}{
		{"gohbase table not found", gohbase.TableNotFound, kindNotFound},
		{"wrapped table not found", fmt.Errorf("x: %w", gohbase.TableNotFound), kindNotFound},
		{"java table not found", java("org.apache.hadoop.hbase.TableNotFoundException"), kindNotFound},
		{"procedure table exists", errors.New("procedure exception: org.apache.hadoop.hbase.TableExistsException: t"), kindExists},
		{"java table exists", java("org.apache.hadoop.hbase.TableExistsException"), kindExists},
		{"not enabled", java("org.apache.hadoop.hbase.TableNotEnabledException"), kindNotEnabled},
		{"no such family", java("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"), kindInvalid},
		{"cell too large", errors.New("HBase Java exception org.apache.hadoop.hbase.DoNotRetryIOException:\nCell with size 20971620 exceeds limit of 10485760 bytes"), kindInvalid},
		{"other do-not-retry", java("org.apache.hadoop.hbase.DoNotRetryIOException"), kindOther},
		{"region too busy", java("org.apache.hadoop.hbase.RegionTooBusyException"), kindRetryable},
		{"unknown scanner", java("org.apache.hadoop.hbase.UnknownScannerException"), kindRetryable},
		{"lease gone", java("org.apache.hadoop.hbase.regionserver.LeaseException"), kindRetryable},
		{"please hold", java("org.apache.hadoop.hbase.PleaseHoldException"), kindRetryable},
		{"gohbase retryable", region.RetryableError{}, kindRetryable},
		{"gohbase not serving", region.NotServingRegionError{}, kindRetryable},
		{"gohbase server error", fmt.Errorf("x: %w", region.ServerError{}), kindRetryable},
		{"cannot find region", gohbase.ErrCannotFindRegion, kindRetryable},
		{"ctx", context.Canceled, kindOther},
		{"plain", errors.New("boom"), kindOther},
		{"nil", nil, kindOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.err); got != tc.want {
				t.Errorf("classify(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestWrapErr(t *testing.T) {
	tests := []struct {
		err       error
		sentinel  error
		retryable bool
	}{
		{gohbase.TableNotFound, backends.ErrTableNotFound, false},
		{errors.New("procedure exception: org.apache.hadoop.hbase.TableExistsException: t"), backends.ErrTableExists, false},
		{errors.New("HBase Java exception org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException:"), backends.ErrInvalidArgument, false},
		{region.RetryableError{}, nil, true},
		{errors.New("boom"), nil, false},
	}
	for _, tc := range tests {
		got := wrapErr("op", "t", tc.err)
		if !errors.Is(got, tc.err) {
			t.Errorf("wrapErr(%v) = %v: lost the original error", tc.err, got)
		}
		if tc.sentinel != nil && !errors.Is(got, tc.sentinel) {
			t.Errorf("wrapErr(%v) = %v, want it to wrap %v", tc.err, got, tc.sentinel)
		}
		if driverkit.IsRetryable(got) != tc.retryable {
			t.Errorf("IsRetryable(wrapErr(%v)) = %v, want %v", tc.err, !tc.retryable, tc.retryable)
		}
		if !strings.HasPrefix(got.Error(), `hbase: op "t": `) {
			t.Errorf("wrapErr text %q lacks context", got)
		}
	}
	if wrapErr("op", "t", nil) != nil {
		t.Error("wrapErr(nil) != nil")
	}
}

func TestJavaErrorKeepsTraceOutOfText(t *testing.T) {
	const class = "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException"
	trace := class + ": Column family zz does not exist in region t,,1.abc in table 't'\n" +
		"\tat org.apache.hadoop.hbase.regionserver.HRegion.checkFamily(HRegion.java:8210)\n" +
		"\tat org.apache.hadoop.hbase.ipc.RpcServer.call(RpcServer.java:437)\n"
	orig := region.RetryableError{}
	raw := fmt.Errorf("HBase Java exception %s:\n%s", class, trace)
	for _, err := range []error{raw, fmt.Errorf("gohbase: %w", raw)} {
		got := wrapErr("read", "t", err)
		want := `hbase: read "t": brine: invalid argument: ` + class + `: Column family zz does not exist in region t,,1.abc in table 't'`
		if got.Error() != want {
			t.Errorf("wrapErr text:\n got  %q\n want %q", got, want)
		}
		var je *JavaError
		if !errors.As(got, &je) || je.Class != class || je.Trace != trace {
			t.Errorf("wrapErr(%v): JavaError %+v, want class %s and the whole trace", err, je, class)
		}
		if !errors.Is(got, err) || !errors.Is(got, backends.ErrInvalidArgument) {
			t.Errorf("wrapErr(%v) = %v: lost the original error or the sentinel", err, got)
		}
		// Code that classifies an error wrapErr made (a scan deciding to restart) still sees the class.
		if k := classify(got); k != kindInvalid {
			t.Errorf("classify(wrapErr(%v)) = %v, want kindInvalid", err, k)
		}
	}
	retry := wrapErr("scan", "t", fmt.Errorf("HBase Java exception org.apache.hadoop.hbase.UnknownScannerException:\norg.apache.hadoop.hbase.UnknownScannerException: Unknown scanner '1'.\n\tat x.y(Z.java:1)\n"))
	if classify(retry) != kindRetryable || !driverkit.IsRetryable(retry) || strings.Contains(retry.Error(), "\n") {
		t.Errorf("wrapped UnknownScannerException %q: classify %v, want retryable on one line", retry, classify(retry))
	}
	if got := javaError(orig); got != error(orig) {
		t.Errorf("javaError changed a non-Java error: %v", got)
	}
}

func TestRPCErrTimeouts(t *testing.T) {
	live := context.Background()
	if err := rpcErr(live, "read", "t", context.DeadlineExceeded); !driverkit.IsRetryable(err) {
		t.Errorf("per-request timeout with a live caller ctx: %v, want retryable", err)
	}
	done, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	if err := rpcErr(done, "read", "t", context.DeadlineExceeded); driverkit.IsRetryable(err) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's own deadline: %v, want a plain DeadlineExceeded", err)
	}
}

func TestCheckKey(t *testing.T) {
	if MaxKeyLen != 32509 {
		t.Fatalf("MaxKeyLen = %d, want 32767-255-3", MaxKeyLen)
	}
	tests := []struct {
		key []byte
		ok  bool
	}{
		{nil, false},
		{[]byte{}, false},
		{[]byte{0}, true},
		{[]byte{0xff}, true},
		{bytes.Repeat([]byte{1}, MaxKeyLen), true},
		{bytes.Repeat([]byte{1}, MaxKeyLen+1), false},
		{bytes.Repeat([]byte{1}, 32768), false},
	}
	for _, tc := range tests {
		err := checkKey(tc.key)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, backends.ErrInvalidKey)) {
			t.Errorf("checkKey(len %d) = %v, want ok=%v", len(tc.key), err, tc.ok)
		}
	}
}

func TestCheckNames(t *testing.T) {
	tables := map[string]bool{
		"t": true, "brine_meta": true, "a.b-c_1": true, "": false, ".t": false, "-t": false,
		"ns:t": true, "hbase:meta": true, "ns_1:a.b": true, ":t": false, "ns:": false, "n-s:t": false,
		"ns:.t": false, "a:b:c": false, "t t": false, "t/x": false, strings.Repeat("t", 256): false,
	}
	for name, ok := range tables {
		if err := checkTable(name); (err == nil) != ok || (err != nil && !errors.Is(err, backends.ErrInvalidArgument)) {
			t.Errorf("checkTable(%q) = %v, want ok=%v", name, err, ok)
		}
	}
	families := map[string]bool{"d": true, "cf-1": true, "": false, ".d": false, "a:b": false, "a\x00": false, "a/b": false}
	for f, ok := range families {
		if err := checkFamily(f); (err == nil) != ok {
			t.Errorf("checkFamily(%q) = %v, want ok=%v", f, err, ok)
		}
	}
}

func TestFamiliesOption(t *testing.T) {
	got, err := familiesOption([]backends.Column{
		{Family: "d", Qualifier: "a"}, {Family: "e"}, {Family: "d", Qualifier: "b"}, {Family: "e", Qualifier: "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got["d"], []string{"a", "b"}) || got["e"] != nil {
		t.Errorf("familiesOption = %v, want d:[a b], e:whole family", got)
	}
	if got, err := familiesOption(nil); got != nil || err != nil {
		t.Errorf("familiesOption(nil) = %v, %v", got, err)
	}
	if _, err := familiesOption([]backends.Column{{Family: ""}}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("empty family: %v", err)
	}
}

func TestMetaAttributesRoundTrip(t *testing.T) {
	meta := map[string]string{"salt": `{"buckets":16}`, "empty": "", "ünï": "cöde"}
	attrs, err := metaAttributes(meta)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attrs {
		if len(a.GetSecond()) == 0 {
			t.Errorf("attribute %q has an empty value: HBase would drop it", a.GetFirst())
		}
	}
	schema := &pb.TableSchema{Attributes: append(attrs, &pb.BytesBytesPair{First: []byte("DURABILITY"), Second: []byte("ASYNC_WAL")})}
	if got := metaFromSchema(schema); fmt.Sprint(got) != fmt.Sprint(meta) {
		t.Errorf("round trip = %v, want %v", got, meta)
	}
	if _, err := metaAttributes(map[string]string{"": "x"}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("empty key: %v", err)
	}
	if got := metaFromSchema(&pb.TableSchema{}); got == nil || len(got) != 0 {
		t.Errorf("no attributes: %v, want an empty map", got)
	}
}

func metaRow(t *testing.T, ri *pb.RegionInfo) []*pb.Cell {
	t.Helper()
	v, err := proto.Marshal(ri)
	if err != nil {
		t.Fatal(err)
	}
	val := binary.BigEndian.AppendUint32(nil, 0x50425546)
	return []*pb.Cell{
		{Row: []byte("row"), Family: []byte("info"), Qualifier: []byte("server"), Value: []byte("localhost:16020")},
		{Row: []byte("row"), Family: []byte("info"), Qualifier: []byte("regioninfo"), Value: append(val, v...)},
	}
}

func TestSpanFromMetaRow(t *testing.T) {
	id := uint64(1)
	name := func(table string) *pb.TableName {
		return &pb.TableName{Namespace: []byte("default"), Qualifier: []byte(table)}
	}
	tests := []struct {
		name string
		ri   *pb.RegionInfo
		ok   bool
	}{
		{"online", &pb.RegionInfo{RegionId: &id, TableName: name("t"), StartKey: []byte("a"), EndKey: []byte("b")}, true},
		{"other table", &pb.RegionInfo{RegionId: &id, TableName: name("t2"), StartKey: []byte("a")}, false},
		{"split parent", &pb.RegionInfo{RegionId: &id, TableName: name("t"), Split: proto.Bool(true), Offline: proto.Bool(true)}, false},
		{"offline", &pb.RegionInfo{RegionId: &id, TableName: name("t"), Offline: proto.Bool(true)}, false},
		{"replica", &pb.RegionInfo{RegionId: &id, TableName: name("t"), ReplicaId: proto.Int32(1)}, false},
		{"other namespace", &pb.RegionInfo{RegionId: &id, TableName: &pb.TableName{Namespace: []byte("ns"), Qualifier: []byte("t")}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			span, ok, err := spanFromMetaRow("t", metaRow(t, tc.ri))
			if err != nil || ok != tc.ok {
				t.Fatalf("got ok=%v err=%v, want ok=%v", ok, err, tc.ok)
			}
			if ok && (string(span.Start) != "a" || string(span.End) != "b") {
				t.Errorf("span = %q..%q", span.Start, span.End)
			}
		})
	}
	bad := []*pb.Cell{{Family: []byte("info"), Qualifier: []byte("regioninfo"), Value: []byte("junk")}}
	if _, _, err := spanFromMetaRow("t", bad); err == nil {
		t.Error("junk region info: no error")
	}
}

func TestMetaScanRange(t *testing.T) {
	start, stop := metaScanRange("tbl")
	if string(start) != "tbl,," || string(stop) != "tbl ,," {
		t.Errorf("metaScanRange = %q, %q", start, stop)
	}
}

func TestRowFromCells(t *testing.T) {
	ts := func(v uint64) *uint64 { return &v }
	cells := []*pb.Cell{
		{Row: []byte("k"), Family: []byte("e"), Qualifier: []byte("a"), Value: []byte("1"), Timestamp: ts(5), CellType: pb.CellType_PUT.Enum()},
		{Row: []byte("k"), Family: []byte("d"), Qualifier: []byte("b"), Value: []byte("2"), Timestamp: ts(6), CellType: pb.CellType_PUT.Enum()},
		{Row: []byte("k"), Family: []byte("d"), Qualifier: []byte("a"), Timestamp: ts(7), CellType: pb.CellType_DELETE.Enum()},
		{Row: []byte("k"), Family: []byte("d"), Qualifier: []byte("a"), Value: []byte("3"), Timestamp: ts(8), CellType: pb.CellType_PUT.Enum()},
	}
	row := rowFromCells([]byte("k"), cells)
	var got []string
	for _, c := range row.Cells {
		got = append(got, fmt.Sprintf("%s:%s=%s@%d", c.Family, c.Qualifier, c.Value, c.Timestamp))
	}
	if want := []string{"d:a=3@8", "d:b=2@6", "e:a=1@5"}; !slices.Equal(got, want) {
		t.Errorf("cells = %v, want %v", got, want)
	}
	if r := rowFromCells([]byte("k"), nil); r.Cells != nil || string(r.Key) != "k" {
		t.Errorf("empty row = %+v", r)
	}
}

func TestSameTimestampAndMutationProto(t *testing.T) {
	if ts, ok := sameTimestamp(nil); !ok || ts != 0 {
		t.Errorf("sameTimestamp(nil) = %d, %v", ts, ok)
	}
	mixed := []backends.Cell{
		{Family: "d", Qualifier: "a", Value: []byte("A"), Timestamp: 10},
		{Family: "e", Qualifier: "b", Value: nil},
		{Family: "d", Qualifier: "c", Value: []byte("C"), Timestamp: 20},
	}
	if _, ok := sameTimestamp(mixed); ok {
		t.Error("sameTimestamp(mixed) = true")
	}
	if ts, ok := sameTimestamp(mixed[:1]); !ok || ts != 10 {
		t.Errorf("sameTimestamp(one) = %d, %v", ts, ok)
	}

	mp := mutationProto(backends.Mutation{Key: []byte("k"), Cells: mixed}, 0)
	if mp.GetMutateType() != pb.MutationProto_PUT || string(mp.GetRow()) != "k" || len(mp.ColumnValue) != 2 {
		t.Fatalf("put proto = %v", mp)
	}
	d := mp.ColumnValue[0]
	if string(d.Family) != "d" || len(d.QualifierValue) != 2 || d.QualifierValue[0].GetTimestamp() != 10 || d.QualifierValue[1].GetTimestamp() != 20 {
		t.Errorf("family d = %v", d)
	}
	e := mp.ColumnValue[1].QualifierValue[0]
	if e.Timestamp != nil || e.Value == nil {
		t.Errorf("family e cell = %v, want no timestamp (server clock) and a non-nil empty value", e)
	}

	// A delete's cell with a timestamp is that one version; one without, every version up to 99.
	del := mutationProto(backends.Mutation{Key: []byte("k"), Delete: true, Cells: mixed}, 99)
	for _, cv := range del.ColumnValue {
		for _, qv := range cv.QualifierValue {
			want, ts := pb.MutationProto_DELETE_MULTIPLE_VERSIONS, uint64(99)
			if string(qv.Qualifier) != "b" {
				want, ts = pb.MutationProto_DELETE_ONE_VERSION, map[string]uint64{"a": 10, "c": 20}[string(qv.Qualifier)]
			}
			if qv.GetDeleteType() != want || qv.Value != nil || qv.GetTimestamp() != ts {
				t.Errorf("delete cell = %v, want %v at %d", qv, want, ts)
			}
		}
	}

	// A whole family: DELETE_FAMILY, first in its family's list (HBase's addFamily clears the list).
	fam := mutationProto(backends.Mutation{Key: []byte("k"), Delete: true, Cells: []backends.Cell{
		{Family: "d", Qualifier: "a"}, {Family: "d"}, {Family: "e", Qualifier: "b"},
	}}, 7)
	if len(fam.ColumnValue) != 2 || len(fam.ColumnValue[0].QualifierValue) != 2 {
		t.Fatalf("family delete proto = %v", fam)
	}
	first := fam.ColumnValue[0].QualifierValue[0]
	if first.GetDeleteType() != pb.MutationProto_DELETE_FAMILY || first.Qualifier != nil || first.GetTimestamp() != 7 {
		t.Errorf("family delete = %v, want DELETE_FAMILY up to 7 first", first)
	}
	row := mutationProto(backends.Mutation{Key: []byte("k"), Delete: true}, 5)
	if row.GetMutateType() != pb.MutationProto_DELETE || len(row.ColumnValue) != 0 || row.GetTimestamp() != 5 {
		t.Errorf("row delete = %v, want a whole-row delete up to 5", row)
	}
}

func TestCheckMutation(t *testing.T) {
	tests := []struct {
		m    backends.Mutation
		want error
	}{
		{backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d"}}}, nil},
		{backends.Mutation{Key: nil}, backends.ErrInvalidKey},
		{backends.Mutation{Key: []byte("k")}, backends.ErrInvalidArgument},
		{backends.Mutation{Key: []byte("k"), Delete: true}, nil},
		{backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: ""}}}, backends.ErrInvalidArgument},
		{backends.Mutation{Key: []byte("k"), Cells: []backends.Cell{{Family: "d", Timestamp: -5}}}, backends.ErrInvalidArgument},
	}
	for i, tc := range tests {
		if err := checkMutation(tc.m); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("%d: checkMutation = %v, want %v", i, err, tc.want)
		}
	}
}

func TestCustomCallProtos(t *testing.T) {
	ctx := context.Background()
	ct := &createTableCall{
		CreateTable: hrpc.NewCreateTable(ctx, []byte("t"), map[string]map[string]string{"d": {"VERSIONS": "1"}}, hrpc.SplitKeys([][]byte{[]byte("m")})),
		attrs:       []*pb.BytesBytesPair{{First: []byte("brine.meta.k"), Second: []byte("v")}},
	}
	req := ct.ToProto().(*pb.CreateTableRequest)
	if a := req.GetTableSchema().GetAttributes(); len(a) != 1 || string(a[0].GetFirst()) != "brine.meta.k" {
		t.Errorf("create table attributes = %v", a)
	}
	if len(req.GetSplitKeys()) != 1 || len(req.GetTableSchema().GetColumnFamilies()) != 1 {
		t.Errorf("create table request lost splits or families: %v", req)
	}

	sc, err := hrpc.NewScanRange(ctx, []byte("t"), []byte("route"), nil, hrpc.Reversed())
	if err != nil {
		t.Fatal(err)
	}
	open := &openScan{Scan: sc, startRow: []byte("hi")}
	open.SetRegion(region.NewInfo(1, nil, []byte("t"), []byte("t,route,1.abc."), []byte("route"), []byte("z")))
	sreq := open.ToProto().(*pb.ScanRequest)
	if string(sreq.GetScan().GetStartRow()) != "hi" || !sreq.GetScan().GetReversed() || string(open.Key()) != "route" {
		t.Errorf("open scan: start row %q, reversed %v, routed by %q", sreq.GetScan().GetStartRow(), sreq.GetScan().GetReversed(), open.Key())
	}

	cm := &cellMutate{callBase: newCallBase(ctx, []byte("t"), []byte("k")), mutation: &pb.MutationProto{Row: []byte("k")}}
	cm.SetRegion(region.NewInfo(1, nil, []byte("t"), []byte("t,,1.abc."), nil, nil))
	mreq := cm.ToProto().(*pb.MutateRequest)
	if string(mreq.GetRegion().GetValue()) != "t,,1.abc." || string(mreq.GetMutation().GetRow()) != "k" || cm.Name() != "Mutate" {
		t.Errorf("cell mutate request = %v", mreq)
	}
	if _, batchable := any(cm).(hrpc.Batchable); batchable {
		t.Error("cellMutate must not be batchable: MultiRequest only knows gohbase's own calls")
	}

	mc := newMasterCall(ctx, "GetTableDescriptors", &pb.GetTableDescriptorsRequest{}, func() proto.Message { return &pb.GetTableDescriptorsResponse{} })
	if mc.Name() != "GetTableDescriptors" || mc.Table() != nil || mc.Key() != nil {
		t.Errorf("master call = %q %q %q", mc.Name(), mc.Table(), mc.Key())
	}
	if _, ok := mc.NewResponse().(*pb.GetTableDescriptorsResponse); !ok {
		t.Error("master call response type")
	}
}

func TestConfig(t *testing.T) {
	if err := (Config{}).validate(); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("empty quorum: %v", err)
	}
	if err := (Config{ZKQuorum: "h:1", Options: Options{RequestTimeout: -1}}).validate(); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("negative timeout: %v", err)
	}
	o := Options{}.withDefaults()
	if o.Concurrency <= 0 || o.ScanBatch <= 0 || o.Logger == nil {
		t.Errorf("defaults = %+v", o)
	}
	if got := len(Config{ZKQuorum: "h:1", ZKRoot: "/x", ZKTimeout: time.Second, EffectiveUser: "u"}.clientOptions(nil)); got != 4 {
		t.Errorf("clientOptions: %d options, want 4", got)
	}
}

// Open checks the znode parent its gohbase clients will use: a gohbase.ZookeeperRoot among
// ClientOptions wins over ZKRoot, as it does for the clients (it is applied after).
func TestZKRootFromClientOptions(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"default", Config{ZKQuorum: "h:1"}, ""},
		{"field", Config{ZKQuorum: "h:1", ZKRoot: "/a"}, "/a"},
		{"other options keep the field", Config{ZKQuorum: "h:1", ZKRoot: "/a",
			ClientOptions: []gohbase.Option{gohbase.EffectiveUser("u")}}, "/a"},
		{"option", Config{ZKQuorum: "h:1", ClientOptions: []gohbase.Option{gohbase.ZookeeperRoot("/b")}}, "/b"},
		{"option wins", Config{ZKQuorum: "h:1", ZKRoot: "/a",
			ClientOptions: []gohbase.Option{gohbase.ZookeeperRoot("/b")}}, "/b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.zkRoot(); got != tc.want {
				t.Errorf("zkRoot = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestFlushIntervalZero: gohbase's region clients treat an interval of 0 as unset (their default,
// 20 ms, then delays every lone call), so the driver's 0 must reach gohbase as a positive interval,
// and any other as itself. Read from the client's field, as zkRoot is; it fails if gohbase renames it.
func TestFlushIntervalZero(t *testing.T) {
	for _, tc := range []struct{ give, want time.Duration }{{0, time.Nanosecond}, {5 * time.Millisecond, 5 * time.Millisecond}} {
		c := gohbase.NewClient("h:1", FlushInterval(tc.give))
		f := reflect.ValueOf(c).Elem().FieldByName("flushInterval")
		if !f.IsValid() || time.Duration(f.Int()) != tc.want {
			t.Errorf("FlushInterval(%v): the client's flushInterval is %v, want %v", tc.give, f, tc.want)
		}
		c.Close()
	}
}

func TestNewNeedsClients(t *testing.T) {
	if _, err := New(nil, nil, Options{}); !errors.Is(err, backends.ErrInvalidArgument) {
		t.Errorf("New(nil, nil) = %v", err)
	}
}

// A quorum where nothing listens is an ErrNoCluster within the deadline, and the ZooKeeper client's
// goroutines are gone when it returns (gohbase's would not be: it is never started). Goroutines that
// were there before are not this Open's: with -tags integration, earlier tests' gohbase clients may
// still be winding down their region clients (see the README's Limits).
func TestOpenNoCluster(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err := Open(ctx, Config{ZKQuorum: "127.0.0.1:1"})
	if !errors.Is(err, ErrNoCluster) {
		t.Fatalf("Open: %v, want ErrNoCluster", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Open took %v past its 1.5 s deadline", d)
	}
}

func TestRegionsByServer(t *testing.T) {
	load := func(names ...string) *pb.ServerLoad {
		sl := &pb.ServerLoad{}
		for _, n := range names {
			sl.RegionLoads = append(sl.RegionLoads, &pb.RegionLoad{RegionSpecifier: &pb.RegionSpecifier{
				Type: pb.RegionSpecifier_REGION_NAME.Enum(), Value: []byte(n)}})
		}
		return sl
	}
	server := func(host string, port uint32) *pb.ServerName {
		return &pb.ServerName{HostName: proto.String(host), Port: proto.Uint32(port), StartCode: proto.Uint64(1)}
	}
	tests := []struct {
		name string
		st   *pb.ClusterStatus
		want map[string]string
	}{
		{"none", &pb.ClusterStatus{}, map[string]string{}},
		{"two servers", &pb.ClusterStatus{LiveServers: []*pb.LiveServerInfo{
			{Server: server("rs1", 16020), ServerLoad: load("t,,1.a.", "t,b,2.b.")},
			{Server: server("rs2", 16021), ServerLoad: load("t,c,3.c.")},
		}}, map[string]string{"t,,1.a.": "rs1:16020", "t,b,2.b.": "rs1:16020", "t,c,3.c.": "rs2:16021"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := regionsByServer(tc.st); !maps.Equal(got, tc.want) {
				t.Errorf("regionsByServer = %v, want %v", got, tc.want)
			}
		})
	}
}
