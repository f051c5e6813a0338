package migrate_test

import (
	"context"
	"fmt"
	"log"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/compare"
	"github.com/brine-kv/brine/migrate"
	"github.com/brine-kv/brine/salting"
)

// Copy a table to another store with another salting, every version of its cells, then check that
// the two are equal.
func ExampleCopy() {
	ctx := context.Background()
	old, neu := client.New(memory.New()), client.New(memory.New()) // e.g. HBase and Tablestore
	defer old.Close()
	defer neu.Close()
	salter, _ := salting.ParseSpec("hash:4")
	src, err := old.CreateTable(ctx, "orders", client.TableConfig{Salter: salter})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 100 {
		if err := src.Put(ctx, fmt.Appendf(nil, "o%03d", i), client.Cell{Family: "d", Qualifier: "amount", Value: []byte("1.00")}); err != nil {
			log.Fatal(err)
		}
	}

	salter, _ = salting.ParseSpec("hash:16")
	st, err := migrate.Copy(ctx, old, neu, "orders", migrate.Options{Salter: salter, AllVersions: true})
	if err != nil {
		log.Fatal(err)
	}
	dst, err := neu.OpenTable(ctx, "orders", nil)
	if err != nil {
		log.Fatal(err)
	}
	differences := 0
	for d, err := range compare.Tables(ctx, src, dst, client.Range{}, compare.Options{AllVersions: true}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d.Kind, string(d.Key))
		differences++
	}
	fmt.Println(st.Rows, "rows copied,", differences, "differences; the copy's salting:", dst.Salter().Spec())
	// Output: 100 rows copied, 0 differences; the copy's salting: hash:16
}
