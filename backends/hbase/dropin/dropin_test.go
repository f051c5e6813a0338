package dropin

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/salting"
)

const tbl = "t"

func newTestClient(t *testing.T, spec string, opts ...Option) (*Client, *fakeHBase, salting.Salter) {
	t.Helper()
	s, err := salting.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	f := newFake()
	c := New(f, append([]Option{WithSalter(tbl, s)}, opts...)...)
	t.Cleanup(c.Close)
	return c, f, s
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func TestNewRefusesNilClient(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	New(nil)
}

// metaFunc is a stored-spec source for tests: the driver's TableMeta, without a cluster.
type metaFunc func(table string) (map[string]string, error)

func (f metaFunc) TableMeta(_ context.Context, table string) (map[string]string, error) {
	return f(table)
}

// The request that reaches gohbase is the caller's, on the salted key, with every option kept.
func TestRewriteKeepsEverythingButTheKey(t *testing.T) {
	ctx := context.Background()
	c, f, s := newTestClient(t, "hash:16")
	key := []byte("row-1")
	phys := must[[]byte](t)(s.AppendPhysical(nil, key))
	vals := map[string]map[string][]byte{"d": {"a": []byte("1"), "b": []byte("2")}, "e": {"c": []byte("3")}}
	dels := map[string]map[string][]byte{"d": {"a": nil}, "e": nil}

	get := func(opts ...func(hrpc.Call) error) hrpc.Call {
		return must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "row-1", opts...))
	}
	existsOnly := must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "row-1"))
	existsOnly.ExistsOnly()
	cases := []struct {
		name string
		req  hrpc.Call
		send func(hrpc.Call) error
	}{
		{"Get with options", get(hrpc.Families(map[string][]string{"d": {"a", "b"}, "e": nil}),
			hrpc.TimeRangeUint64(5, 50), hrpc.MaxVersions(3), hrpc.MaxResultsPerColumnFamily(9),
			hrpc.ResultOffset(1), hrpc.CacheBlocks(false), hrpc.Consistency(hrpc.TimelineConsistency),
			hrpc.Filters(filter.NewList(filter.MustPassAll, filter.NewColumnPrefixFilter([]byte("a")),
				filter.NewPageFilter(3)))),
			func(r hrpc.Call) error { _, err := c.Get(r.(*hrpc.Get)); return err }},
		{"Get ExistsOnly", existsOnly, func(r hrpc.Call) error { _, err := c.Get(r.(*hrpc.Get)); return err }},
		{"Put", must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "row-1", vals, hrpc.TimestampUint64(42),
			hrpc.TTL(time.Hour), hrpc.Durability(hrpc.SkipWal))),
			func(r hrpc.Call) error { _, err := c.Put(r.(*hrpc.Mutate)); return err }},
		{"Delete one version", must[*hrpc.Mutate](t)(hrpc.NewDelStr(ctx, tbl, "row-1", dels,
			hrpc.TimestampUint64(42), hrpc.DeleteOneVersion())),
			func(r hrpc.Call) error { _, err := c.Delete(r.(*hrpc.Mutate)); return err }},
		{"Append", must[*hrpc.Mutate](t)(hrpc.NewAppStr(ctx, tbl, "row-1", vals)),
			func(r hrpc.Call) error { _, err := c.Append(r.(*hrpc.Mutate)); return err }},
		{"Increment", must[*hrpc.Mutate](t)(hrpc.NewIncStrSingle(ctx, tbl, "row-1", "d", "n", 5, hrpc.Durability(hrpc.AsyncWal))),
			func(r hrpc.Call) error { _, err := c.Increment(r.(*hrpc.Mutate)); return err }},
		{"CheckAndPut", must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "row-1", vals)),
			func(r hrpc.Call) error { _, err := c.CheckAndPut(r.(*hrpc.Mutate), "d", "a", nil); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := len(f.calls())
			if err := tc.send(tc.req); err != nil {
				t.Fatal(err)
			}
			calls := f.calls()
			if len(calls) != n+1 {
				t.Fatalf("%d requests reached gohbase, want 1", len(calls)-n)
			}
			sent := calls[n]
			if !bytes.Equal(sent.Key(), phys) || string(sent.Table()) != tbl {
				t.Fatalf("sent %s/%q, want %s/%q", sent.Table(), sent.Key(), tbl, phys)
			}
			if sent.Context() != tc.req.Context() {
				t.Error("the request's context was not carried over")
			}
			want := normalize(requestProto(tc.req))
			switch m := want.(type) {
			case *pb.GetRequest:
				m.Get.Row = phys
			case *pb.MutateRequest:
				m.Mutation.Row = phys
			}
			if got := normalize(requestProto(sent)); !proto.Equal(got, want) {
				t.Fatalf("sent\n%v\nwant\n%v", got, want)
			}
			if tc.req.Region() != nil {
				t.Error("the caller's request was left with a region")
			}
		})
	}
}

