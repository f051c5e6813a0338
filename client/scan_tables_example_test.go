package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// Two tables read as one stream in key order: here an archive and the live table, salted apart.
func ExampleClient_ScanTables() {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	open := func(name, spec string, keys ...string) *client.Table {
		s, err := salting.ParseSpec(spec)
		if err != nil {
			log.Fatal(err)
		}
		t, err := c.CreateTable(ctx, name, client.TableConfig{Salter: s})
		if err != nil {
			log.Fatal(err)
		}
		for _, k := range keys {
			if err := t.Put(ctx, []byte(k), client.Cell{Family: "d", Qualifier: "from", Value: []byte(name)}); err != nil {
				log.Fatal(err)
			}
		}
		return t
	}
	archive := open("archive", "hash:4", "user1/2025", "user2/2025")
	live := open("live", "hash:8", "user1/2026", "user3/2026")

	for row, err := range c.ScanTables(ctx, []*client.Table{archive, live}, client.PrefixRange([]byte("user"))) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s from %s\n", row.Key, row.Cells[0].Value)
	}
	// Output:
	// user1/2025 from archive
	// user1/2026 from live
	// user2/2025 from archive
	// user3/2026 from live
}
