package client_test

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// The guides' order tables through one brine table: orders keyed by order number, an index by
// seller (newest first, amount covered) and a unique index by external id.
func ExampleIndex() {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	salt := func(spec string) salting.Salter { s, _ := salting.ParseSpec(spec); return s }
	orders, err := c.CreateTable(ctx, "orders", client.TableConfig{
		Salter: salt("hash:8"),
		Indexes: []client.IndexConfig{
			{ // [seller][ts desc][order_no]; one seller's orders in one bucket of the index
				Name: "by_seller", Salter: salt("hash:4:fields=1"),
				Parts:   []client.IndexPart{client.ColumnPart("d", "seller"), client.ColumnPart("d", "ts").Descending(), client.KeyPart(0)},
				Covered: []client.Column{{Family: "d", Qualifier: "amount"}},
			},
			{Name: "by_ext", Salter: salt("hash:4"), Unique: true, Parts: []client.IndexPart{client.ColumnPart("d", "ext")}},
		},
	})
	if err != nil {
		panic(err)
	}
	schema, _ := keys.ParseSchema("no")
	put := func(no, seller, ext string, ts uint64, amount string) {
		key, _ := schema.Encode(no)
		err := orders.Put(ctx, key,
			client.Cell{Family: "d", Qualifier: "seller", Value: []byte(seller)},
			client.Cell{Family: "d", Qualifier: "ext", Value: []byte(ext)},
			client.Cell{Family: "d", Qualifier: "ts", Value: binary.BigEndian.AppendUint64(nil, ts)},
			client.Cell{Family: "d", Qualifier: "amount", Value: []byte(amount)})
		if err != nil {
			panic(err)
		}
	}
	put("o1", "host1", "x-1", 100, "10")
	put("o2", "host12", "x-2", 200, "20") // "host12" is not under "host1"
	put("o3", "host1", "x-3", 300, "30")
	put("o1", "host12", "x-1", 100, "10") // moves o1 to host12: its host1 entry goes

	bySeller, err := orders.Index("by_seller")
	if err != nil {
		panic(err)
	}
	p, _ := bySeller.Prefix([]byte("host12"))
	amount := client.Columns(client.Column{Family: "d", Qualifier: "amount"}) // covered: no second read
	for r, err := range bySeller.Scan(ctx, client.PrefixRange(p), amount) {
		if err != nil {
			panic(err)
		}
		no, _ := schema.Decode(r.Key)
		fmt.Printf("host12 %s amount %s\n", no[0], r.Cells[0].Value)
	}
	byExt, err := orders.Index("by_ext")
	if err != nil {
		panic(err)
	}
	k, _ := byExt.Prefix([]byte("x-3"))
	row, _ := byExt.Get(ctx, k) // one index read + one row read
	no, _ := schema.Decode(row.Key)
	fmt.Printf("x-3 is %s\n", no[0])
	// Output:
	// host12 o2 amount 20
	// host12 o1 amount 10
	// x-3 is o3
}