func TestProtoDiffNamesTheField(t *testing.T) {
	ctx := context.Background()
	a := must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k", hrpc.MaxVersions(2)))
	b := must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k"))
	b.ExistsOnly()
	d := protoDiff(normalize(requestProto(a)), normalize(requestProto(b)))
	if !slices.Equal(d, []string{"get.max_versions", "get.existence_only"}) {
		t.Fatalf("diff = %v", d)
	}
	if d := protoDiff(normalize(requestProto(a)), normalize(requestProto(a))); len(d) != 0 {
		t.Fatalf("a request differs from itself: %v", d)
	}
}

// Bad requests fail with an error naming the call, and nothing reaches gohbase.
func TestRefusedBeforeSending(t *testing.T) {
	ctx := context.Background()
	c, f, _ := newTestClient(t, "hash:16")
	long := strings.Repeat("x", hbase.MaxKeyLen) // one byte too long once salted
	vals := map[string]map[string][]byte{"d": {"a": []byte("1")}}
	scan := func(start, stop string, opts ...func(hrpc.Call) error) error {
		sc := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanRangeStr(ctx, tbl, start, stop, opts...)))
		defer sc.Close()
		_, err := sc.Next()
		return err
	}
	cases := []struct {
		name   string
		err    error
		inText []string
		call   func() error
	}{
		{"Get empty key", backends.ErrInvalidKey, []string{"Get", "empty"}, func() error {
			_, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "")))
			return err
		}},
		{"Put too long", backends.ErrInvalidKey, []string{"Put", "limit"}, func() error {
			_, err := c.Put(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, long, vals)))
			return err
		}},
		{"Put longest key", nil, nil, func() error {
			_, err := c.Put(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, long[1:], vals)))
			return err
		}},
		{"Increment empty key", backends.ErrInvalidKey, []string{"Increment"}, func() error {
			_, err := c.Increment(must[*hrpc.Mutate](t)(hrpc.NewIncStrSingle(ctx, tbl, "", "d", "n", 1)))
			return err
		}},
		{"CheckAndPut empty key", backends.ErrInvalidKey, []string{"CheckAndPut"}, func() error {
			_, err := c.CheckAndPut(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "", vals)), "d", "a", nil)
			return err
		}},
		{"Get with PrefixFilter in a MustPassOne list", ErrUnsupported, []string{"Get", "PrefixFilter"}, func() error {
			_, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k", hrpc.Filters(filter.NewList(filter.MustPassOne,
				filter.NewPrefixFilter([]byte("k")), filter.NewKeyOnlyFilter(false))))))
			return err
		}},
		{"Scan with PrefixFilter under a SkipFilter", ErrUnsupported, []string{"Scan", "PrefixFilter"}, func() error {
			return scan("a", "b", hrpc.Filters(filter.NewSkipFilter(filter.NewPrefixFilter([]byte("a")))))
		}},
		{"Get with RowFilter in a list", ErrUnsupported, []string{"Get", "RowFilter"}, func() error {
			rf := filter.NewRowFilter(filter.NewCompareFilter(filter.Equal, filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("k")))))
			_, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k", hrpc.Filters(
				filter.NewList(filter.MustPassOne, filter.NewKeyOnlyFilter(false), filter.NewSkipFilter(rf))))))
			return err
		}},
		{"Scan with InclusiveStopFilter", ErrUnsupported, []string{"Scan", "InclusiveStopFilter"}, func() error {
			return scan("a", "b", hrpc.Filters(filter.NewInclusiveStopFilter([]byte("a"))))
		}},
		{"Scan with PageFilter", ErrUnsupported, []string{"Scan", "PageFilter"}, func() error {
			return scan("a", "b", hrpc.Filters(filter.NewPageFilter(10)))
		}},
		{"Scan with WhileMatchFilter", ErrUnsupported, []string{"Scan", "WhileMatchFilter"}, func() error {
			return scan("a", "b", hrpc.Filters(filter.NewWhileMatchFilter(filter.NewKeyOnlyFilter(false))))
		}},
		{"Scan with ScannerID", ErrUnsupported, []string{"Scan", "ScannerID"}, func() error {
			return scan("a", "b", hrpc.ScannerID(3))
		}},
		{"Scan with CloseScanner", ErrUnsupported, []string{"Scan", "CloseScanner"}, func() error {
			return scan("a", "b", hrpc.CloseScanner())
		}},
		{"reversed Scan without backend", ErrUnsupported, []string{"Scan (Reversed)", "driver"}, func() error {
			return scan("b", "a", hrpc.Reversed())
		}},
		{"Scan bound too long", backends.ErrInvalidKey, []string{"Scan"}, func() error {
			return scan(long, "")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := len(f.calls())
			err := tc.call()
			if tc.err == nil {
				if err != nil && !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			for _, s := range tc.inText {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
			if got := len(f.calls()) - n; got != 0 {
				t.Errorf("%d requests reached gohbase", got)
			}
		})
	}
}

