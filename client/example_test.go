package client_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/brine-kv/brine/backends/local"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// The README's Go example: a salted time series on the embedded store, written and read back in
// time order. It runs as often as you like: CreateOrOpenTable opens the table the second time.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "brine-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	b, err := local.Open(ctx, local.Config{Path: filepath.Join(dir, "data.db")}) // or hbase.Open / tablestore.Open
	if err != nil {
		log.Fatal(err)
	}
	c := client.New(b)
	defer c.Close()

	s, err := salting.ParseSpec("hash:16")
	if err != nil {
		log.Fatal(err)
	}
	// Created pre-split with its spec stored; opened (and its spec checked) when it exists.
	t, err := c.CreateOrOpenTable(ctx, "metrics", client.TableConfig{Salter: s})
	if err != nil {
		log.Fatal(err)
	}

	start := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	key := func(at time.Time) []byte { return binary.BigEndian.AppendUint64(nil, uint64(at.UnixMilli())) }
	for i := range 5 { // monotonic keys, spread over 16 buckets by the salt
		at := start.Add(time.Duration(i) * time.Minute)
		v := fmt.Appendf(nil, "%d.5", 20+i)
		if err := t.Put(ctx, key(at), client.Cell{Family: "d", Qualifier: "v", Value: v}); err != nil {
			log.Fatal(err)
		}
	}

	row, err := t.Get(ctx, key(start)) // one bucket, one request
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("get: %s\n", row.Cells[0].Value)

	// A range scan reads every bucket in parallel and merges them back into key order.
	from, to := key(start.Add(time.Minute)), key(start.Add(4*time.Minute))
	for row, err := range t.Scan(ctx, client.RowRange(from, to), client.Limit(100)) {
		if err != nil {
			log.Fatal(err)
		}
		at := time.UnixMilli(int64(binary.BigEndian.Uint64(row.Key))).UTC()
		fmt.Printf("scan: %s %s\n", at.Format(time.TimeOnly), row.Cells[0].Value)
	}
	// Output:
	// get: 20.5
	// scan: 12:01:00 21.5
	// scan: 12:02:00 22.5
	// scan: 12:03:00 23.5
}
