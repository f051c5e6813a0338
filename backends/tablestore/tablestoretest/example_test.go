package tablestoretest_test

import (
	"fmt"
	"log"

	"github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
)

// The real SDK talks to the server over HTTP; faults are injected server-side.
func Example() {
	srv := tablestoretest.NewServer(tablestoretest.WithPageCap(100, 0))
	defer srv.Close()

	// Equivalent to tablestore.NewClient(srv.Endpoint(), srv.Instance(),
	// srv.AccessKeyID(), srv.AccessKeySecret()).
	client := srv.NewClient(nil)

	meta := &tablestore.TableMeta{TableName: "events"}
	meta.AddPrimaryKeyColumn("salt", tablestore.PrimaryKeyType_BINARY)
	meta.AddPrimaryKeyColumn("id", tablestore.PrimaryKeyType_INTEGER)
	if _, err := client.CreateTable(&tablestore.CreateTableRequest{
		TableMeta:          meta,
		TableOption:        &tablestore.TableOption{TimeToAlive: -1, MaxVersion: 1},
		ReservedThroughput: &tablestore.ReservedThroughput{},
	}); err != nil {
		log.Fatal(err)
	}

	// One busy answer: the SDK retries it by itself, so the call succeeds.
	srv.FailNext("PutRow", tablestoretest.CodeServerBusy, 1)
	key := &tablestore.PrimaryKey{}
	key.AddPrimaryKeyColumn("salt", []byte{3})
	key.AddPrimaryKeyColumn("id", int64(42))
	put := &tablestore.PutRowChange{TableName: "events", PrimaryKey: key}
	put.SetCondition(tablestore.RowExistenceExpectation_EXPECT_NOT_EXIST)
	put.AddColumn("payload", "hello")
	if _, err := client.PutRow(&tablestore.PutRowRequest{PutRowChange: put}); err != nil {
		log.Fatal(err)
	}

	// The same insert again fails its condition; that code is not retried.
	_, err := client.PutRow(&tablestore.PutRowRequest{PutRowChange: put})
	fmt.Println(err.(*tablestore.OtsError).Code)
	fmt.Println("PutRow requests:", srv.Stats()["PutRow"].Requests)
	// Output:
	// OTSConditionCheckFail
	// PutRow requests: 3
}
