package dropin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

func pbOf(t *testing.T, f filter.Filter) *pb.Filter {
	t.Helper()
	if f == nil {
		return nil
	}
	p, err := f.ConstructPBFilter()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sentFilter is the filter of a request as it reached gohbase.
func sentFilter(call hrpc.Call) *pb.Filter {
	switch m := requestProto(call).(type) {
	case *pb.GetRequest:
		return m.Get.GetFilter()
	case *pb.ScanRequest:
		return m.Scan.GetFilter()
	}
	return nil
}

// A PrefixFilter (alone, or in a MUST_PASS_ALL list) on a salted table becomes a key range per bucket
// on a Scan, and on a Get is dropped or turned into a filter that passes no row (a PrefixFilter longer
// than the physical key); what remains of the filter is sent.
func TestPrefixFilterRewritten(t *testing.T) {
	ctx := context.Background()
	keyOnly := filter.NewKeyOnlyFilter(false)
	scans := []struct {
		name                 string
		start, stop          string
		f                    filter.Filter
		wantStart, wantStop  string
		wantFilter           filter.Filter
		wantNothingRequested bool
	}{
		{name: "prefix alone", f: filter.NewPrefixFilter([]byte("g")), wantStart: "g", wantStop: "h"},
		{name: "prefix in MustPassAll", f: filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte("g")), keyOnly),
			wantStart: "g", wantStop: "h", wantFilter: filter.NewList(filter.MustPassAll, keyOnly)},
		{name: "range narrower than the prefix", start: "gb", stop: "gd", f: filter.NewPrefixFilter([]byte("g")), wantStart: "gb", wantStop: "gd"},
		{name: "range across the prefix", start: "a", stop: "z", f: filter.NewPrefixFilter([]byte("g")), wantStart: "g", wantStop: "h"},
		{name: "two prefixes", f: filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte("g")),
			filter.NewPrefixFilter([]byte("gx"))), wantStart: "gx", wantStop: "gy"},
		{name: "prefix of 0xff", f: filter.NewPrefixFilter([]byte{0xff}), wantStart: "\xff"},
		{name: "absent prefix (HBase: no row)", f: filter.NewPrefixFilter(nil), wantNothingRequested: true},
		{name: "empty prefix (HBase: every row)", f: filter.NewPrefixFilter([]byte{})},
		{name: "range outside the prefix", start: "a", stop: "c", f: filter.NewPrefixFilter([]byte("g")), wantNothingRequested: true},
		{name: "disjoint prefixes", f: filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte("g")),
			filter.NewPrefixFilter([]byte("h"))), wantNothingRequested: true},
	}
	for _, tc := range scans {
		t.Run("Scan "+tc.name, func(t *testing.T) {
			c, f, s := newTestClient(t, "hash:16")
			sc := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanRangeStr(ctx, tbl, tc.start, tc.stop, hrpc.Filters(tc.f))))
			if _, err := readAll(t, sc); err != nil {
				t.Fatal(err)
			}
			calls := f.calls()
			if tc.wantNothingRequested {
				if len(calls) != 0 {
					t.Fatalf("%d requests sent for a range no key can be in", len(calls))
				}
				return
			}
			want := must[[]salting.BucketRange](t)(s.BucketRanges([]byte(tc.wantStart), []byte(tc.wantStop)))
			if len(calls) != len(want) {
				t.Fatalf("%d bucket scans, want %d", len(calls), len(want))
			}
			for _, call := range calls {
				bs := call.(*hrpc.Scan)
				if !slices.ContainsFunc(want, func(r salting.BucketRange) bool {
					return bytes.Equal(r.Start, bs.StartRow()) && bytes.Equal(r.End, bs.StopRow())
				}) {
					t.Fatalf("bucket scan [%q, %q) is not a bucket range of [%q, %q)", bs.StartRow(), bs.StopRow(), tc.wantStart, tc.wantStop)
				}
				if got, wantF := sentFilter(bs), pbOf(t, tc.wantFilter); !proto.Equal(got, wantF) {
					t.Fatalf("sent filter %v, want %v", got, wantF)
				}
			}
		})
	}

	noRow := func(key string) filter.Filter {
		s := testkit.Salter(t, "hash:16")
		return filter.NewPrefixFilter(append(must[[]byte](t)(s.AppendPhysical(nil, []byte(key))), 0))
	}
	gets := []struct {
		name, key  string
		f          filter.Filter
		wantFilter filter.Filter
	}{
		{"row has the prefix", "gA", filter.NewPrefixFilter([]byte("g")), nil},
		{"empty prefix", "gA", filter.NewPrefixFilter([]byte{}), nil},
		{"absent prefix", "gA", filter.NewPrefixFilter(nil), noRow("gA")},
		{"row lacks the prefix", "hA", filter.NewPrefixFilter([]byte("g")), noRow("hA")},
		{"row has it, in MustPassAll", "gA", filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte("g")), keyOnly),
			filter.NewList(filter.MustPassAll, keyOnly)},
		{"row lacks one of two", "gA", filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte("g")),
			filter.NewPrefixFilter([]byte("gB")), keyOnly), noRow("gA")},
	}
	for _, tc := range gets {
		t.Run("Get "+tc.name, func(t *testing.T) {
			c, f, s := newTestClient(t, "hash:16")
			if _, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, tc.key, hrpc.Filters(tc.f)))); err != nil {
				t.Fatal(err)
			}
			calls := f.calls()
			if len(calls) != 1 {
				t.Fatalf("%d requests, want 1", len(calls))
			}
			if phys := must[[]byte](t)(s.AppendPhysical(nil, []byte(tc.key))); !bytes.Equal(calls[0].Key(), phys) {
				t.Fatalf("sent key %q, want %q", calls[0].Key(), phys)
			}
			if got, want := sentFilter(calls[0]), pbOf(t, tc.wantFilter); !proto.Equal(got, want) {
				t.Fatalf("sent filter %v, want %v", got, want)
			}
		})
	}
}

