package dropin

import (
	"bytes"
	"errors"
	"testing"

	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"
	"google.golang.org/protobuf/proto"
)

// CheckAndMutate is rebuilt on the salted key, its condition's row included; a condition filter is
// carried as a Get's would be, and refused where it compares row keys.
func TestCheckAndMutate(t *testing.T) {
	value := filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("x")))
	colValue := filter.NewSingleColumnValueFilter([]byte("d"), []byte("v"), filter.Equal, value, false, false)
	cases := []struct {
		name       string
		key        string
		cam        func(m *hrpc.Mutate) (*hrpc.CheckAndMutate, error)
		wantFilter filter.Filter // the condition's filter as sent; nil: a cell comparison
		refused    bool
	}{
		{name: "cell comparison", key: "k1", cam: func(m *hrpc.Mutate) (*hrpc.CheckAndMutate, error) {
			return hrpc.NewCheckAndMutate(m, "d", "v", pb.CompareType_GREATER, value)
		}},
		{name: "column value filter", key: "k1", wantFilter: colValue, cam: func(m *hrpc.Mutate) (*hrpc.CheckAndMutate, error) {
			return hrpc.NewCheckAndMutateWithFilter(m, colValue)
		}},
		{name: "prefix the row has", key: "k1", wantFilter: filter.NewPrefixFilter([]byte{}),
			cam: func(m *hrpc.Mutate) (*hrpc.CheckAndMutate, error) {
				return hrpc.NewCheckAndMutateWithFilter(m, filter.NewPrefixFilter([]byte("k")))
			}},
		{name: "prefix the row lacks", key: "k1", // the filter sent is noRowFilter(phys)
			cam: func(m *hrpc.Mutate) (*hrpc.CheckAndMutate, error) {
				return hrpc.NewCheckAndMutateWithFilter(m, filter.NewPrefixFilter([]byte("z")))
			}},
		{name: "prefix and column value", key: "k1", wantFilter: filter.NewList(filter.MustPassAll, colValue),
			cam: func(m *hrpc.Mutate) (*hrpc.CheckAndMutate, error) {
				return hrpc.NewCheckAndMutateWithFilter(m, filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte("k")), colValue))
			}},
		{name: "row filter", key: "k1", refused: true, cam: func(m *hrpc.Mutate) (*hrpc.CheckAndMutate, error) {
			return hrpc.NewCheckAndMutateWithFilter(m, filter.NewRowFilter(filter.NewCompareFilter(filter.Equal, value)))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, f, s := newTestClient(t, "hash:4")
			m := putOf(t, tbl, tc.key)
			cam := must[*hrpc.CheckAndMutate](t)(tc.cam(m))
			ok, err := c.CheckAndMutate(cam)
			if tc.refused {
				if !errors.Is(err, ErrUnsupported) || len(f.calls()) != 0 {
					t.Fatalf("err %v with %d calls sent; want ErrUnsupported and nothing sent", err, len(f.calls()))
				}
				return
			}
			if err != nil || !ok {
				t.Fatalf("CheckAndMutate: %v, %v", ok, err)
			}
			phys := must[[]byte](t)(s.AppendPhysical(nil, []byte(tc.key)))
			sent := f.calls()[0].(*hrpc.CheckAndMutate)
			req := requestProto(sent).(*pb.MutateRequest)
			if !bytes.Equal(req.Mutation.Row, phys) || !bytes.Equal(req.Condition.Row, phys) {
				t.Errorf("row %q, condition row %q; want both %q", req.Mutation.Row, req.Condition.Row, phys)
			}
			want := requestProto(cam).(*pb.MutateRequest)
			want.Mutation.Row, want.Condition.Row = phys, phys
			switch {
			case tc.name == "prefix the row lacks":
				want.Condition.Filter = noRowFilter(phys)
			case tc.wantFilter != nil:
				want.Condition.Filter = pbOf(t, tc.wantFilter)
			}
			if !proto.Equal(normalize(req), normalize(want)) {
				t.Errorf("sent\n%v\nwant\n%v", req, want)
			}
			if !sent.SkipBatch() {
				t.Error("the sent mutation is batchable; gohbase's never is")
			}
		})
	}
}

func TestCheckAndMutateRefusedOnIndexedTable(t *testing.T) {
	c, f := indexedClient(t)
	cam := must[*hrpc.CheckAndMutate](t)(hrpc.NewCheckAndMutate(putOf(t, tbl, "k1"), "d", "v", pb.CompareType_EQUAL,
		filter.NewBinaryComparator(filter.NewByteArrayComparable(nil))))
	if _, err := c.CheckAndMutate(cam); !errors.Is(err, ErrIndexedTable) {
		t.Fatalf("err %v, want ErrIndexedTable", err)
	}
	if n := len(f.calls()); n != 0 {
		t.Fatalf("%d calls sent", n)
	}
}

func TestCheckAndPutWithCompareTypeSalted(t *testing.T) {
	c, f, s := newTestClient(t, "hash:4")
	ok, err := c.CheckAndPutWithCompareType(putOf(t, tbl, "k1"), "d", "v", []byte("x"), pb.CompareType_LESS)
	if err != nil || !ok {
		t.Fatalf("%v, %v", ok, err)
	}
	if got, want := f.calls()[0].Key(), must[[]byte](t)(s.AppendPhysical(nil, []byte("k1"))); !bytes.Equal(got, want) {
		t.Fatalf("sent key %q, want %q", got, want)
	}
}

func TestCacheRegionsOfTheTable(t *testing.T) {
	c, f, _ := newTestClient(t, "hash:4")
	if err := c.CacheRegions([]byte(tbl)); err != nil {
		t.Fatal(err)
	}
	if len(f.cached) != 1 || f.cached[0] != tbl {
		t.Fatalf("cached %q, want [%q]", f.cached, tbl)
	}
}
