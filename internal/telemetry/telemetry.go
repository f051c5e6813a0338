// Package telemetry is brine's OpenTelemetry plumbing: a span and a duration per client call, a child
// span per bucket scan, and the row, retry and import counters. A nil *Telemetry, *Call or
// *BucketCall records nothing and allocates nothing, which is how a client without providers pays
// for none of it. The names users see (the Attr* keys, the Metric* names) are the client package's.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// InstrumentationName names brine's tracer and meter, as OpenTelemetry asks: the instrumenting
// package's import path (the client's: that is what users configure).
const InstrumentationName = "github.com/brine-kv/brine/client"

// Attribute keys of brine's own, beside the semantic conventions' database attributes.
const (
	AttrBucket        = attribute.Key("brine.bucket")         // the bucket a bucket scan reads
	AttrRows          = attribute.Key("brine.rows")           // rows a call or bucket scan returned or wrote
	AttrBytes         = attribute.Key("brine.bytes")          // key and value bytes a bucket scan read
	AttrRetries       = attribute.Key("brine.retries")        // retries the driver or importer made
	AttrBuckets       = attribute.Key("brine.buckets")        // buckets a scan read
	AttrPrunedBuckets = attribute.Key("brine.buckets.pruned") // buckets a scan skipped: its range cannot touch them
	AttrOutcome       = attribute.Key("brine.import.outcome") // "written" or "failed"
	// AttrStepError is the error of a call made inside another client call (an indexed Put's reads
	// and writes of its index tables): the outer call may retry it or take it as an answer, so only
	// the outer call's span and duration carry an error status and error.type, and only when the
	// caller gets the error.
	AttrStepError = attribute.Key("brine.step.error")
)

// Metric names. Latency follows the semantic conventions' db.client.operation.duration; the rest are
// brine's: what a salting user watches is the per-bucket rows and latency (skew between buckets).
const (
	MetricOperationDuration  = semconv.DBClientOperationDurationName
	MetricRowsRead           = "brine.client.rows.read"
	MetricRowsWritten        = "brine.client.rows.written"
	MetricBucketScanDuration = "brine.client.bucket_scan.duration"
	MetricBucketScanRows     = "brine.client.bucket_scan.rows"
	MetricRetries            = "brine.client.retries"
	MetricGiveUps            = "brine.client.give_ups"
	MetricImportRows         = "brine.client.import.rows"
	MetricScansInFlight      = "brine.client.bucket_scans.in_flight"
)

// durationBuckets are the semantic conventions' advised boundaries for database call latency, in
// seconds (the SDK's default boundaries are meant for milliseconds).
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10}

// Config is what a client was given: providers (both nil: telemetry off), the store's db.system and
// server.address, and Answer, which tells an error that is an answer (a row not found) from a
// failure.
type Config struct {
	TP              trace.TracerProvider
	MP              metric.MeterProvider
	System, Address string
	Answer          func(error) bool
}

// Telemetry holds the client's tracer and instruments; a nil *Telemetry records nothing, which is how
// a client without providers stays free of any cost per row.
type Telemetry struct {
	tracer trace.Tracer
	answer func(error) bool
	store  []attribute.KeyValue // db.system and server.address, on every span and measurement

	opDuration, bucketDuration   metric.Float64Histogram
	rowsRead, rowsWritten        metric.Int64Counter
	bucketRows, retries, giveUps metric.Int64Counter
	importRows                   metric.Int64Counter
	scansInFlight                metric.Int64UpDownCounter
}