// With TrackScanMetrics, a Scan's PrefixFilters are not turned into a range: each bucket reads the
// Scan's own range with the filter's prefixes behind its bucket prefix, so that the server reads and
// filters (and its scan metrics count) what it does on an unsalted table. An absent prefix stays absent.
func TestPrefixFilterSaltedWithScanMetrics(t *testing.T) {
	ctx := context.Background()
	keyOnly := filter.NewKeyOnlyFilter(false)
	cases := []struct {
		name        string
		start, stop string
		f           func(pfx string) filter.Filter // the filter sent to a bucket of prefix pfx ("": the Scan's)
	}{
		{name: "prefix alone", f: func(pfx string) filter.Filter { return filter.NewPrefixFilter([]byte(pfx + "g")) }},
		{name: "range across the prefix", start: "a", stop: "z",
			f: func(pfx string) filter.Filter { return filter.NewPrefixFilter([]byte(pfx + "g")) }},
		{name: "range outside the prefix", start: "a", stop: "c",
			f: func(pfx string) filter.Filter { return filter.NewPrefixFilter([]byte(pfx + "g")) }},
		{name: "prefix in MustPassAll", f: func(pfx string) filter.Filter {
			return filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte(pfx+"g")), keyOnly, filter.NewPrefixFilter([]byte(pfx+"gx")))
		}},
		{name: "empty prefix", f: func(pfx string) filter.Filter { return filter.NewPrefixFilter([]byte(pfx)) }},
		{name: "absent prefix", f: func(string) filter.Filter { return filter.NewPrefixFilter(nil) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, f, s := newTestClient(t, "hash:16")
			sc := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanRangeStr(ctx, tbl, tc.start, tc.stop, hrpc.Filters(tc.f("")), hrpc.TrackScanMetrics())))
			if _, err := readAll(t, sc); err != nil {
				t.Fatal(err)
			}
			want := must[[]salting.BucketRange](t)(s.BucketRanges([]byte(tc.start), []byte(tc.stop)))
			calls := f.calls()
			if len(calls) != len(want) {
				t.Fatalf("%d bucket scans, want %d", len(calls), len(want))
			}
			for _, call := range calls {
				bs := call.(*hrpc.Scan)
				i := slices.IndexFunc(want, func(r salting.BucketRange) bool {
					return bytes.Equal(r.Start, bs.StartRow()) && bytes.Equal(r.End, bs.StopRow())
				})
				if i < 0 {
					t.Fatalf("bucket scan [%q, %q) is not a bucket range of [%q, %q)", bs.StartRow(), bs.StopRow(), tc.start, tc.stop)
				}
				pfx, _ := salting.BucketPrefix(s, want[i].Bucket)
				if got, wantF := sentFilter(bs), pbOf(t, tc.f(string(pfx))); !proto.Equal(got, wantF) {
					t.Fatalf("bucket %d: sent filter %v, want %v", want[i].Bucket, got, wantF)
				}
				if !bs.TrackScanMetrics() {
					t.Fatalf("bucket %d: scan metrics not tracked", want[i].Bucket)
				}
			}
		})
	}
}

