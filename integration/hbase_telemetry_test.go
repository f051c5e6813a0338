//go:build integration

package integration

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/hbasetest"
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
