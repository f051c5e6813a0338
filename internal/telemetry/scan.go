package telemetry

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// ScanBuckets records on a scan's span how many buckets it reads and how many its range pruned.
func (c *Call) ScanBuckets(read, total int) {
	if c != nil {
		c.span.SetAttributes(AttrBuckets.Int(read), AttrPrunedBuckets.Int(total-read))
	}
}

// AddRow counts a row a scan returned, and Fail records its error; both are small enough to inline,
// so that a scan without telemetry pays a nil check per row. They keep the count and the error in the
// call rather than in variables of the scan's loop, which its closure would move to the heap.
func (c *Call) AddRow() {
	if c != nil {
		c.rows++
	}
}

func (c *Call) Fail(err error) {
	if c != nil {
		c.err = err
	}
}

// EndScan ends a scan's call with the rows and error it recorded.
func (c *Call) EndScan(ctx context.Context) {
	if c != nil {
		c.End(ctx, c.err, c.rows, 0)
	}
}

// BucketCall is one bucket's scan being traced; a nil *BucketCall (telemetry off) does nothing, so a
// scan without providers pays one nil check per row.
type BucketCall struct {
	tel        *Telemetry
	span       trace.Span
	start      time.Time
	attrs      metric.MeasurementOption
	retries    atomic.Int64 // counted by the driver through the context
	rows, size int64
	err        error
}

// BeginBucket starts the child span of bucket's scan; the returned context carries it and the retry
// counter to the driver.
func (tel *Telemetry) BeginBucket(ctx context.Context, table string, bucket int) (context.Context, *BucketCall) {
	if tel == nil {
		return ctx, nil
	}
	kv := make([]attribute.KeyValue, 0, len(tel.store)+3)
	kv = append(kv, tel.store...)
	kv = append(kv, semconv.DBOperationName("scan"), semconv.DBCollectionName(table), AttrBucket.Int(bucket))
	bc := &BucketCall{tel: tel, start: time.Now(), attrs: metric.WithAttributeSet(attribute.NewSet(kv...))}
	ctx, bc.span = tel.tracer.Start(ctx, "scan "+table+" bucket "+strconv.Itoa(bucket),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(kv...))
	tel.scansInFlight.Add(ctx, 1, bc.attrs)
	return driverkit.WithRetryCounter(ctx, &bc.retries), bc
}

// Row counts one row the bucket returned, with its key and value bytes. It is small enough to inline:
// a scan without telemetry pays a nil check per row, nothing more.
func (bc *BucketCall) Row(key []byte, cells []backends.Cell) {
	if bc != nil {
		bc.count(key, cells)
	}
}

func (bc *BucketCall) count(key []byte, cells []backends.Cell) {
	bc.rows++
	n := len(key)
	for i := range cells {
		n += len(cells[i].Value)
	}
	bc.size += int64(n)
}

// Fail records the bucket scan's error.
func (bc *BucketCall) Fail(err error) {
	if bc != nil {
		bc.err = err
	}
}

// End closes the bucket's span and records its latency and rows.
func (bc *BucketCall) End(ctx context.Context) {
	if bc == nil {
		return
	}
	err := bc.err
	tel := bc.tel
	tel.scansInFlight.Add(ctx, -1, bc.attrs)
	tel.bucketDuration.Record(ctx, time.Since(bc.start).Seconds(), bc.attrs)
	tel.bucketRows.Add(ctx, bc.rows, bc.attrs)
	retries := bc.retries.Load()
	if retries > 0 {
		tel.retries.Add(ctx, retries, bc.attrs)
	}
	bc.span.SetAttributes(AttrRows.Int64(bc.rows), AttrBytes.Int64(bc.size), AttrRetries.Int64(retries))
	// A bucket scan cancelled because the merge stopped (the caller broke out, or another bucket
	// failed) did not fail: the scan's own span tells what happened.
	if err != nil && !errors.Is(err, context.Canceled) {
		bc.span.RecordError(err)
		bc.span.SetStatus(codes.Error, err.Error())
	}
	bc.span.End()
}