// On an unsalted table (stored spec "none", or any table of HBase's own hbase: namespace, which
// needs no option and whose meta is never read) every filter goes to the server as the caller built
// it, row-key filters and PageFilter included, and the scan keeps its own range.
func TestUnsaltedTablePassesFiltersThrough(t *testing.T) {
	ctx := context.Background()
	rowF := filter.NewRowFilter(filter.NewCompareFilter(filter.Equal, filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("k")))))
	clients := []struct {
		name  string
		table string
		make  func(t *testing.T) (*Client, *fakeHBase)
	}{
		{"stored none", tbl, func(t *testing.T) (*Client, *fakeHBase) {
			c, fake, _ := newTestClient(t, "none")
			return c, fake
		}},
		{"hbase: namespace", "hbase:meta", func(t *testing.T) (*Client, *fakeHBase) {
			fake := newFake()
			c := New(fake)
			c.meta = metaFunc(func(table string) (map[string]string, error) {
				t.Errorf("the meta of %q was read", table)
				return nil, nil
			})
			t.Cleanup(c.Close)
			return c, fake
		}},
	}
	for _, cl := range clients {
		for _, f := range []filter.Filter{
			filter.NewPrefixFilter([]byte("k")), filter.NewPageFilter(3), rowF, filter.NewInclusiveStopFilter([]byte("m")),
			filter.NewWhileMatchFilter(rowF), filter.NewList(filter.MustPassOne, filter.NewPrefixFilter([]byte("a")), rowF),
		} {
			t.Run(fmt.Sprintf("%s/%T", cl.name, f), func(t *testing.T) {
				c, fake := cl.make(t)
				if _, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, cl.table, "k1", hrpc.Filters(f)))); err != nil {
					t.Fatal(err)
				}
				if _, err := readAll(t, c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanRangeStr(ctx, cl.table, "a", "q", hrpc.Filters(f))))); err != nil {
					t.Fatal(err)
				}
				calls := fake.calls()
				if len(calls) != 2 {
					t.Fatalf("%d requests, want a Get and one Scan", len(calls))
				}
				if string(calls[0].Key()) != "k1" {
					t.Errorf("Get sent key %q", calls[0].Key())
				}
				if sc := calls[1].(*hrpc.Scan); string(sc.StartRow()) != "a" || string(sc.StopRow()) != "q" {
					t.Errorf("Scan sent [%q, %q), want [a, q)", sc.StartRow(), sc.StopRow())
				}
				for _, call := range calls {
					if got, want := sentFilter(call), pbOf(t, f); !proto.Equal(got, want) {
						t.Errorf("%T sent filter %v, want %v", call, got, want)
					}
				}
			})
		}
	}
}

// Where gohbase would have returned an error, the drop-in returns that very error (callers compare
// with ==), and sends nothing.
func TestErrorsAreGohbases(t *testing.T) {
	vals := map[string]map[string][]byte{"d": {"a": []byte("1")}}
	calls := func(c *Client, ctx context.Context) map[string]func() error {
		return map[string]func() error{
			"Get": func() error { _, err := c.Get(must[*hrpc.Get](t)(hrpc.NewGetStr(ctx, tbl, "k"))); return err },
			"Put": func() error { _, err := c.Put(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "k", vals))); return err },
			"Increment": func() error {
				_, err := c.Increment(must[*hrpc.Mutate](t)(hrpc.NewIncStrSingle(ctx, tbl, "k", "d", "n", 1)))
				return err
			},
			"CheckAndPut": func() error {
				_, err := c.CheckAndPut(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, "k", vals)), "d", "a", nil)
				return err
			},
			"Scan": func() error {
				_, err := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanStr(ctx, tbl))).Next()
				return err
			},
		}
	}
	expired, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	cancelled, cancel2 := context.WithCancel(context.Background())
	cancel2()
	cases := []struct {
		name   string
		ctx    context.Context
		meta   tableMeta // nil: the table is given hash:4
		closed bool
		want   error
	}{
		{"deadline passed", expired, nil, false, context.DeadlineExceeded},
		{"cancelled", cancelled, nil, false, context.Canceled},
		{"client closed", context.Background(), nil, true, gohbase.ErrClientClosed},
		{"table missing", context.Background(), metaFunc(func(string) (map[string]string, error) {
			return nil, fmt.Errorf("reading the spec: %w", backends.ErrTableNotFound)
		}), false, gohbase.TableNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			var opts []Option
			if tc.meta == nil {
				opts = append(opts, WithSalter(tbl, testkit.Salter(t, "hash:4")))
			}
			c := New(fake, opts...)
			c.meta = tc.meta
			if tc.closed {
				c.Close()
			}
			for name, call := range calls(c, tc.ctx) {
				if err := call(); err != tc.want {
					t.Errorf("%s: %v, want %v itself", name, err, tc.want)
				}
			}
			if n := len(fake.calls()); n != 0 {
				t.Errorf("%d requests reached gohbase", n)
			}
			c.Close()
		})
	}
}

// A scan whose context ends between two Next calls returns ctx.Err() itself from the next one, rows
// buffered or not, as gohbase's scanner does, and io.EOF after that.
func TestScanCancelledBetweenNexts(t *testing.T) {
	c, f, _ := newTestClient(t, "hash:4", WithPrefetch(64))
	ctx := context.Background()
	for i := range 40 {
		if _, err := c.Put(must[*hrpc.Mutate](t)(hrpc.NewPutStr(ctx, tbl, fmt.Sprintf("k%02d", i),
			map[string]map[string][]byte{"d": {"a": []byte("1")}}))); err != nil {
			t.Fatal(err)
		}
	}
	sctx, cancel := context.WithCancel(ctx)
	sc := c.Scan(must[*hrpc.Scan](t)(hrpc.NewScanStr(sctx, tbl)))
	if _, err := sc.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := sc.Next(); err != context.Canceled {
		t.Fatalf("Next after cancel: %v, want context.Canceled itself", err)
	}
	if _, err := sc.Next(); err != io.EOF {
		t.Fatalf("Next after the error: %v, want io.EOF", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opened != f.closed {
		t.Errorf("%d bucket scanners opened, %d closed", f.opened, f.closed)
	}
}
