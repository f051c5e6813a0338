package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// A table outgrows its 4 buckets: Rebucket moves it to 16 while it stays readable and writable under
// the same name (the fences are short here because this process holds the only handles).
func ExampleTable_Rebucket() {
	ctx := context.Background()
	c := client.New(memory.New(), client.WithRouteRefresh(time.Millisecond),
		client.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer c.Close()
	from, err := salting.ParseSpec("hash:4")
	if err != nil {
		log.Fatal(err)
	}
	to, err := salting.ParseSpec("hash:16")
	if err != nil {
		log.Fatal(err)
	}
	tbl, err := c.CreateTable(ctx, "events", client.TableConfig{Salter: from})
	if err != nil {
		log.Fatal(err)
	}
	for i := range 100 {
		if err := tbl.Put(ctx, fmt.Appendf(nil, "e%03d", i), client.Cell{Family: "d", Qualifier: "n", Value: []byte{byte(i)}}); err != nil {
			log.Fatal(err)
		}
	}
	err = tbl.Rebucket(ctx, to, client.RebucketOptions{
		Fence: 5 * time.Millisecond,
		Progress: func(p client.RebucketProgress) {
			if p.State == "" {
				fmt.Println("serving from", p.Table, "with", p.Spec)
			}
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	rows := 0
	for _, err := range tbl.Scan(ctx, client.Range{}) {
		if err != nil {
			log.Fatal(err)
		}
		rows++
	}
	st, err := c.RebucketStatus(ctx, "events")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rows, "rows,", st.Table, st.Spec)
	// Output:
	// serving from events_r1 with hash:16
	// 100 rows, events_r1 hash:16
}
