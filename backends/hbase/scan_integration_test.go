//go:build integration

package hbase_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/backendtest"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// scanKeys are the rows of the scan tests: binary keys around every region boundary, including keys
// that start with a boundary's predecessor byte followed by a long run of 0xFF (gohbase's own reverse
// scan skips those when it steps from one region to the previous).
var scanKeys = func() [][]byte {
	ks := [][]byte{
		{0x00}, {0x00, 0x00}, {0x00, 0x01}, {0x01},
		[]byte("a"), []byte("a\x00"), []byte("ab"), []byte("b"),
		[]byte("m"), []byte("m\x00"), []byte("mm"),
		append([]byte("l"), bytes.Repeat([]byte{0xff}, 8)...),
		append(append([]byte("l"), bytes.Repeat([]byte{0xff}, 8)...), 'x'),
		append([]byte("l"), bytes.Repeat([]byte{0xff}, 12)...),
		{0x7f, 0xff}, {0x80}, {0x80, 0x00}, {0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		{0xff}, {0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff},
	}
	for i := range 30 {
		ks = append(ks, fmt.Appendf(nil, "row%03d", i))
	}
	slices.SortFunc(ks, bytes.Compare)
	return ks
}()

var scanSplits = [][]byte{{0x00, 0x01}, []byte("b"), []byte("m"), []byte("row010"), {0x80}, {0xff}}

// expectScan is the model: keys in r, in scan order, at most limit.
func expectScan(r backends.Range, reverse bool, limit int) []string {
	ks := backendtest.ExpectKeys(scanKeys, r, reverse, limit)
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = fmt.Sprintf("%q", k)
	}
	return out
}

func fillScanTable(t *testing.T, b *hbase.Backend) string {
	t.Helper()
	table := newTable(t, b, backends.TableOptions{SplitKeys: scanSplits})
	muts := make([]backends.Mutation, len(scanKeys))
	for i, k := range scanKeys {
		muts[i] = put(k, cell("d", "v", string(k)), cell("e", "w", "x"))
	}
	testkit.Apply(t, testCtx(t), b, table, muts...)
	return table
}

func TestScanConformance(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := fillScanTable(t, b)

	lff := append([]byte("l"), bytes.Repeat([]byte{0xff}, 8)...)
	ranges := []struct {
		name string
		r    backends.Range
	}{
		{"all", backends.Range{}},
		{"start only", backends.Range{Start: []byte("b")}},
		{"end only", backends.Range{End: []byte("m")}},
		{"end on existing key", backends.Range{Start: []byte("a"), End: []byte("mm")}},
		{"bounds on region boundaries", backends.Range{Start: []byte("b"), End: []byte("m")}},
		{"bounds on existing keys", backends.Range{Start: []byte("a\x00"), End: []byte("row005")}},
		{"one key", backends.Range{Start: []byte("m"), End: []byte("m\x00")}},
		{"binary low", backends.Range{Start: []byte{0x00}, End: []byte{0x00, 0x01}}},
		{"binary high", backends.Range{Start: []byte{0xff}, End: []byte{0xff, 0xff}}},
		{"to the top", backends.Range{Start: []byte{0x80}}},
		{"0xff run before boundary", backends.Range{Start: lff, End: []byte("m")}},
		{"inside one region", backends.Range{Start: []byte("row011"), End: []byte("row015")}},
		{"empty: start == end", backends.Range{Start: []byte("m"), End: []byte("m")}},
		{"empty: start > end", backends.Range{Start: []byte("z"), End: []byte("a")}},
		{"empty: no keys between", backends.Range{Start: []byte("mn"), End: []byte("r")}},
	}
	for _, rc := range ranges {
		for _, reverse := range []bool{false, true} {
			for _, limit := range []int{0, 1, 3, 1000} {
				for _, batch := range []int{0, 1, 2} {
					name := fmt.Sprintf("%s/reverse=%v/limit=%d/batch=%d", rc.name, reverse, limit, batch)
					t.Run(name, func(t *testing.T) {
						rows, err := testkit.CollectErr(b.Scan(ctx, table, rc.r, backends.ScanOptions{Reverse: reverse, Limit: limit, BatchSize: batch}))
						if err != nil {
							t.Fatalf("Scan: %v", err)
						}
						if got, want := keysOf(rows), expectScan(rc.r, reverse, limit); !slices.Equal(got, want) {
							t.Errorf("keys\n got %v\nwant %v", got, want)
						}
						for _, r := range rows {
							if len(r.Cells) != 2 || string(r.Cells[0].Value) != string(r.Key) {
								t.Errorf("row %q cells = %+v", r.Key, r.Cells)
							}
						}
					})
				}
			}
		}
	}
}

