package dropin

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/internal/testkit"
)

// The SDK's sample programs (sample/*.go of aliyun-tablestore-go-sdk v4.1.3), call for call, on a
// client of the SDK's interface: the only change a program needs to run them through the drop-in is
// the line that makes its client. Each call's response or error is recorded.

type recorder struct {
	t     *testing.T
	calls []string // "name: response or error"
}

func (r *recorder) add(name string, resp any, err error) {
	if err != nil {
		if oe, ok := err.(*ots.OtsError); ok {
			r.calls = append(r.calls, fmt.Sprintf("%s: error %s %s", name, oe.Code, oe.Message))
			return
		}
		r.t.Fatalf("%s: %v", name, err) // not a service error: the drop-in's own
	}
	r.calls = append(r.calls, name+":")
	for _, f := range fields(reflect.ValueOf(resp), "") {
		// A salted GetRange reads every bucket, and its capacity is the sum of those reads.
		if strings.HasPrefix(name, "GetRange") && strings.HasPrefix(f, ".ConsumedCapacityUnit.") {
			continue
		}
		r.calls = append(r.calls, name+": "+f)
	}
}

// fields lists every exported field of v as path=value. RequestId and cell timestamps, which the
// server assigns per request, are left out.
func fields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Invalid:
		return []string{path + "=<nil>"}
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return []string{path + "=<nil>"}
		}
		return fields(v.Elem(), path)
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "RequestId" || (f.Name == "Timestamp" && v.Type() == reflect.TypeFor[ots.AttributeColumn]()) {
				continue
			}
			out = append(out, fields(v.Field(i), path+"."+f.Name)...)
		}
		return out
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return []string{fmt.Sprintf("%s=%q", path, v.Bytes())}
		}
		out := []string{fmt.Sprintf("%s.len=%d", path, v.Len())}
		for i := range v.Len() {
			out = append(out, fields(v.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		var out []string
		for _, k := range keys {
			out = append(out, fields(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k))...)
		}
		return out
	}
	return []string{fmt.Sprintf("%s=%v", path, v)}
}

func samplePK(pk1 string, pk2 int64) *ots.PrimaryKey {
	pk := new(ots.PrimaryKey)
	pk.AddPrimaryKeyColumn("pk1", pk1)
	pk.AddPrimaryKeyColumn("pk2", pk2)
	pk.AddPrimaryKeyColumn("pk3", []byte("pk3"))
	return pk
}

// updateRowWithIncrement is UpdateRowWithIncrement: a put, an increment, an increment returning
// the new value.
func updateRowWithIncrement(r *recorder, client ots.TableStoreApi, tableName, name string) {
	pk := func() *ots.PrimaryKey { return samplePK("pk1increment", 2) }
	ch := &ots.UpdateRowChange{TableName: tableName, PrimaryKey: pk()}
	ch.PutColumn("col2", int64(50))
	ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
	resp, err := client.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: ch})
	r.add(name+" put", resp, err)
	if err != nil {
		return
	}
	ch = &ots.UpdateRowChange{TableName: tableName, PrimaryKey: pk()}
	ch.IncrementColumn("col2", int64(10))
	ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
	resp, err = client.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: ch})
	r.add(name+" increment", resp, err)
	ch = &ots.UpdateRowChange{TableName: tableName, PrimaryKey: pk()}
	ch.IncrementColumn("col2", int64(30))
	ch.SetReturnIncrementValue()
	ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
	ch.AppendIncrementColumnToReturn("col2")
	resp, err = client.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: ch})
	r.add(name+" increment returned", resp, err)
}

