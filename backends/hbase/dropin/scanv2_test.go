package dropin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/hrpc"
	"go.uber.org/goleak"
)

// readAllV2 reads sc to its end and returns the rows' keys and the responses' sizes; it fails the
// test on a response without results, or on a cell not of its row or not holding its row's key.
func readAllV2(t *testing.T, sc hrpc.ScannerV2, rows uint32) ([][]byte, []int, []bool, error) {
	t.Helper()
	defer sc.Close()
	var keys [][]byte
	var sizes []int
	var more []bool
	for {
		var resp *hrpc.ScanResponseV2
		var err error
		if rows > 0 {
			resp, err = sc.Scan(rows)
		} else {
			resp, err = sc.Next()
		}
		if errors.Is(err, io.EOF) {
			return keys, sizes, more, nil
		}
		if err != nil {
			return keys, sizes, more, err
		}
		if len(resp.Results) == 0 {
			t.Fatal("a response without results")
		}
		sizes, more = append(sizes, len(resp.Results)), append(more, resp.MoreResultsInRegion)
		for _, r := range resp.Results {
			for _, cell := range r.Cells {
				if !bytes.Equal(cell.Row(), r.Cells[0].Row()) || !bytes.Equal(cell.Value(), cell.Row()) {
					t.Fatalf("cell %q/%q in row %q", cell.Row(), cell.Value(), r.Cells[0].Row())
				}
			}
			keys = append(keys, r.Cells[0].Row())
		}
	}
}

// ScanV2 merges the buckets by logical key into responses of NumberOfRows results (Scan(rows): rows),
// the last one saying that no more follow.
func TestScanV2(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	keys := testKeys()
	cases := []struct {
		name        string
		start, stop []byte
		opts        []func(hrpc.Call) error
		rows        uint32 // Scan(rows); 0: Next
		per         int    // results per response but the last
	}{
		{name: "whole table, one response", per: len(keys)},
		{name: "NumberOfRows 7", opts: []func(hrpc.Call) error{hrpc.NumberOfRows(7)}, per: 7},
		{name: "Scan(5) over NumberOfRows 7", opts: []func(hrpc.Call) error{hrpc.NumberOfRows(7)}, rows: 5, per: 5},
		{name: "a range", start: []byte("a"), stop: []byte("b"), opts: []func(hrpc.Call) error{hrpc.NumberOfRows(2)}, per: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := newTestClient(t, "hash:8")
			load(t, c, keys)
			var want [][]byte
			for _, k := range keys {
				if bytes.Compare(k, tc.start) >= 0 && (len(tc.stop) == 0 || bytes.Compare(k, tc.stop) < 0) {
					want = append(want, k)
				}
			}
			sc := c.ScanV2(must[*hrpc.Scan](t)(hrpc.NewScanRange(ctx, []byte(tbl), tc.start, tc.stop, tc.opts...)))
			got, sizes, more, err := readAllV2(t, sc, tc.rows)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("got %d rows %q\nwant %d rows in logical order", len(got), got, len(want))
			}
			for i, n := range sizes {
				last := i == len(sizes)-1
				if (!last && n != tc.per) || (last && n > tc.per) {
					t.Errorf("response %d of %d holds %d results, want %d", i, len(sizes), n, tc.per)
				}
				if more[i] == last {
					t.Errorf("response %d of %d: MoreResultsInRegion %v", i, len(sizes), more[i])
				}
			}
		})
	}
}

// A ScanV2 on a refused request fails its first Next and then ends, as gohbase reports its own errors.
func TestScanV2Refused(t *testing.T) {
	c, f, _ := newTestClient(t, "hash:4")
	sc := c.ScanV2(must[*hrpc.Scan](t)(hrpc.NewScanStr(context.Background(), tbl, hrpc.CloseScanner())))
	if _, err := sc.Next(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("first Next: %v, want ErrUnsupported", err)
	}
	if _, err := sc.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("second Next: %v, want io.EOF", err)
	}
	if n := len(f.calls()); n != 0 {
		t.Fatalf("%d calls sent", n)
	}
}

// GetScanMetrics sums the buckets' scanners' metrics, for Scan and ScanV2, and is nil without
// TrackScanMetrics, as gohbase's.
func TestGetScanMetricsSummed(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	keys := testKeys()
	cases := []struct {
		name  string
		track bool
		v2    bool
	}{
		{name: "Scan", track: true},
		{name: "ScanV2", track: true, v2: true},
		{name: "Scan untracked"},
		{name: "ScanV2 untracked", v2: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _, _ := newTestClient(t, "hash:8")
			load(t, c, keys)
			var opts []func(hrpc.Call) error
			if tc.track {
				opts = append(opts, hrpc.TrackScanMetrics())
			}
			s := must[*hrpc.Scan](t)(hrpc.NewScanStr(ctx, tbl, opts...))
			var metrics map[string]int64
			if tc.v2 {
				sc := c.ScanV2(s)
				if _, _, _, err := readAllV2(t, sc, 0); err != nil {
					t.Fatal(err)
				}
				metrics = sc.GetScanMetrics()
			} else {
				sc := c.Scan(s)
				if _, err := readAll(t, sc); err != nil {
					t.Fatal(err)
				}
				metrics = sc.GetScanMetrics()
			}
			if !tc.track {
				if metrics != nil {
					t.Fatalf("metrics %v without TrackScanMetrics, want nil", metrics)
				}
				return
			}
			if got := metrics["ROWS_SCANNED"]; got != int64(len(keys)) {
				t.Fatalf("ROWS_SCANNED %d, want the sum over the buckets, %d", got, len(keys))
			}
		})
	}
}

// Every bucket scan carries the Scan's ScanStatsID and a ScanStatsHandler (the caller's, called one
// at a time).
func TestScanStatsCarriedToBuckets(t *testing.T) {
	ctx := context.Background()
	c, f, _ := newTestClient(t, "hash:8")
	load(t, c, testKeys())
	s := must[*hrpc.Scan](t)(hrpc.NewScanStr(ctx, tbl, hrpc.WithScanStatsHandler(func(*hrpc.ScanStats) {})))
	if _, err := readAll(t, c.Scan(s)); err != nil {
		t.Fatal(err)
	}
	for _, call := range f.calls() {
		sc, ok := call.(*hrpc.Scan)
		if !ok {
			continue
		}
		if sc.ScanStatsID() != s.ScanStatsID() {
			t.Errorf("bucket scan with ScanStatsID %d, want the Scan's %d", sc.ScanStatsID(), s.ScanStatsID())
		}
		if sc.ScanStatsHandler() == nil {
			t.Error("bucket scan without the handler")
		}
	}
}