// New returns the telemetry cfg asks for: nil when it names no provider.
func New(cfg Config) (*Telemetry, error) {
	if cfg.TP == nil && cfg.MP == nil {
		return nil, nil
	}
	if cfg.TP == nil {
		cfg.TP = tracenoop.NewTracerProvider()
	}
	if cfg.MP == nil {
		cfg.MP = metricnoop.NewMeterProvider()
	}
	if cfg.System == "" {
		cfg.System = "brine"
	}
	if cfg.Answer == nil {
		cfg.Answer = func(error) bool { return false }
	}
	tel := &Telemetry{
		tracer: cfg.TP.Tracer(InstrumentationName),
		answer: cfg.Answer,
		store:  []attribute.KeyValue{semconv.DBSystemKey.String(cfg.System)},
	}
	if cfg.Address != "" {
		tel.store = append(tel.store, semconv.ServerAddress(cfg.Address))
	}
	m := cfg.MP.Meter(InstrumentationName)
	var errs [9]error
	tel.opDuration, errs[0] = m.Float64Histogram(MetricOperationDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of brine client calls."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	tel.bucketDuration, errs[1] = m.Float64Histogram(MetricBucketScanDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of one bucket's scan within a salted scan."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	tel.rowsRead, errs[2] = m.Int64Counter(MetricRowsRead, metric.WithUnit("{row}"), metric.WithDescription("Rows returned to callers."))
	tel.rowsWritten, errs[3] = m.Int64Counter(MetricRowsWritten, metric.WithUnit("{row}"), metric.WithDescription("Rows written."))
	tel.bucketRows, errs[4] = m.Int64Counter(MetricBucketScanRows, metric.WithUnit("{row}"), metric.WithDescription("Rows read per bucket: the spread shows skew."))
	tel.retries, errs[5] = m.Int64Counter(MetricRetries, metric.WithUnit("{retry}"), metric.WithDescription("Requests or rows tried again after a retryable error."))
	tel.giveUps, errs[6] = m.Int64Counter(MetricGiveUps, metric.WithUnit("{row}"), metric.WithDescription("Rows given up on after retries."))
	tel.importRows, errs[7] = m.Int64Counter(MetricImportRows, metric.WithUnit("{row}"), metric.WithDescription("Import progress: rows by outcome."))
	tel.scansInFlight, errs[8] = m.Int64UpDownCounter(MetricScansInFlight, metric.WithUnit("{scan}"), metric.WithDescription("Bucket scans running now."))
	// The API hands back a usable (no-op) instrument with any error, so a failure costs that metric,
	// not the client.
	if err := errors.Join(errs[:]...); err != nil {
		return tel, fmt.Errorf("telemetry: %w", err)
	}
	return tel, nil
}

// Call is one client call being traced and timed; a nil *Call (telemetry off) does nothing and
// costs no allocation.
type Call struct {
	tel   *Telemetry
	span  trace.Span
	start time.Time
	attrs metric.MeasurementOption // the call's store, operation and table
	rows  int64                    // rows a scan returned (addRow)
	err   error                    // a scan's error (fail)
	inner bool                     // made inside another client call: see AttrStepError
}

// callKey marks a context as inside a client call, so that the calls it makes know they are steps.
type callKey struct{}

// Begin starts the span and clock of a client call; op is the db.operation.name, table the
// db.collection.name, "" for a call on several tables (not captured then, as the conventions ask).
func (tel *Telemetry) Begin(ctx context.Context, op, table string) (context.Context, *Call) {
	if tel == nil {
		return ctx, nil
	}
	kv := make([]attribute.KeyValue, 0, len(tel.store)+2)
	kv = append(kv, tel.store...)
	kv = append(kv, semconv.DBOperationName(op))
	spanName := op
	if table != "" {
		kv = append(kv, semconv.DBCollectionName(table))
		spanName += " " + table
	}
	inner := ctx.Value(callKey{}) != nil
	if !inner {
		ctx = context.WithValue(ctx, callKey{}, true)
	}
	ctx, span := tel.tracer.Start(ctx, spanName, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(kv...))
	return ctx, &Call{tel: tel, span: span, start: time.Now(), attrs: metric.WithAttributeSet(attribute.NewSet(kv...)), inner: inner}
}

// End records the call's outcome: err (nil for success), and the rows it read and wrote.
func (c *Call) End(ctx context.Context, err error, read, written int64) {
	if c == nil {
		return
	}
	c.span.SetAttributes(AttrRows.Int64(read + written))
	c.finish(ctx, err)
	if read > 0 {
		c.tel.rowsRead.Add(ctx, read, c.attrs)
	}
	if written > 0 {
		c.tel.rowsWritten.Add(ctx, written, c.attrs)
	}
}

// finish ends the span and records the call's latency. Only a call that fails its caller is an
// error to telemetry: an answer (Config.Answer: a Get of a missing row, an index's lookup of a free
// value) is not, and a step's error (AttrStepError) is its outer call's to report or to get over.
func (c *Call) finish(ctx context.Context, err error) {
	opts := []metric.RecordOption{c.attrs}
	switch {
	case err == nil || c.tel.answer(err):
	case c.inner:
		c.span.SetAttributes(AttrStepError.String(err.Error()))
	default:
		c.span.RecordError(err)
		c.span.SetStatus(codes.Error, err.Error())
		opts = append(opts, metric.WithAttributes(semconv.ErrorTypeOther))
	}
	c.tel.opDuration.Record(ctx, time.Since(c.start).Seconds(), opts...)
	c.span.End()
}

// CountRetries records retries made within the call.
func (c *Call) CountRetries(ctx context.Context, n int64) {
	if c != nil && n > 0 {
		c.tel.retries.Add(ctx, n, c.attrs)
	}
}

// CountImport records import progress: rows written and failed so far in this batch.
func (c *Call) CountImport(ctx context.Context, written, failed int64) {
	if c == nil {
		return
	}
	if written > 0 {
		c.tel.importRows.Add(ctx, written, c.attrs, metric.WithAttributes(AttrOutcome.String("written")))
		c.tel.rowsWritten.Add(ctx, written, c.attrs)
	}
	if failed > 0 {
		c.tel.importRows.Add(ctx, failed, c.attrs, metric.WithAttributes(AttrOutcome.String("failed")))
	}
}

// RowsIf is n for a call that succeeded, else 0.
func RowsIf(err error, n int64) int64 {
	if err != nil {
		return 0
	}
	return n
}

// AppliedRows is how many of n mutations Apply wrote, from its outcome.
func AppliedRows(n int, rowErrs []error, err error) int64 {
	if err != nil {
		return 0
	}
	written := int64(n)
	for _, e := range rowErrs {
		if e != nil {
			written--
		}
	}
	return written
}

// AppliedRow is 1 for a conditional mutation that was applied.
func AppliedRow(applied bool) int64 {
	if applied {
		return 1
	}
	return 0
}

// EndImport records an Import call: its rows were counted batch by batch (CountImport), so only the
// span's totals and the latency remain.
func (c *Call) EndImport(ctx context.Context, err error, written, retried, failed int64) {
	if c == nil {
		return
	}
	c.span.SetAttributes(AttrRows.Int64(written), AttrRetries.Int64(retried),
		attribute.Int64("brine.import.failed", failed))
	c.tel.giveUps.Add(ctx, failed, c.attrs)
	c.finish(ctx, err)
}
