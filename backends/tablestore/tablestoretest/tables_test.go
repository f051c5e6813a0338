package tablestoretest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
)

func TestTableLifecycle(t *testing.T) {
	_, c := startServer(t)
	meta := &tablestore.TableMeta{TableName: "orders"}
	meta.AddPrimaryKeyColumn("salt", tablestore.PrimaryKeyType_BINARY)
	meta.AddPrimaryKeyColumn("seller", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumn("card", tablestore.PrimaryKeyType_INTEGER)
	meta.AddPrimaryKeyColumnOption("seq", tablestore.PrimaryKeyType_INTEGER, tablestore.AUTO_INCREMENT)
	meta.AddDefinedColumn("amount", tablestore.DefinedColumn_INTEGER)
	_, err := c.CreateTable(&tablestore.CreateTableRequest{
		TableMeta:          meta,
		TableOption:        &tablestore.TableOption{TimeToAlive: 86400, MaxVersion: 3, DeviationCellVersionInSec: 600},
		ReservedThroughput: &tablestore.ReservedThroughput{Readcap: 5, Writecap: 7},
		StreamSpec:         &tablestore.StreamSpecification{EnableStream: false},
	})
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	createTable(t, c, "alpha", 1, col{"id", tablestore.PrimaryKeyType_STRING})

	d, err := c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "orders"})
	if err != nil {
		t.Fatalf("DescribeTable: %v", err)
	}
	var names []string
	for _, s := range d.TableMeta.SchemaEntry {
		names = append(names, *s.Name)
	}
	if got := strings.Join(names, ","); got != "salt,seller,card,seq" {
		t.Errorf("schema = %s", got)
	}
	if o := d.TableMeta.SchemaEntry[3].Option; o == nil || *o != tablestore.AUTO_INCREMENT {
		t.Errorf("auto-increment option lost: %v", o)
	}
	if *d.TableMeta.SchemaEntry[1].Type != tablestore.PrimaryKeyType_STRING {
		t.Errorf("type = %v", *d.TableMeta.SchemaEntry[1].Type)
	}
	if *d.TableOption != (tablestore.TableOption{TimeToAlive: 86400, MaxVersion: 3, DeviationCellVersionInSec: 600}) {
		t.Errorf("options = %+v", *d.TableOption)
	}
	if *d.ReservedThroughput != (tablestore.ReservedThroughput{Readcap: 5, Writecap: 7}) {
		t.Errorf("throughput = %+v", *d.ReservedThroughput)
	}
	if d.StreamDetails.EnableStream {
		t.Errorf("stream = %+v, want off", *d.StreamDetails)
	}

	u, err := c.UpdateTable(&tablestore.UpdateTableRequest{TableName: "orders",
		TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 5}})
	if err != nil {
		t.Fatalf("UpdateTable: %v", err)
	}
	if u.TableOption.MaxVersion != 5 || u.TableOption.TimeToAlive != -1 || u.TableOption.DeviationCellVersionInSec != 600 {
		t.Errorf("updated options = %+v", *u.TableOption)
	}

	l, err := c.ListTable()
	if err != nil {
		t.Fatalf("ListTable: %v", err)
	}
	if !slices.Equal(l.TableNames, []string{"alpha", "orders"}) {
		t.Errorf("tables = %v", l.TableNames)
	}
	if _, err := c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "orders"}); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
	_, err = c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "orders"})
	wantCode(t, err, "OTSObjectNotExist", 404)
	_, err = c.DeleteTable(&tablestore.DeleteTableRequest{TableName: "orders"})
	wantCode(t, err, "OTSObjectNotExist", 404)

	// The default deviation is the service's one day.
	d, err = c.DescribeTable(&tablestore.DescribeTableRequest{TableName: "alpha"})
	if err != nil || d.TableOption.DeviationCellVersionInSec != 86400 {
		t.Errorf("default deviation = %+v, %v", d.TableOption, err)
	}
}

func TestCreateTableErrors(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "exists", 1, col{"id", tablestore.PrimaryKeyType_STRING})
	five := []col{{"a", 1}, {"b", 1}, {"c", 1}, {"d", 1}, {"e", 1}}
	tests := []struct {
		name    string
		table   string
		cols    []col
		ttl     int
		maxVer  int
		code    string
		status  int
		message string
	}{
		{"already exists", "exists", []col{{"id", tablestore.PrimaryKeyType_STRING}}, -1, 1, "OTSObjectAlreadyExist", 409, "Requested table already exists."},
		{"bad table name", "9lives", []col{{"id", 1}}, -1, 1, "OTSParameterInvalid", 400, "Invalid table name: '9lives'."},
		{"bad table name chars", "a-b", []col{{"id", 1}}, -1, 1, "OTSParameterInvalid", 400, "Invalid table name: 'a-b'."},
		{"five pk columns", "t5", five, -1, 1, "OTSParameterInvalid", 400, "The number of primary key columns must be in range: [1, 4]."},
		{"duplicate pk", "dup", []col{{"a", 1}, {"a", 2}}, -1, 1, "OTSParameterInvalid", 400, "Duplicated primary key name: 'a'."},
		{"bad pk name", "bn", []col{{"a b", 1}}, -1, 1, "OTSParameterInvalid", 400, "Invalid column name: 'a b'."},
		{"bad pk type", "bt", []col{{"a", 4}}, -1, 1, "OTSParameterInvalid", 400, ""},
		{"zero ttl", "zt", []col{{"a", 1}}, 0, 1, "OTSParameterInvalid", 400, "TimeToLive cannot be 0 or less than -1."},
		{"zero versions", "zv", []col{{"a", 1}}, -1, 0, "OTSParameterInvalid", 400, "The maximum versions cannot be less than or equal to 0."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			meta := &tablestore.TableMeta{TableName: tc.table}
			for _, k := range tc.cols {
				meta.AddPrimaryKeyColumn(k.name, k.typ)
			}
			_, err := c.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
				TableOption:        &tablestore.TableOption{TimeToAlive: tc.ttl, MaxVersion: tc.maxVer},
				ReservedThroughput: &tablestore.ReservedThroughput{}})
			oe := wantCode(t, err, tc.code, tc.status)
			if tc.message != "" && oe.Message != tc.message {
				t.Errorf("message = %q, want %q", oe.Message, tc.message)
			}
		})
	}
}

func TestComputeSplitPoints(t *testing.T) {
	_, c := startServer(t)
	createTable(t, c, "t", 1, col{"a", tablestore.PrimaryKeyType_STRING}, col{"b", tablestore.PrimaryKeyType_INTEGER})
	resp, err := c.ComputeSplitPointsBySize(&tablestore.ComputeSplitPointsBySizeRequest{TableName: "t", SplitSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Splits) != 1 || resp.Splits[0].LowerBound.PrimaryKeys[0].PrimaryKeyOption != tablestore.MIN {
		t.Errorf("splits = %+v", resp.Splits)
	}
}