func TestScanColumnsAndEarlyStop(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := fillScanTable(t, b)

	for _, reverse := range []bool{false, true} {
		rows, err := testkit.CollectErr(b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{
			Reverse: reverse, ReadOptions: backends.ReadOptions{Columns: []backends.Column{{Family: "e"}}},
		}))
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if len(rows) != len(scanKeys) {
			t.Errorf("reverse=%v: %d rows, want %d", reverse, len(rows), len(scanKeys))
		}
		for _, r := range rows {
			if len(r.Cells) != 1 || r.Cells[0].Family != "e" {
				t.Fatalf("reverse=%v: row %q cells %+v, want family e only", reverse, r.Key, r.Cells)
			}
		}

		// Stopping early leaves no error behind, and the next scan works.
		n := 0
		for _, err := range b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{Reverse: reverse, BatchSize: 2}) {
			if err != nil {
				t.Fatalf("Scan: %v", err)
			}
			if n++; n == 3 {
				break
			}
		}
	}

	// A canceled ctx ends the scan with the ctx's error as the last element.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var last error
	n := 0
	for _, err := range b.Scan(cctx, table, backends.Range{}, backends.ScanOptions{BatchSize: 1}) {
		if err != nil {
			last = err
			break
		}
		if n++; n == 2 {
			cancel()
		}
	}
	if !errors.Is(last, context.Canceled) {
		t.Errorf("scan after cancel: got %v, want context.Canceled", last)
	}
}

func TestScanWideRowsInPieces(t *testing.T) {
	b := openBackend(t, hbase.Options{})
	ctx := testCtx(t)
	table := newTable(t, b, backends.TableOptions{SplitKeys: [][]byte{[]byte("k2")}})
	// Rows of ~3 MB: more than one scan response (2 MB each), so they arrive as partial results.
	big := strings.Repeat("x", 512<<10)
	var muts []backends.Mutation
	for _, k := range []string{"k1", "k2", "k3"} {
		var cells []backends.Cell
		for q := range 6 {
			cells = append(cells, cell("d", fmt.Sprintf("q%d", q), big))
		}
		muts = append(muts, put([]byte(k), cells...))
	}
	testkit.Apply(t, testCtx(t), b, table, muts...)
	for _, reverse := range []bool{false, true} {
		rows, err := testkit.CollectErr(b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{Reverse: reverse}))
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		if len(rows) != 3 {
			t.Fatalf("reverse=%v: %d rows, want 3", reverse, len(rows))
		}
		for _, r := range rows {
			if len(r.Cells) != 6 {
				t.Errorf("reverse=%v: row %s has %d cells, want 6", reverse, r.Key, len(r.Cells))
			}
		}
	}
}

