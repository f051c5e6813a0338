package client_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// observed is a client wired to in-memory span and metric readers.
type observed struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	c      *client.Client
}

func newObserved(t *testing.T, b backends.Backend) *observed {
	t.Helper()
	o := &observed{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(o.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	o.c = client.New(b, client.WithTracerProvider(tp), client.WithMeterProvider(mp),
		client.WithStoreAttributes("memory", "zk1:2181"))
	t.Cleanup(func() { o.c.Close() })
	return o
}

func attrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// spansNamed returns the ended spans with this name, in end order.
func (o *observed) spansNamed(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range o.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func (o *observed) metric(t *testing.T, name string) metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m.Data
			}
		}
	}
	t.Fatalf("metric %s not recorded", name)
	return nil
}

func TestTelemetryCallSpans(t *testing.T) {
	ctx := context.Background()
	o := newObserved(t, memory.New())
	tbl, err := o.c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "k%03d", i) }
	muts := make([]client.Mutation, 40)
	for i := range muts {
		muts[i] = client.Mutation{Key: key(i), Cells: []client.Cell{testkit.Cell("q", "v")}}
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
	if err := tbl.Put(ctx, key(99), testkit.Cell("q", "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, key(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.Get(ctx, key(500)); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	if _, err := tbl.GetMany(ctx, [][]byte{key(1), key(2)}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Delete(ctx, key(99)); err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.CheckAndMutate(ctx, client.Condition{Family: "d", Qualifier: "q", Value: []byte("v")},
		client.Mutation{Key: key(3), Cells: []client.Cell{testkit.Cell("q", "w")}}); err != nil {
		t.Fatal(err)
	}
	rows := testkit.Count(t, tbl.Scan(ctx, client.Range{}))

	tests := []struct {
		name, op string
		rows     int64
		failed   bool
	}{
		{"apply orders", "apply", 40, false},
		{"put orders", "put", 1, false},
		{"get_many orders", "get_many", 2, false},
		{"delete orders", "delete", 1, false},
		{"check_and_mutate orders", "check_and_mutate", 1, false},
		{"scan orders", "scan", int64(rows), false},
	}
	for _, tc := range tests {
		t.Run(tc.op, func(t *testing.T) {
			spans := o.spansNamed(tc.name)
			if len(spans) != 1 {
				t.Fatalf("%d spans named %q, want 1", len(spans), tc.name)
			}
			a := attrs(spans[0].Attributes())
			want := map[attribute.Key]string{"db.system": "memory", "db.operation.name": tc.op,
				"db.collection.name": "orders", "server.address": "zk1:2181"}
			for k, v := range want {
				if a[k].AsString() != v {
					t.Errorf("%s = %q, want %q", k, a[k].AsString(), v)
				}
			}
			if got := a[client.AttrRows].AsInt64(); got != tc.rows {
				t.Errorf("rows = %d, want %d", got, tc.rows)
			}
		})
	}
	gets := o.spansNamed("get orders")
	if len(gets) != 2 || gets[0].Status().Code.String() != "Unset" || gets[1].Status().Code.String() != "Unset" {
		t.Fatalf("get spans: want two without error (not found is an answer), got %d", len(gets))
	}
}

func TestTelemetryBucketSpans(t *testing.T) {
	ctx := context.Background()
	o := newObserved(t, memory.New())
	tbl, err := o.c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	muts := make([]client.Mutation, 200)
	for i := range muts {
		muts[i] = client.Mutation{Key: fmt.Appendf(nil, "k%03d", i), Cells: []client.Cell{testkit.Cell("q", "val")}}
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
	counts, err := tbl.CountByBucket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	testkit.Count(t, tbl.Scan(ctx, client.Range{}))
	scan := o.spansNamed("scan orders")[0]
	if a := attrs(scan.Attributes()); a[client.AttrBuckets].AsInt64() != 4 || a[client.AttrPrunedBuckets].AsInt64() != 0 {
		t.Errorf("full scan: buckets %v pruned %v, want 4 and 0", a[client.AttrBuckets], a[client.AttrPrunedBuckets])
	}
	for b, want := range counts {
		spans := o.spansNamed(fmt.Sprintf("scan orders bucket %d", b))
		if len(spans) != 1 {
			t.Fatalf("bucket %d: %d spans, want 1", b, len(spans))
		}
		s := spans[0]
		if s.Parent().SpanID() != scan.SpanContext().SpanID() {
			t.Errorf("bucket %d: parent %v, want the scan span %v", b, s.Parent().SpanID(), scan.SpanContext().SpanID())
		}
		a := attrs(s.Attributes())
		wantBytes := want * int64(1+len("k000")+len("val")) // bytes as read: the physical key has a 1-byte salt
		if a[client.AttrBucket].AsInt64() != int64(b) || a[client.AttrRows].AsInt64() != want ||
			a[client.AttrBytes].AsInt64() != wantBytes || a[client.AttrRetries].AsInt64() != 0 {
			t.Errorf("bucket %d: bucket %v rows %v bytes %v retries %v, want %d, %d, %d, 0", b, a[client.AttrBucket],
				a[client.AttrRows], a[client.AttrBytes], a[client.AttrRetries], b, want, wantBytes)
		}
	}

	// The per-bucket rows counter shows the same spread, bucket by bucket.
	sum, ok := o.metric(t, client.MetricBucketScanRows).(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("%s is not an int64 sum", client.MetricBucketScanRows)
	}
	got := make([]int64, len(counts))
	for _, dp := range sum.DataPoints {
		b, _ := dp.Attributes.Value(client.AttrBucket)
		got[b.AsInt64()] += dp.Value
	}
	if !slices.Equal(got, counts) {
		t.Errorf("%s per bucket = %v, want %v", client.MetricBucketScanRows, got, counts)
	}

	// A single-key range reads one bucket: the other three are pruned.
	testkit.Count(t, tbl.Scan(ctx, client.Range{Start: []byte("k007"), End: []byte("k007\x00")}))
	point := o.spansNamed("scan orders")[1]
	if a := attrs(point.Attributes()); a[client.AttrBuckets].AsInt64() != 1 || a[client.AttrPrunedBuckets].AsInt64() != 3 || a[client.AttrRows].AsInt64() != 1 {
		t.Errorf("point scan: buckets %v pruned %v rows %v, want 1, 3, 1", a[client.AttrBuckets], a[client.AttrPrunedBuckets], a[client.AttrRows])
	}
}

func TestTelemetryMetrics(t *testing.T) {
	ctx := context.Background()
	o := newObserved(t, memory.New())
	tbl, err := o.c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:4")})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := tbl.Put(ctx, fmt.Appendf(nil, "k%d", i), testkit.Cell("q", "v")); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		testkit.Count(t, tbl.Scan(ctx, client.Range{}))
	}
	hist, ok := o.metric(t, client.MetricOperationDuration).(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is not a float64 histogram", client.MetricOperationDuration)
	}
	calls := map[string]uint64{}
	for _, dp := range hist.DataPoints {
		op, _ := dp.Attributes.Value("db.operation.name")
		sys, _ := dp.Attributes.Value("db.system")
		coll, _ := dp.Attributes.Value("db.collection.name")
		if sys.AsString() != "memory" || coll.AsString() != "orders" {
			t.Errorf("data point %v: want db.system memory and db.collection.name orders", dp.Attributes.ToSlice())
		}
		calls[op.AsString()] += dp.Count
	}
	if calls["put"] != 10 || calls["scan"] != 3 {
		t.Errorf("calls per operation = %v, want 10 put and 3 scan", calls)
	}
	byOp := func(name string) map[string]int64 {
		sum, ok := o.metric(t, name).(metricdata.Sum[int64])
		if !ok {
			t.Fatalf("%s is not an int64 sum", name)
		}
		m := map[string]int64{}
		for _, dp := range sum.DataPoints {
			op, _ := dp.Attributes.Value("db.operation.name")
			m[op.AsString()] += dp.Value
		}
		return m
	}
	if got := byOp(client.MetricRowsWritten); got["put"] != 10 {
		t.Errorf("rows written = %v, want 10 by put", got)
	}
	if got := byOp(client.MetricRowsRead); got["scan"] != 30 {
		t.Errorf("rows read = %v, want 30 by scan", got)
	}
	if got := byOp(client.MetricScansInFlight); got["scan"] != 0 {
		t.Errorf("bucket scans in flight after every scan ended = %v, want 0", got)
	}
	if _, ok := o.metric(t, client.MetricBucketScanDuration).(metricdata.Histogram[float64]); !ok {
		t.Errorf("%s is not a float64 histogram", client.MetricBucketScanDuration)
	}
}

// flaky fails the first write of every batch with a retryable error, the next with a permanent one
// for keys starting with "bad", and counts a driver retry on every scan, as the HBase driver does when
// it reopens a scanner.
type flaky struct {
	backends.Backend
	applies atomic.Int64
}

func (f *flaky) Apply(ctx context.Context, table string, muts []backends.Mutation) ([]error, error) {
	if f.applies.Add(1) == 1 {
		return nil, driverkit.Retryable(errors.New("region moved"))
	}
	errs := make([]error, len(muts))
	failed := false
	for i, m := range muts {
		if len(m.Key) > 3 && string(m.Key[len(m.Key)-3:]) == "bad" {
			errs[i], failed = errors.New("rejected"), true
		}
	}
	rowErrs, err := f.Backend.Apply(ctx, table, muts)
	if err != nil || !failed {
		return rowErrs, err
	}
	return errs, nil
}

func (f *flaky) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	driverkit.CountRetry(ctx)
	return f.Backend.Scan(ctx, table, r, opts)
}