// runSamples runs the table and row samples in the order of the SDK's sample.go.
func runSamples(r *recorder, client ots.TableStoreApi, tableName string) {
	updateRowWithIncrement(r, client, tableName, "UpdateRowWithIncrement before CreateTable")
	// CreateTableSample
	meta := new(ots.TableMeta)
	meta.TableName = tableName
	meta.AddPrimaryKeyColumn("pk1", ots.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumn("pk2", ots.PrimaryKeyType_INTEGER)
	meta.AddPrimaryKeyColumn("pk3", ots.PrimaryKeyType_BINARY)
	createResp, err := client.CreateTable(&ots.CreateTableRequest{TableMeta: meta,
		TableOption: &ots.TableOption{TimeToAlive: -1, MaxVersion: 3}, ReservedThroughput: &ots.ReservedThroughput{}})
	r.add("CreateTable", createResp, err)

	// DeleteTableSample: a table created to be deleted.
	meta.TableName = "tabletodeletesample"
	createResp, err = client.CreateTable(&ots.CreateTableRequest{TableMeta: meta,
		TableOption: &ots.TableOption{TimeToAlive: -1, MaxVersion: 3}, ReservedThroughput: &ots.ReservedThroughput{}})
	r.add("CreateTable tabletodeletesample", createResp, err)
	delTableResp, err := client.DeleteTable(&ots.DeleteTableRequest{TableName: "tabletodeletesample"})
	r.add("DeleteTable", delTableResp, err)
	meta.TableName = tableName

	listResp, err := client.ListTable()
	r.add("ListTable", listResp, err)

	updTable := &ots.UpdateTableRequest{TableName: tableName, TableOption: &ots.TableOption{TimeToAlive: -1, MaxVersion: 5}}
	updTableResp, err := client.UpdateTable(updTable)
	r.add("UpdateTable", updTableResp, err)

	descResp, err := client.DescribeTable(&ots.DescribeTableRequest{TableName: tableName})
	r.add("DescribeTable", descResp, err)

	// PutRowSample
	put := new(ots.PutRowChange)
	put.TableName = tableName
	put.PrimaryKey = samplePK("pk1value1", 2)
	put.AddColumn("col1", "col1data1")
	put.AddColumn("col2", int64(3))
	put.AddColumn("col3", []byte("test"))
	put.SetCondition(ots.RowExistenceExpectation_IGNORE)
	putResp, err := client.PutRow(&ots.PutRowRequest{PutRowChange: put})
	r.add("PutRow", putResp, err)

	// GetRowSample, before the update too, to see the put row
	getRow := func(name string) {
		crit := &ots.SingleRowQueryCriteria{TableName: tableName, PrimaryKey: samplePK("pk1value1", 2), MaxVersion: 1}
		resp, err := client.GetRow(&ots.GetRowRequest{SingleRowQueryCriteria: crit})
		r.add(name, resp, err)
		if err == nil {
			r.add(name+" ColumnMap", resp.GetColumnMap().Columns, nil)
		}
	}
	getRow("GetRow")

	// UpdateRowSample. The server stamps cells with its clock and the table keeps 5 versions, so the
	// pause makes the update a second version in both runs (DeleteRowSample's condition on col2 looks
	// at every version).
	time.Sleep(2 * time.Millisecond)
	upd := new(ots.UpdateRowChange)
	upd.TableName = tableName
	upd.PrimaryKey = samplePK("pk1value1", 2)
	upd.DeleteColumn("col1")
	upd.PutColumn("col2", int64(77))
	upd.PutColumn("col4", "newcol3")
	upd.SetCondition(ots.RowExistenceExpectation_EXPECT_EXIST)
	updResp, err := client.UpdateRow(&ots.UpdateRowRequest{UpdateRowChange: upd})
	r.add("UpdateRow", updResp, err)
	getRow("GetRow after UpdateRow")

	// DeleteRowSample, and again: the second finds no row.
	del := func(name string, col2 int64) {
		d := &ots.DeleteRowChange{TableName: tableName, PrimaryKey: samplePK("pk1value1", 2)}
		d.SetCondition(ots.RowExistenceExpectation_EXPECT_EXIST)
		d.SetColumnCondition(ots.NewSingleColumnCondition("col2", ots.CT_EQUAL, col2))
		resp, err := client.DeleteRow(&ots.DeleteRowRequest{DeleteRowChange: d})
		r.add(name, resp, err)
	}
	del("DeleteRow col2=3", 3)
	del("DeleteRow col2=77", 77)
	getRow("GetRow after DeleteRow")

	// BatchWriteRowSample
	bw := &ots.BatchWriteRowRequest{}
	for i := range 100 {
		ch := new(ots.PutRowChange)
		ch.TableName = tableName
		ch.PrimaryKey = samplePK("pk1value1", int64(i))
		ch.AddColumn("col1", "fixvalue")
		ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
		bw.AddRowChange(ch)
	}
	for i := range 30 { // a second partition-key value, so that GetRange crosses partitions
		ch := &ots.PutRowChange{TableName: tableName, PrimaryKey: samplePK(fmt.Sprintf("pk1value%d", i%3), int64(1000+i))}
		ch.AddColumn("col1", fmt.Sprintf("v%d", i))
		ch.SetCondition(ots.RowExistenceExpectation_IGNORE)
		bw.AddRowChange(ch)
	}
	bwResp, err := client.BatchWriteRow(bw)
	r.add("BatchWriteRow", bwResp, err)

	// BatchGetRowSample
	mq := &ots.MultiRowQueryCriteria{}
	for i := range 20 {
		mq.AddRow(samplePK("pk1value1", int64(i)))
	}
	mq.AddColumnToGet("col1")
	mq.AddRow(samplePK("pk1value2", 300))
	mq.MaxVersion = 1
	mq.TableName = tableName
	bgResp, err := client.BatchGetRow(&ots.BatchGetRowRequest{MultiRowQueryCriteria: []*ots.MultiRowQueryCriteria{mq}})
	r.add("BatchGetRow", bgResp, err)

	updateRowWithIncrement(r, client, tableName, "UpdateRowWithIncrement")

	// GetRangeSample: pages of 10 over the whole table, forward; then backward over a bounded range.
	getRange := func(name string, start, end *ots.PrimaryKey, dir ots.Direction) {
		crit := &ots.RangeRowQueryCriteria{TableName: tableName, StartPrimaryKey: start, EndPrimaryKey: end,
			Direction: dir, MaxVersion: 1, Limit: 10}
		req := &ots.GetRangeRequest{RangeRowQueryCriteria: crit}
		for page := 0; ; page++ {
			resp, err := client.GetRange(req)
			r.add(fmt.Sprintf("%s page %d", name, page), resp, err)
			if err != nil || resp.NextStartPrimaryKey == nil || page > 100 {
				return
			}
			req.RangeRowQueryCriteria.StartPrimaryKey = resp.NextStartPrimaryKey
		}
	}
	getRange("GetRange", infMin("pk1", "pk2", "pk3"), infMax("pk1", "pk2", "pk3"), ots.FORWARD)
	getRange("GetRange backward", samplePK("pk1value1", 1005), samplePK("pk1value0", 1010), ots.BACKWARD)
}

// TestSDKSamples: the SDK's samples through the drop-in return field for field what they return
// through the SDK on an unsalted table, on salted tables with text prefixes in the STRING partition
// key: the Tablestore guide's md5 hex digits of the partition key, a decimal bucket of the whole
// key's hash, and none. (The guide's 4 hex digits make 65536 buckets, which an unpruned GetRange
// reads one by one: TestAdoptGuideLayout uses them on a range that prunes to one bucket.)
func TestSDKSamples(t *testing.T) {
	raw := tablestoretest.Start(t)
	want := &recorder{t: t}
	runSamples(want, raw.NewClient(nil), "sampletable")
	// The reference did run the samples: a few of its answers, as the SDK's samples print them.
	for _, line := range []string{
		"UpdateRowWithIncrement before CreateTable put: error OTSObjectNotExist",
		"UpdateRowWithIncrement increment returned: .Columns[0].Value=90",
		"GetRow after UpdateRow: .Columns[2].Value=newcol3",
		"BatchGetRow: .TableToRowsResult[sampletable].len=21",
		"GetRange page 13: .Rows.len=1",
	} {
		if !slices.ContainsFunc(want.calls, func(c string) bool { return strings.HasPrefix(c, line) }) {
			t.Fatalf("the SDK's samples did not answer %q:\n%s", line, strings.Join(want.calls, "\n"))
		}
	}

	for _, tt := range []struct {
		spec    string
		saltLen int
	}{{"md5hex:2:sep=0x00", 2}, {"hash:8:digits=1", 1}, {"none", 0}} {
		spec := tt.spec
		t.Run(spec, func(t *testing.T) {
			srv := tablestoretest.Start(t)
			s := testkit.Salter(t, spec)
			c := New(srv.NewClient(nil), WithSalter("sampletable", s)) // was: c := srv.NewClient(nil)
			got := &recorder{t: t}
			runSamples(got, c, "sampletable")
			if d := diffRows(got.calls, want.calls); d != "" {
				t.Fatalf("through the drop-in: %s", d)
			}
			checkSalted(t, srv, spec, tt.saltLen)
		})
	}
}

// checkSalted reads the table with the SDK alone: each stored first column is the salt the spec
// gives the row's logical key, followed by the caller's value.
func checkSalted(t *testing.T, srv *tablestoretest.Server, spec string, saltLen int) {
	t.Helper()
	s := testkit.Salter(t, spec)
	crit := ots.RangeRowQueryCriteria{TableName: "sampletable", StartPrimaryKey: infMin("pk1", "pk2", "pk3"),
		EndPrimaryKey: infMax("pk1", "pk2", "pk3"), Direction: ots.FORWARD, MaxVersion: 1, Limit: 200}
	resp, err := srv.NewClient(nil).GetRange(&ots.GetRangeRequest{RangeRowQueryCriteria: &crit})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Rows) != 131 {
		t.Fatalf("%d stored rows, want 131", len(resp.Rows))
	}
	for _, row := range resp.Rows {
		cols := row.PrimaryKey.PrimaryKeys
		stored := cols[0].Value.(string)
		pk1 := stored[saltLen:]
		logical, err := tablestore.AppendKeyTail(tablestore.AppendKeyHead(nil, []byte(pk1)), cols[1].Value, cols[2].Value)
		if err != nil {
			t.Fatal(err)
		}
		phys, err := s.AppendPhysical(nil, logical)
		if err != nil || !strings.HasPrefix(pk1, "pk1") || string(phys[:saltLen]) != stored[:saltLen] {
			t.Fatalf("stored key %s: not %s of its logical key %q (%q, %v)", pkText(row.PrimaryKey), spec, logical, phys, err)
		}
	}
}
