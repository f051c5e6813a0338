package client_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"

	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// durationErrorTypes maps each "operation collection" of the duration histogram to the error.type
// values its points carry ("" for none).
func (o *observed) durationErrorTypes(t *testing.T) map[string][]string {
	t.Helper()
	h, ok := o.metric(t, client.MetricOperationDuration).(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("%s is not a float histogram", client.MetricOperationDuration)
	}
	out := map[string][]string{}
	for _, p := range h.DataPoints {
		op, _ := p.Attributes.Value(semconv.DBOperationNameKey)
		coll, _ := p.Attributes.Value(semconv.DBCollectionNameKey)
		et, _ := p.Attributes.Value(semconv.ErrorTypeKey)
		k := op.AsString() + " " + coll.AsString()
		out[k] = append(out[k], et.AsString())
	}
	return out
}

// Only a call that fails its caller is an error to telemetry: an indexed Put's lookup of a free unique
// value and a Get of a missing row are answers, not failures.
func TestTelemetryOnlyFailuresAreErrors(t *testing.T) {
	ctx := context.Background()
	o := newObserved(t, memory.New())
	orders, err := o.c.CreateTable(ctx, "orders", client.TableConfig{
		Salter:  testkit.Salter(t, "hash:4"),
		Indexes: []client.IndexConfig{{Name: "by_ext", Salter: testkit.Salter(t, "hash:4"), Unique: true, Parts: []client.IndexPart{client.ColumnPart("d", "ext")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ext := func(v string) client.Cell { return client.Cell{Family: "d", Qualifier: "ext", Value: []byte(v)} }
	if err := orders.Put(ctx, []byte("o1"), ext("x-1")); err != nil {
		t.Fatal(err)
	}
	if _, err := orders.Get(ctx, []byte("missing")); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("get missing: %v", err)
	}
	// A second row taking a used unique value fails its caller: that one is an error.
	if err := orders.Put(ctx, []byte("o2"), ext("x-1")); !errors.Is(err, client.ErrUniqueViolation) {
		t.Fatalf("put of a used unique value: %v", err)
	}

	var lookups, failedPuts int
	for _, s := range o.spans.Ended() {
		name, status, events := s.Name(), s.Status().Code, len(s.Events())
		failedCall := name == "put orders" && status == codes.Error
		if failedCall {
			failedPuts++
			continue
		}
		if name == "get orders__ix_by_ext" {
			lookups++
		}
		if status == codes.Error || events > 0 {
			t.Errorf("span %q: status %v, %d events; want no error on a call that did not fail its caller", name, status, events)
		}
	}
	if lookups == 0 {
		t.Error("no span of the index lookup: the test no longer covers it")
	}
	if failedPuts != 1 {
		t.Errorf("%d failed put spans, want 1 (the unique violation)", failedPuts)
	}
	for op, types := range o.durationErrorTypes(t) {
		for _, et := range types {
			if et != "" && op != "put orders" {
				t.Errorf("duration of %q has error.type %q", op, et)
			}
		}
	}
	if got := o.durationErrorTypes(t)["put orders"]; len(got) != 2 {
		t.Errorf("put orders durations by error.type: %q, want one ok and one failed", got)
	}
}