// TestRegionChanges splits, flushes, compacts and moves regions under the driver (through
// scripts/hbase/admin.sh), and checks that scans and reads still see every row exactly once.
func TestRegionChanges(t *testing.T) {
	b := openBackend(t, hbase.Options{RequestTimeout: 3 * time.Second})
	admin, err := hbasetest.FindAdmin(hbasetest.ZK(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	table := fillScanTable(t, b)
	all := expectScan(backends.Range{}, false, 0)
	allRev := expectScan(backends.Range{}, true, 0)
	check := func(stage string) {
		t.Helper()
		for _, reverse := range []bool{false, true} {
			rows, err := testkit.CollectErr(b.Scan(ctx, table, backends.Range{}, backends.ScanOptions{Reverse: reverse, BatchSize: 3}))
			if err != nil {
				t.Fatalf("%s: Scan(reverse=%v): %v", stage, reverse, err)
			}
			want := all
			if reverse {
				want = allRev
			}
			if got := keysOf(rows); !slices.Equal(got, want) {
				t.Errorf("%s: reverse=%v keys\n got %v\nwant %v", stage, reverse, got, want)
			}
		}
	}
	check("before")

	// Split where the driver's cached boundaries do not know it.
	split := []byte("row020")
	if err := admin.Split(ctx, table, split); err != nil {
		t.Fatalf("split: %v", err)
	}
	// Scan first: the driver's cached boundaries (from the reverse scans above) predate the split.
	check("after split")
	regions, err := b.Regions(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(regions, func(k []byte) bool { return bytes.Equal(k, split) }) {
		t.Errorf("after split at %q, Regions = %q", split, regions)
	}
	javaRegions, err := admin.Regions(ctx, table)
	if err != nil || len(javaRegions) != len(regions) {
		t.Errorf("admin regions = %q (%v), driver says %q", javaRegions, err, regions)
	}

	if err := admin.Flush(ctx, table); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := admin.MajorCompact(ctx, table); err != nil {
		t.Fatalf("compact: %v", err)
	}
	check("after flush and compaction")

	// A closed region makes requests time out as retryable; reopened, it serves again.
	key := []byte("row005")
	if err := admin.CloseRegion(ctx, table, key); err != nil {
		t.Fatalf("close region: %v", err)
	}
	_, err = b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{})
	if !driverkit.IsRetryable(err) {
		t.Errorf("Read from a closed region: got %v, want a retryable error", err)
	}
	if err := admin.OpenRegion(ctx, table, key); err != nil {
		t.Fatalf("open region: %v", err)
	}
	// The first reads may still fail as retryable: the pinned gohbase waits out a reconnect backoff
	// it grew while the region was closed, up to the driver's RefreshAfter (10 s), which then
	// replaces the client. A caller retries those; within that, the region must serve.
	var rows []backends.Row
	for deadline := time.Now().Add(15 * time.Second); ; {
		rows, err = b.Read(ctx, table, [][]byte{key}, backends.ReadOptions{})
		if !driverkit.IsRetryable(err) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil || len(rows[0].Cells) != 2 {
		t.Errorf("Read after reopen: %v, %+v", err, rows)
	}
	if err := admin.Move(ctx, table, key); err != nil {
		t.Fatalf("move: %v", err)
	}
	check("after move")
}

// countingClient records what each scan RPC asked for and got, to check limit pushdown.
type countingClient struct {
	gohbase.Client
	rpc gohbase.RPCClient

	mu       sync.Mutex
	asked    []uint32 // NumberOfRows of each scan request that fetches rows
	received int      // rows in all scan responses
	closes   int      // scan requests that close a scanner
}

func (c *countingClient) SendRPC(call hrpc.Call) (proto.Message, error) {
	msg, err := c.rpc.SendRPC(call)
	_, isScan := call.(interface{ NumberOfRows() uint32 })
	if isScan && call.Region() != nil { // ToProto needs the region the call was sent to
		req := call.ToProto().(*pb.ScanRequest)
		c.mu.Lock()
		defer c.mu.Unlock()
		if req.GetCloseScanner() && req.GetNumberOfRows() == 0 {
			c.closes++
		} else {
			c.asked = append(c.asked, req.GetNumberOfRows())
		}
		if resp, ok := msg.(*pb.ScanResponse); ok {
			c.received += len(resp.GetResults())
		}
	}
	return msg, err
}

// countingBackend is a Backend over a gohbase client whose RPCs cc counts; both close with the test.
func countingBackend(t *testing.T) (*hbase.Backend, *countingClient) {
	t.Helper()
	zk := hbasetest.ZK(t)
	raw := gohbase.NewClient(zk)
	cc := &countingClient{Client: raw, rpc: raw.(gohbase.RPCClient)}
	b, err := hbase.New(cc, gohbase.NewAdminClient(zk), hbase.Options{})
	if err != nil {
		raw.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		raw.Close()
	})
	return b, cc
}

func TestScanLimitPushdown(t *testing.T) {
	b, cc := countingBackend(t)
	table := fillScanTable(t, b)
	ctx := testCtx(t)

	tests := []struct {
		name    string
		r       backends.Range
		reverse bool
		limit   int
	}{
		// The row* keys all live in region [row010, 0x80) and the one below it.
		{"forward", backends.Range{Start: []byte("row010")}, false, 3},
		{"reverse from an existing key", backends.Range{End: []byte("row025")}, true, 3},
		{"reverse, one row", backends.Range{End: []byte("row025")}, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cc.mu.Lock()
			cc.asked, cc.received, cc.closes = nil, 0, 0
			cc.mu.Unlock()
			rows, err := testkit.CollectErr(b.Scan(ctx, table, tc.r, backends.ScanOptions{Reverse: tc.reverse, Limit: tc.limit}))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := keysOf(rows), expectScan(tc.r, tc.reverse, tc.limit); !slices.Equal(got, want) {
				t.Fatalf("keys %v, want %v", got, want)
			}
			cc.mu.Lock()
			defer cc.mu.Unlock()
			extra := 0
			if tc.reverse {
				extra = 1 // the row equal to End, asked for and dropped
			}
			if len(cc.asked) != 1 || int(cc.asked[0]) != tc.limit+extra {
				t.Errorf("scan RPCs asked for %v rows, want one RPC asking for %d", cc.asked, tc.limit+extra)
			}
			if cc.received > tc.limit+extra {
				t.Errorf("server sent %d rows for a limit of %d", cc.received, tc.limit)
			}
			if cc.closes != 1 {
				t.Errorf("%d close requests, want 1 (the region had more rows)", cc.closes)
			}
		})
	}
}
