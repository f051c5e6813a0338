package dropin_test

import (
	"context"
	"fmt"
	"log"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends/tablestore/dropin"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/salting"
)

// Code written against the SDK's interface, unchanged but for the line that makes its client: the
// SDK's own sample table (pk1 STRING, pk2 INTEGER), salted with the Tablestore guide's layout, a
// partition key of md5(pk1)'s first 4 hex digits followed by pk1.
func Example() {
	srv := tablestoretest.NewServer()
	defer srv.Close()
	sdk := srv.NewClient(nil) // tablestore.NewClient(endpoint, instance, id, secret)

	spec, err := salting.ParseSpec("md5hex:4:sep=0x00") // the hash covers pk1 alone
	if err != nil {
		log.Fatal(err)
	}
	var client tablestore.TableStoreApi = dropin.New(sdk, dropin.WithSalter("sampletable", spec)) // was: = sdk

	meta := &tablestore.TableMeta{TableName: "sampletable"}
	meta.AddPrimaryKeyColumn("pk1", tablestore.PrimaryKeyType_STRING)
	meta.AddPrimaryKeyColumn("pk2", tablestore.PrimaryKeyType_INTEGER)
	if _, err := client.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta, // stores the spec too
		TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1}, ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		log.Fatal(err)
	}
	pk := &tablestore.PrimaryKey{}
	pk.AddPrimaryKeyColumn("pk1", "pk1value1")
	pk.AddPrimaryKeyColumn("pk2", int64(2))
	put := &tablestore.PutRowChange{TableName: "sampletable", PrimaryKey: pk}
	put.AddColumn("col1", "col1data1")
	put.SetCondition(tablestore.RowExistenceExpectation_IGNORE)
	if _, err := client.PutRow(&tablestore.PutRowRequest{PutRowChange: put}); err != nil {
		log.Fatal(err)
	}

	get, err := client.GetRow(&tablestore.GetRowRequest{SingleRowQueryCriteria: &tablestore.SingleRowQueryCriteria{
		TableName: "sampletable", PrimaryKey: pk, MaxVersion: 1}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("through the drop-in:", get.PrimaryKey.PrimaryKeys[0].Value, get.Columns[0].Value)

	// The SDK alone sees the stored partition key (md5("pk1value1") begins 9ab8); ListTable through the drop-in hides brine's meta table.
	raw, _ := sdk.GetRange(&tablestore.GetRangeRequest{RangeRowQueryCriteria: &tablestore.RangeRowQueryCriteria{
		TableName: "sampletable", StartPrimaryKey: bound(tablestore.MIN), EndPrimaryKey: bound(tablestore.MAX),
		Direction: tablestore.FORWARD, MaxVersion: 1}})
	fmt.Println("stored:", raw.Rows[0].PrimaryKey.PrimaryKeys[0].Value)
	tables, _ := client.ListTable()
	fmt.Println("tables:", tables.TableNames)

	// A table the SDK created and filled on the same layout is adopted the same way, for every client.
	meta.TableName = "legacy"
	if _, err := sdk.CreateTable(&tablestore.CreateTableRequest{TableMeta: meta,
		TableOption: &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1}, ReservedThroughput: &tablestore.ReservedThroughput{}}); err != nil {
		log.Fatal(err)
	}
	if err := dropin.New(sdk).Adopt(context.Background(), "legacy", spec); err != nil {
		log.Fatal(err)
	}
	s, _ := dropin.New(sdk).Salter(context.Background(), "legacy")
	fmt.Println("legacy:", s.Spec())
	// Output:
	// through the drop-in: pk1value1 col1data1
	// stored: 9ab8pk1value1
	// tables: [sampletable]
	// legacy: md5hex:4:sep=0x00
}

func bound(opt tablestore.PrimaryKeyOption) *tablestore.PrimaryKey {
	pk := &tablestore.PrimaryKey{}
	for _, name := range []string{"pk1", "pk2"} {
		pk.PrimaryKeys = append(pk.PrimaryKeys, &tablestore.PrimaryKeyColumn{ColumnName: name, PrimaryKeyOption: opt})
	}
	return pk
}
