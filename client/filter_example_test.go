package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// The README's filter example: orders of one buyer with status paid and an amount over 100, the
// filter evaluated by the store in every bucket.
func ExampleRowFilter() {
	ctx := context.Background()
	c := client.New(memory.New()) // or local, hbase, tablestore
	defer c.Close()
	s, err := salting.ParseSpec("hash:16")
	if err != nil {
		log.Fatal(err)
	}
	t, err := c.CreateOrOpenTable(ctx, "orders", client.TableConfig{Salter: s})
	if err != nil {
		log.Fatal(err)
	}
	for i, o := range []struct{ status, amount string }{{"paid", "0250"}, {"new", "0900"}, {"paid", "0080"}, {"paid", "0120"}} {
		err := t.Put(ctx, fmt.Appendf(nil, "buyer7/order%d", i),
			client.Cell{Family: "d", Qualifier: "status", Value: []byte(o.status)},
			client.Cell{Family: "d", Qualifier: "amount", Value: []byte(o.amount)}) // fixed width: values compare as bytes
		if err != nil {
			log.Fatal(err)
		}
	}

	paidOver100 := client.AllFilters(
		client.ValueFilter(client.Column{Family: "d", Qualifier: "status"}, client.Equal, []byte("paid")),
		client.ValueFilter(client.Column{Family: "d", Qualifier: "amount"}, client.Greater, []byte("0100")),
	)
	for row, err := range t.Scan(ctx, client.PrefixRange([]byte("buyer7/")), client.RowFilter(paidOver100), client.Limit(10)) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s\n", row.Key)
	}
	// Output:
	// buyer7/order0
	// buyer7/order3
}
