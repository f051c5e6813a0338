package dropin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/salting"
)

const tbl = "t"

func newTestClient(t *testing.T, spec string, opts ...Option) (*Client, *fakeHBase, salting.Salter) {
	t.Helper()
	s := testkit.Salter(t, spec)
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
	hash4 := testkit.Salter(t, "hash:4")
	hash8 := testkit.Salter(t, "hash:8")
	none := testkit.Salter(t, "none")
	boom := errors.New("boom")
	stored := metaFunc(func(table string) (map[string]string, error) {
		switch table {
		case "bad", "hbase:bad":
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
		{"hbase:meta, no option", nil, stored, "hbase:meta", "none", nil},
		{"hbase: namespace, no driver", nil, nil, "hbase:namespace", "none", nil},
		{"hbase: namespace, meta not read", nil, stored, "hbase:bad", "none", nil},
		{"hbase: namespace, salter none", []Option{WithSalter("hbase:meta", none)}, nil, "hbase:meta", "none", nil},
		{"hbase: namespace, other salter", []Option{WithSalter("hbase:meta", hash4)}, nil, "hbase:meta", "", ErrSpecMismatch},
		{"a table named like it, in another namespace", nil, stored, "x:hbase:meta", "", ErrNoSpec},
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
