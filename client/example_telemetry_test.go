package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// A client exporting its metrics to Prometheus: a service would also serve the registry with
// promhttp.HandlerFor(reg, promhttp.HandlerOpts{}) on /metrics.
func Example_prometheus() {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		log.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(ctx)

	c := client.New(memory.New(), client.WithMeterProvider(mp), client.WithStoreAttributes("memory", ""))
	defer c.Close()
	s, _ := salting.ParseSpec("hash:4")
	t, err := c.CreateTable(ctx, "events", client.TableConfig{Salter: s})
	if err != nil {
		log.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := t.Put(ctx, []byte(k), client.Cell{Family: "d", Qualifier: "q", Value: []byte("v")}); err != nil {
			log.Fatal(err)
		}
	}
	for _, err := range t.Scan(ctx, client.Range{}) {
		if err != nil {
			log.Fatal(err)
		}
	}

	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range families {
		switch f.GetName() {
		case "brine_client_rows_written_total", "brine_client_rows_read_total":
			fmt.Println(f.GetName(), f.GetMetric()[0].GetCounter().GetValue())
		case "brine_client_bucket_scan_rows_total":
			fmt.Println(f.GetName(), "series:", len(f.GetMetric())) // one per bucket: the skew, at a glance
		}
	}
	// Output:
	// brine_client_bucket_scan_rows_total series: 4
	// brine_client_rows_read_total 3
	// brine_client_rows_written_total 3
}
