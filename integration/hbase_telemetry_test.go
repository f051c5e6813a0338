//go:build integration

package integration

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/telemetry"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestHBaseTraceSpans scans a hash:4 table on HBase through a traced client: one scan span with the
// database attributes, one child span per bucket whose rows add up to the table's, bytes read from the
// server, and no retries on a quiet table.
func TestHBaseTraceSpans(t *testing.T) {
	const rows = 1000
	e := openHBase(t)
	tbl := e.salted(t, "hash:4", 0)
	keys := make([][]byte, rows)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64([]byte("k"), uint64(i))
	}
	writeBrine(t, tbl, keys)

	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(t.Context())
	zk := hbasetest.ZK(t)
	// Not closed: closing a Client closes its backend, which e owns.
	traced := client.New(e.backend, client.WithTracerProvider(tp), client.WithStoreAttributes("hbase", zk))
	tt, err := traced.OpenTable(testkit.Context(t, time.Minute), tbl.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := testkit.Count(t, tt.Scan(testkit.Context(t, time.Minute), client.Range{}))
	if n != rows {
		t.Fatalf("scanned %d rows, want %d", n, rows)
	}

	byName := map[string]map[attribute.Key]attribute.Value{}
	for _, s := range sr.Ended() {
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes() {
			m[kv.Key] = kv.Value
		}
		byName[s.Name()] = m
	}
	scan := byName["scan "+tbl.Name()]
	if scan["db.system"].AsString() != "hbase" || scan["server.address"].AsString() != zk ||
		scan["db.collection.name"].AsString() != tbl.Name() || scan[client.AttrRows].AsInt64() != rows {
		t.Fatalf("scan span attributes: %v", scan)
	}
	var sum int64
	for b := range 4 {
		a, ok := byName[fmt.Sprintf("scan %s bucket %d", tbl.Name(), b)]
		if !ok {
			t.Fatalf("no span for bucket %d", b)
		}
		if a[client.AttrRows].AsInt64() == 0 || a[client.AttrBytes].AsInt64() <= a[client.AttrRows].AsInt64()*9 || a[client.AttrRetries].AsInt64() != 0 {
			t.Errorf("bucket %d: rows %v bytes %v retries %v; want some rows, more than their 9-byte keys in bytes, no retries",
				b, a[client.AttrRows], a[client.AttrBytes], a[client.AttrRetries])
		}
		sum += a[client.AttrRows].AsInt64()
	}
	if sum != rows {
		t.Errorf("bucket spans hold %d rows, want %d", sum, rows)
	}
}

// TestHBaseTraceNesting: gohbase's own spans (Mutate, Multi, Scan, from the global TracerProvider,
// the only one gohbase reads) nest under brine's. A salted Put, a Scan and an Import each show as one
// brine span, every gohbase span of the call under it; and no span of a call that succeeded is an
// error.
func TestHBaseTraceNesting(t *testing.T) {
	e := openHBase(t)
	tbl := e.salted(t, "hash:4", 0)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(t.Context())
	// gohbase starts its spans with otel.Tracer("gohbase"), from the global provider: there is no
	// option to give it one. The tests of this package run one at a time.
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	traced := client.New(e.backend, client.WithTracerProvider(tp))
	ctx := testkit.Context(t, time.Minute)
	tt, err := traced.OpenTable(ctx, tbl.Name(), nil)
	if err != nil {
		t.Fatal(err)
	}

	calls := []struct {
		span string // brine's span of the call
		do   func() error
	}{
		{"put " + tbl.Name(), func() error {
			return tt.Put(ctx, []byte("k1"), client.Cell{Family: fam, Qualifier: "q", Value: []byte("v")})
		}},
		{"scan " + tbl.Name(), func() error {
			testkit.Count(t, tt.Scan(ctx, client.Range{}))
			return nil
		}},
		{"import " + tbl.Name(), func() error {
			rows := func(yield func(client.ImportRow, error) bool) {
				for i := range 200 {
					m := client.Mutation{Key: fmt.Appendf(nil, "i%03d", i), Cells: []client.Cell{{Family: fam, Qualifier: "q", Value: []byte("v")}}}
					if !yield(client.ImportRow{Mutation: m}, nil) {
						return
					}
				}
			}
			_, err := tt.Import(ctx, rows, client.ImportOptions{})
			return err
		}},
	}
	// Once untraced first: gohbase probes each region it connects to for the first time with a Get of
	// its own, on context.Background (rpc.go, isRegionEstablished), a span of no call's.
	for _, c := range calls {
		if err := c.do(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range calls {
		t.Run(c.span, func(t *testing.T) {
			before := len(sr.Ended())
			if err := c.do(); err != nil {
				t.Fatal(err)
			}
			spans := sr.Ended()[before:]
			byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			var roots []sdktrace.ReadOnlySpan
			for _, s := range spans {
				byID[s.SpanContext().SpanID()] = s
				if s.Status().Code == codes.Error {
					t.Errorf("span %q (%s) is an error: %s", s.Name(), s.InstrumentationScope().Name, s.Status().Description)
				}
			}
			for _, s := range spans {
				if _, ok := byID[s.Parent().SpanID()]; !ok {
					roots = append(roots, s)
				}
			}
			if len(roots) != 1 || roots[0].Name() != c.span || roots[0].InstrumentationScope().Name != telemetry.InstrumentationName {
				names := make([]string, len(roots))
				for i, r := range roots {
					names[i] = r.InstrumentationScope().Name + ":" + r.Name()
				}
				t.Fatalf("root spans %v, want brine's %q alone", names, c.span)
			}
			gohbaseSpans := 0
			for _, s := range spans {
				if s.InstrumentationScope().Name == "gohbase" {
					gohbaseSpans++
				}
			}
			if gohbaseSpans == 0 {
				t.Errorf("no gohbase span under %q", c.span)
			}
		})
	}
}
