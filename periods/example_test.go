package periods_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/periods"
	"github.com/brine-kv/brine/salting"
)

// One logical table over a table per month: keys [host][ts], the time in field 1; writes go to the
// month of their time, a scan reads only the months its range can hold, and retention drops whole
// tables.
func ExampleCreate() {
	ctx := context.Background()
	c := client.New(memory.New())
	defer c.Close()
	month, _ := periods.ParseInterval("month")
	salter, _ := salting.ParseSpec("hash:8")
	orders, err := periods.Create(ctx, c, "orders", periods.Config{
		Interval: month, TimeField: 1, Table: client.TableConfig{Salter: salter},
		Retention: periods.Retention{Keep: 2},
	})
	if err != nil {
		panic(err)
	}
	// This month and the next, created before writers need them.
	if _, err := orders.CreateAhead(ctx, time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC), 1, nil); err != nil {
		panic(err)
	}
	schema, _ := keys.ParseSchema("host,ts:int64")
	for _, at := range []string{"2026-10-31T23:59:59.999Z", "2026-11-01T00:00:00Z", "2026-11-23T16:15:00Z"} {
		ts, _ := time.Parse(time.RFC3339Nano, at)
		key, _ := schema.Encode("web1", ts.UnixMilli())
		if err := orders.Put(ctx, key, client.Cell{Family: "d", Qualifier: "total", Value: []byte("9.90")}); err != nil {
			panic(err)
		}
	}
	late, _ := schema.Encode("web1", time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC).UnixMilli())
	err = orders.Put(ctx, late, client.Cell{Family: "d", Qualifier: "total", Value: []byte("1")})
	fmt.Println("December has no period yet:", errors.Is(err, periods.ErrNoPeriod))

	// November only: one period of two is read.
	from, _ := schema.Encode("web1", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	for row, err := range orders.Scan(ctx, client.InfiniteRange(from)) {
		if err != nil {
			panic(err)
		}
		v, _ := schema.Decode(row.Key)
		fmt.Println(v[0], time.UnixMilli(v[1].(int64)).UTC().Format(time.RFC3339))
	}
	for _, p := range orders.Periods() {
		fmt.Println(p.Table, p.Start.Format("2006-01-02"), p.Spec)
	}
	// Output:
	// December has no period yet: true
	// web1 2026-11-01T00:00:00Z
	// web1 2026-11-23T16:15:00Z
	// orders_2026_10 2026-10-01 hash:8
	// orders_2026_11 2026-11-01 hash:8
}