func TestTelemetryRetriesAndImport(t *testing.T) {
	ctx := context.Background()
	o := newObserved(t, &flaky{Backend: memory.New()})
	tbl, err := o.c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "none")})
	if err != nil {
		t.Fatal(err)
	}
	in := func(yield func(client.ImportRow, error) bool) {
		for _, k := range []string{"a", "b", "c-bad"} {
			if !yield(client.ImportRow{Mutation: client.Mutation{Key: []byte(k), Cells: []client.Cell{testkit.Cell("q", "v")}}}, nil) {
				return
			}
		}
	}
	stats, err := tbl.Import(ctx, in, client.ImportOptions{BaseBackoff: 1})
	if !errors.Is(err, client.ErrRowsFailed) || stats.Written != 2 || stats.Failed != 1 || stats.Retried != 3 {
		t.Fatalf("import: %+v, %v; want 2 written, 1 failed, 3 retried, ErrRowsFailed", stats, err)
	}
	imp := o.spansNamed("import orders")
	if len(imp) != 1 {
		t.Fatalf("%d import spans, want 1", len(imp))
	}
	if a := attrs(imp[0].Attributes()); a[client.AttrRows].AsInt64() != 2 || a[client.AttrRetries].AsInt64() != 3 {
		t.Errorf("import span: rows %v retries %v, want 2 and 3", a[client.AttrRows], a[client.AttrRetries])
	}
	testkit.Count(t, tbl.Scan(ctx, client.Range{}))
	bucket := o.spansNamed("scan orders bucket 0")
	if len(bucket) != 1 || attrs(bucket[0].Attributes())[client.AttrRetries].AsInt64() != 1 {
		t.Fatalf("bucket span: want one with 1 retry, got %d spans", len(bucket))
	}

	outcome := map[string]int64{}
	sum := o.metric(t, client.MetricImportRows).(metricdata.Sum[int64])
	for _, dp := range sum.DataPoints {
		v, _ := dp.Attributes.Value(client.AttrOutcome)
		outcome[v.AsString()] += dp.Value
	}
	if outcome["written"] != 2 || outcome["failed"] != 1 {
		t.Errorf("import rows by outcome = %v, want 2 written and 1 failed", outcome)
	}
	total := func(name string) (n int64) {
		for _, dp := range o.metric(t, name).(metricdata.Sum[int64]).DataPoints {
			n += dp.Value
		}
		return n
	}
	if got := total(client.MetricRetries); got != 4 { // 3 rows retried by Import, 1 scanner reopened
		t.Errorf("retries = %d, want 4", got)
	}
	if got := total(client.MetricGiveUps); got != 1 {
		t.Errorf("give-ups = %d, want 1", got)
	}
}

