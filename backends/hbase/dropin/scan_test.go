package dropin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

// testKeys are monotonic counters plus binary keys with 0x00/0xFF and keys that prefix others.
func testKeys() [][]byte {
	var keys [][]byte
	for i := range 200 {
		keys = append(keys, binary.BigEndian.AppendUint64(nil, uint64(1_000_000+i*7)))
	}
	keys = append(keys, []byte{0}, []byte{0, 0}, []byte{0, 0xff}, []byte{0xff}, []byte{0xff, 0xff},
		[]byte{0xff, 0xff, 0}, []byte("a"), []byte("ab"), []byte("abc"), []byte("b"))
	slices.SortFunc(keys, bytes.Compare)
	return keys
}

func load(t *testing.T, c *Client, keys [][]byte) {
	t.Helper()
	for _, k := range keys {
		put := must[*hrpc.Mutate](t)(hrpc.NewPut(context.Background(), []byte(tbl), k,
			map[string]map[string][]byte{"d": {"v": k}}))
		if _, err := c.Put(put); err != nil {
			t.Fatal(err)
		}
	}
}

// readAll reads sc to its end, or its first error, and closes it; it returns the rows' keys, and
// fails the test on a cell that is not of its row or does not hold its row's key.
func readAll(t *testing.T, sc hrpc.Scanner) ([][]byte, error) {
	t.Helper()
	results, err := testkit.CollectErr(testkit.Seq(sc.Next, sc.Close))
	var out [][]byte
	for _, r := range results {
		for _, cell := range r.Cells {
			if !bytes.Equal(cell.Row, r.Cells[0].Row) || !bytes.Equal(cell.Value, cell.Row) {
				t.Fatalf("cell %q/%q in row %q", cell.Row, cell.Value, r.Cells[0].Row)
			}
		}
		out = append(out, r.Cells[0].Row)
	}
	return out, err
}

func TestScanMergesBucketsInLogicalOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	keys := testKeys()
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	ranges := []struct {
		name        string
		start, stop []byte
	}{
		{"full", nil, nil},
		{"from", u64(1_000_500), nil},
		{"to", nil, u64(1_000_500)},
		{"inside", u64(1_000_100), u64(1_000_900)},
		{"one key", u64(1_000_007), u64(1_000_008)},
		{"empty", u64(1_000_008), u64(1_000_013)},
		{"inverted", u64(1_000_900), u64(1_000_100)},
		{"prefixes", []byte("a"), []byte("abc")},
		{"binary low", []byte{0}, []byte{0, 0xff, 0}},
		{"binary high", []byte{0xff}, nil},
	}
	for _, spec := range []string{"hash:16", "hash:300", "md5hex:1", "none"} {
		c, f, _ := newTestClient(t, spec, WithScanConcurrency(4), WithPrefetch(3))
		load(t, c, keys)
		for _, r := range ranges {
			t.Run(spec+"/"+r.name, func(t *testing.T) {
				var want [][]byte
				for _, k := range keys {
					if (backends.Range{Start: r.start, End: r.stop}).Contains(k) &&
						(len(r.stop) == 0 || bytes.Compare(r.start, r.stop) < 0) {
						want = append(want, k)
					}
				}
				got, err := readAll(t, c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanRange(ctx, []byte(tbl), r.start, r.stop,
					hrpc.Families(map[string][]string{"d": nil}), hrpc.NumberOfRows(5)))))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(got, want, bytes.Equal) {
					t.Fatalf("got %d rows %x\nwant %d rows %x", len(got), got, len(want), want)
				}
			})
		}
		f.mu.Lock()
		if f.opened != f.closed {
			t.Errorf("%s: %d bucket scanners opened, %d closed", spec, f.opened, f.closed)
		}
		f.mu.Unlock()
	}
}

func TestScanCloseAndErrorsStopEveryBucket(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	keys := testKeys()
	c, f, s := newTestClient(t, "hash:16", WithPrefetch(2))
	load(t, c, keys)

	sc := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanStr(ctx, tbl)))
	for i := range 5 {
		r, err := sc.Next()
		if err != nil || !bytes.Equal(r.Cells[0].Row, keys[i]) {
			t.Fatalf("row %d: %v, %v", i, r, err)
		}
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("Next after Close: %v", err)
	}
	f.mu.Lock()
	if f.opened != 16 || f.closed != 16 {
		t.Errorf("after Close: %d bucket scanners opened, %d closed", f.opened, f.closed)
	}
	f.mu.Unlock()

	// One failing bucket fails the scan, after a prefix of the rows, and closes the others.
	f.failKey = must[[]byte](t)(s.AppendPhysical(nil, keys[100]))
	got, err := readAll(t, c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanStr(ctx, tbl))))
	if err != errFakeScan {
		t.Fatalf("err = %v, want the bucket's error itself, as gohbase's scanner returns it", err)
	}
	if !slices.EqualFunc(got, keys[:len(got)], bytes.Equal) || len(got) > 100 {
		t.Fatalf("before the error: %d rows, not a prefix of the scan", len(got))
	}
	f.failKey = nil

	// A cancelled context ends the scan with its error.
	cctx, cancel := context.WithCancel(ctx)
	sc = c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanStr(cctx, tbl)))
	if _, err := sc.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	for {
		if _, err = sc.Next(); err != nil {
			break
		}
	}
	if err != context.Canceled {
		t.Fatalf("after cancel: %v, want context.Canceled itself (gohbase callers compare with ==)", err)
	}
	sc.Close()
	f.mu.Lock()
	if f.opened != f.closed {
		t.Errorf("%d bucket scanners opened, %d closed", f.opened, f.closed)
	}
	f.mu.Unlock()
}

// A scan keeps the caller's options in every bucket's request.
func TestScanCarriesOptionsToEveryBucket(t *testing.T) {
	ctx := context.Background()
	c, f, s := newTestClient(t, "hash:4")
	orig := must[*hrpc.Scan](t)(hrpc.NewScanRangeStr(ctx, tbl, "a", "m",
		hrpc.Families(map[string][]string{"d": {"v"}}), hrpc.TimeRangeUint64(1, 9), hrpc.MaxVersions(2),
		hrpc.NumberOfRows(7), hrpc.MaxResultSize(1<<10), hrpc.AllowPartialResults(),
		hrpc.Filters(filter.NewValueFilter(filter.NewCompareFilter(filter.NotEqual,
			filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("x"))))))))
	if _, err := readAll(t, c.Scan(orig)); err != nil {
		t.Fatal(err)
	}
	ranges := must[[]salting.BucketRange](t)(s.BucketRanges([]byte("a"), []byte("m")))
	calls := f.calls()
	if len(calls) != len(ranges) {
		t.Fatalf("%d bucket scans, want %d", len(calls), len(ranges))
	}
	for _, call := range calls {
		sc := call.(*hrpc.Scan)
		want := normalize(requestProto(orig)).(*pb.ScanRequest)
		want.Scan.StartRow, want.Scan.StopRow = sc.StartRow(), sc.StopRow()
		if got := normalize(requestProto(sc)); !proto.Equal(got, want) {
			t.Fatalf("bucket scan\n%v\nwant\n%v", got, want)
		}
		if !sc.AllowPartialResults() {
			t.Fatal("AllowPartialResults dropped")
		}
		i := slices.IndexFunc(ranges, func(r salting.BucketRange) bool { return bytes.Equal(r.Start, sc.StartRow()) })
		if i < 0 || !bytes.Equal(ranges[i].End, sc.StopRow()) {
			t.Fatalf("bucket scan of [%q, %q) is not a bucket range", sc.StartRow(), sc.StopRow())
		}
	}
}
