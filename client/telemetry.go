package client

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/brine-kv/brine/internal/telemetry"
)

// Attribute keys of brine's own, beside the semantic conventions' database attributes.
const (
	AttrBucket        = telemetry.AttrBucket        // the bucket a bucket scan reads
	AttrRows          = telemetry.AttrRows          // rows a call or bucket scan returned or wrote
	AttrBytes         = telemetry.AttrBytes         // key and value bytes a bucket scan read
	AttrRetries       = telemetry.AttrRetries       // retries the driver or importer made
	AttrBuckets       = telemetry.AttrBuckets       // buckets a scan read
	AttrPrunedBuckets = telemetry.AttrPrunedBuckets // buckets a scan skipped: its range cannot touch them
	AttrOutcome       = telemetry.AttrOutcome       // "written" or "failed"
	// AttrStepError is the error of a call made inside another client call (an indexed Put's reads
	// and writes of its index tables): the outer call may retry it or take it as an answer, so only
	// the outer call's span and duration carry an error status and error.type, and only when the
	// caller gets the error.
	AttrStepError = telemetry.AttrStepError
)

// Metric names. Latency follows the semantic conventions' db.client.operation.duration; the rest are
// brine's: what a salting user watches is the per-bucket rows and latency (skew between buckets).
const (
	MetricOperationDuration  = telemetry.MetricOperationDuration
	MetricRowsRead           = telemetry.MetricRowsRead
	MetricRowsWritten        = telemetry.MetricRowsWritten
	MetricBucketScanDuration = telemetry.MetricBucketScanDuration
	MetricBucketScanRows     = telemetry.MetricBucketScanRows
	MetricRetries            = telemetry.MetricRetries
	MetricGiveUps            = telemetry.MetricGiveUps
	MetricImportRows         = telemetry.MetricImportRows
	MetricScansInFlight      = telemetry.MetricScansInFlight
)

// WithTracerProvider turns tracing on: a span per client call and a child span per bucket scan.
// Without it (and without WithMeterProvider) the client records nothing and costs nothing.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *Client) { c.telCfg.TP = tp }
}

// WithMeterProvider turns metrics on (see the Metric* names).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *Client) { c.telCfg.MP = mp }
}

// WithStoreAttributes names the store in spans and metrics: system is db.system ("hbase",
// "tablestore", "bbolt", "memory"), address is server.address (e.g. the ZooKeeper quorum), empty
// when there is no server. The default system is "brine".
func WithStoreAttributes(system, address string) Option {
	return func(c *Client) { c.telCfg.System, c.telCfg.Address = system, address }
}
