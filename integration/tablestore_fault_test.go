//go:build integration

package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/tablestore"
	"github.com/brine-kv/brine/backends/tablestore/tablestoretest"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// TestTablestoreFaults: with the local server answering requests and batch rows with server busy,
// partition unavailable and quota errors, an import and the fan-out scans that read it back lose and
// duplicate nothing: the physical table and every scan equal the input. The SDK's own retries are cut
// to 2 within 200 ms, so that bursts of failures outlast them and brine's retries (per row in the
// driver, per batch in the import) are exercised too.
func TestTablestoreFaults(t *testing.T) {
	codes := []string{tablestoretest.CodeServerBusy, tablestoretest.CodePartitionUnavailable, tablestoretest.CodeQuotaExhausted}
	tsTargets(t, func(t *testing.T, tg *tsTarget) {
		srv := tg.local(t)
		e := tg.open(t, func(c *tablestore.Config) {
			c.SDKRetryTimes, c.SDKRetryWindow = 2, 200*time.Millisecond
			c.RetryBaseDelay, c.RetryMaxDelay = time.Millisecond, 20*time.Millisecond
		})
		tbl := e.salted(t, "hash:16")
		var keys [][]byte
		for i := range 3000 {
			keys = append(keys, fmt.Appendf(nil, "evt-%08d", i*7919%100_003))
		}
		want := tsWant(keys)

		srv.ResetStats()
		srv.FailRandomly(1, 0.15, codes...)
		srv.FailRowsRandomly(2, 0.1, codes...)
		// A burst longer than the SDK's retries, whichever of the 4 writers it hits (each call tries 3
		// times): the import must retry batches itself.
		srv.FailNext("BatchWriteRow", tablestoretest.CodeServerBusy, 16)
		stats := tsImport(t, tbl, keys, client.ImportOptions{BatchRows: 100, Workers: 4,
			BaseBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 20})
		st := srv.Stats()["BatchWriteRow"]
		t.Logf("import with faults: %+v; server: %d requests, %d failed, %d row errors", stats, st.Requests, st.Failures, st.RowErrors)
		if st.Failures < 16 || st.RowErrors == 0 || stats.Retried == 0 {
			t.Fatalf("faults not exercised: %+v, import %+v", st, stats)
		}

		// Scans with faults: the SDK retries each failed page (default retries: a scan has no retry of
		// its own above the SDK's, and a page lost there would end the scan with an error).
		srv.FailRowsRandomly(0, 0)
		r := tg.open(t, nil)
		scanTbl, err := r.client.OpenTable(testkit.Context(t, time.Minute), tbl.Name(), nil)
		if err != nil {
			t.Fatal(err)
		}
		srv.ResetStats()
		for _, reverse := range []bool{false, true} {
			opts := []client.ReadOption{client.BatchSize(50)}
			exp := want
			if reverse {
				opts, exp = append(opts, client.Reverse()), tsReversed(want)
			}
			if d := tsDiff(tsScan(t, scanTbl, client.Range{}, opts...), exp); d != "" {
				t.Fatalf("scan with faults, reverse=%v: %s", reverse, d)
			}
		}
		if f := srv.Stats()["GetRange"].Failures; f == 0 {
			t.Fatal("no GetRange failed: scan faults not exercised")
		}
		srv.ClearFaults()
		// The physical table, read with the plain SDK: every row once, with its value.
		phys := e.rawRange(t, tbl.Name(), nil, nil)
		if len(phys) != len(want) {
			t.Fatalf("physical table holds %d rows, want %d", len(phys), len(want))
		}
		if d := tsDiff(tsScan(t, scanTbl, client.Range{}), want); d != "" {
			t.Fatalf("scan after faults: %s", d)
		}
	})
}