// TestSalterResolution: WithSalter, the stored spec and WithUnsalted combine as in the Tablestore
// drop-in, and a table whose salter cannot be resolved sends nothing.
func TestSalterResolution(t *testing.T) {
	ctx := context.Background()
	hash4 := must[salting.Salter](t)(salting.ParseSpec("hash:4"))
	hash8 := must[salting.Salter](t)(salting.ParseSpec("hash:8"))
	boom := errors.New("boom")
	stored := metaFunc(func(table string) (map[string]string, error) {
		switch table {
		case "bad":
			return nil, boom
		case "stored8":
			return map[string]string{salting.MetaKey: "hash:8"}, nil
		}
		return map[string]string{}, nil
	})
	cases := []struct {
		name     string
		opts     []Option
		meta     tableMeta
		table    string
		wantSpec string
		wantErr  error
	}{
		{"given, no driver", []Option{WithSalter("t", hash4)}, nil, "t", "hash:4", nil},
		{"nothing, no driver", nil, nil, "t", "", ErrNoSpec},
		{"unsalted, no driver", []Option{WithUnsalted()}, nil, "t", "none", nil},
		{"stored", nil, stored, "stored8", "hash:8", nil},
		{"given equals stored", []Option{WithSalter("stored8", hash8)}, stored, "stored8", "hash:8", nil},
		{"given differs from stored", []Option{WithSalter("stored8", hash4)}, stored, "stored8", "", ErrSpecMismatch},
		{"given, none stored", []Option{WithSalter("t", hash4)}, stored, "t", "hash:4", nil},
		{"none stored, unsalted", []Option{WithUnsalted()}, stored, "t", "none", nil},
		{"none stored", nil, stored, "t", "", ErrNoSpec},
		{"meta fails", []Option{WithUnsalted()}, stored, "bad", "", boom},
		{"empty table name", []Option{WithUnsalted()}, nil, "", "", backends.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			c := New(f, tc.opts...)
			c.meta = tc.meta
			s, err := c.Salter(ctx, tc.table)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Salter = %v, %v; want %v", s, err, tc.wantErr)
				}
				if _, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tc.table, "k"))); !errors.Is(err, tc.wantErr) {
					t.Errorf("Get: %v, want %v", err, tc.wantErr)
				}
				if len(f.calls()) != 0 {
					t.Error("a request reached gohbase")
				}
				return
			}
			if err != nil || s.Spec() != tc.wantSpec {
				t.Fatalf("Salter = %v, %v; want %s", s, err, tc.wantSpec)
			}
		})
	}
}

func TestResultsCarryLogicalKeys(t *testing.T) {
	ctx := context.Background()
	c, f, s := newTestClient(t, "hash:8")
	vals := map[string]map[string][]byte{"d": {"a": []byte("1")}}
	if _, err := c.Put(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "k1", vals))); err != nil {
		t.Fatal(err)
	}
	phys := must[[]byte](t)(s.AppendPhysical(nil, []byte("k1")))
	if keys := f.keys(tbl); len(keys) != 1 || !bytes.Equal(keys[0], phys) {
		t.Fatalf("stored keys %q, want [%q]", keys, phys)
	}
	r, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k1")))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cells) != 1 || string(r.Cells[0].Row) != "k1" || string(r.Cells[0].Value) != "1" {
		t.Fatalf("Get = %v", r.Cells)
	}
	r, err = c.Append(must[*hrpc.Mutate](t)(hrpc.NewAppStr(ctx, tbl, "k1", vals)))
	if err != nil || len(r.Cells) != 1 || string(r.Cells[0].Row) != "k1" {
		t.Fatalf("Append = %v, %v", r, err)
	}
	if n, err := c.Increment(must[*hrpc.Mutate](t)(hrpc.NewIncStrSingle(ctx, tbl, "k1", "d", "n", 1))); err != nil || n != 7 {
		t.Fatalf("Increment = %d, %v", n, err)
	}
	if ok, err := c.CheckAndPut(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "k1", vals)), "d", "a", []byte("1")); err != nil || !ok {
		t.Fatalf("CheckAndPut = %v, %v", ok, err)
	}
	if _, err := c.Delete(must[*hrpc.Mutate](t)(hrpc.NewDelStr(ctx, tbl, "k1", nil))); err != nil {
		t.Fatal(err)
	}
	if keys := f.keys(tbl); len(keys) != 0 {
		t.Fatalf("after Delete: %q", keys)
	}

	// A server answering with another row is an error, not a row under the wrong key.
	if _, err := c.Put(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "k2", vals))); err != nil {
		t.Fatal(err)
	}
	f.wrongRow = true
	if _, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k2"))); err == nil || !strings.Contains(err.Error(), "Get") {
		t.Fatalf("Get of a wrong row: err = %v", err)
	}
}

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

func readAll(t *testing.T, sc hrpc.Scanner) ([][]byte, error) {
	t.Helper()
	defer sc.Close()
	var out [][]byte
	for {
		r, err := sc.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		for _, cell := range r.Cells {
			if !bytes.Equal(cell.Row, r.Cells[0].Row) || !bytes.Equal(cell.Value, cell.Row) {
				t.Fatalf("cell %q/%q in row %q", cell.Row, cell.Value, r.Cells[0].Row)
			}
		}
		out = append(out, r.Cells[0].Row)
	}
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
		c, f, _ := newTestClient(t, spec, WithConcurrency(4), WithPrefetch(3))
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