// stalling returns each bucket's first row, then waits for its context as a round trip would, and
// fails with the context's error when the scan is cancelled.
type stalling struct{ backends.Backend }

func (s stalling) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		for row, err := range s.Backend.Scan(ctx, table, r, opts) {
			if !yield(row, err) || err != nil {
				return
			}
			<-ctx.Done()
			yield(backends.Row{}, ctx.Err())
			return
		}
	}
}

// TestTelemetryEarlyBreak: a caller breaking out of a scan ends every span, and no bucket span says it
// failed, although each bucket's driver call failed with the cancellation: the scan was stopped, not
// broken.
func TestTelemetryEarlyBreak(t *testing.T) {
	ctx := context.Background()
	o := newObserved(t, stalling{memory.New()})
	tbl, err := o.c.CreateTable(ctx, "orders", client.TableConfig{Salter: testkit.Salter(t, "hash:8")})
	if err != nil {
		t.Fatal(err)
	}
	muts := make([]client.Mutation, 5000)
	for i := range muts {
		muts[i] = client.Mutation{Key: fmt.Appendf(nil, "k%05d", i), Cells: []client.Cell{testkit.Cell("q", "v")}}
	}
	if rowErrs, err := tbl.Apply(ctx, muts); err != nil || rowErrs != nil {
		t.Fatal(err, rowErrs)
	}
	for _, err := range tbl.Scan(ctx, client.Range{}) {
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	scans := o.spansNamed("scan orders")
	if len(scans) != 1 || attrs(scans[0].Attributes())[client.AttrRows].AsInt64() != 1 {
		t.Fatalf("scan spans: %d, want 1 with 1 row", len(scans))
	}
	for b := range 8 {
		s := o.spansNamed(fmt.Sprintf("scan orders bucket %d", b))
		if len(s) != 1 {
			t.Fatalf("bucket %d: %d spans ended, want 1", b, len(s))
		}
		if s[0].Status().Code.String() == "Error" {
			t.Errorf("bucket %d: status %v after the caller stopped", b, s[0].Status())
		}
	}
	if got := o.metric(t, client.MetricScansInFlight).(metricdata.Sum[int64]).DataPoints; len(got) == 0 {
		t.Fatal("no in-flight data points")
	} else {
		for _, dp := range got {
			if dp.Value != 0 {
				t.Errorf("in flight after the scan returned: %d", dp.Value)
			}
		}
	}
}
