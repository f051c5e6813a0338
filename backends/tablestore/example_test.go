package tablestore_test

import (
	"fmt"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/tablestore"
)

// The design guide's consumption records, with the partition key salted by a 1-byte bucket prefix:
// [DeviceID zero-padded to 6][SellerID STRING][CardID INTEGER][OrderNumber INTEGER].
func ExampleAppendKeyTail() {
	cols := []tablestore.KeyColumn{
		{Name: "DeviceID", Type: tablestore.KeyBinary, Width: 1 + 6}, // salt + padded device id
		{Name: "SellerID", Type: tablestore.KeyString},
		{Name: "CardID", Type: tablestore.KeyInteger},
		{Name: "OrderNumber", Type: tablestore.KeyInteger},
	}
	opts := backends.TableOptions{Meta: map[string]string{
		tablestore.MetaPrimaryKey: tablestore.FormatPrimaryKey(cols...),
	}}
	fmt.Println(opts.Meta[tablestore.MetaPrimaryKey])

	// The logical key: the device part of the first column, then the other columns. The client
	// prepends the salt, which completes the first column.
	logical, err := tablestore.AppendKeyTail([]byte("000054"), "a1001", int64(6777), int64(200004))
	if err != nil {
		panic(err)
	}
	physical := append([]byte{0x0b}, logical...)
	vals, err := tablestore.DecodeKey(cols, physical)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q %q %d %d\n", vals[0], vals[1], vals[2], vals[3])
	// Output:
	// DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER,OrderNumber:INTEGER
	// "\v000054" "a1001" 6777 200004
}
