package dropin

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"github.com/tsuna/gohbase/pb"

	"github.com/brine-kv/brine/backends"
)

func putOf(t *testing.T, table, key string, opts ...func(hrpc.Call) error) *hrpc.Mutate {
	t.Helper()
	return must[*hrpc.Mutate](t)(hrpc.NewPutStr(context.Background(), table, key,
		map[string]map[string][]byte{"d": {"v": []byte(key)}}, opts...))
}

func getOf(t *testing.T, table, key string, opts ...func(hrpc.Call) error) *hrpc.Get {
	t.Helper()
	return must[*hrpc.Get](t)(hrpc.NewGetStr(context.Background(), table, key, opts...))
}

// SendBatch keeps gohbase's contract: one result per call, in order, allOK; a batch gohbase refuses
// whole, or one with a call the wrapper refuses, sends nothing and marks the other calls not executed.
func TestSendBatch(t *testing.T) {
	ctx := context.Background()
	type want struct {
		err     string // substring of the call's error; "" for success, "-" for NotExecutedError
		cellRow string // the result's row key, when it has cells
	}
	cases := []struct {
		name      string
		preload   []string
		batch     func(t *testing.T) []hrpc.Call
		failKey   string // the fake fails this call (by logical key)
		allOK     bool
		want      []want
		sentCalls int
	}{
		{name: "puts and gets in order", preload: []string{"g1"}, allOK: true, sentCalls: 3,
			batch: func(t *testing.T) []hrpc.Call {
				return []hrpc.Call{putOf(t, tbl, "p1"), getOf(t, tbl, "g1"), getOf(t, tbl, "missing")}
			},
			want: []want{{}, {cellRow: "g1"}, {}}},
		{name: "one call fails on the server", allOK: false, failKey: "p2", sentCalls: 3,
			batch: func(t *testing.T) []hrpc.Call {
				return []hrpc.Call{putOf(t, tbl, "p1"), putOf(t, tbl, "p2"), putOf(t, tbl, "p3")}
			},
			want: []want{{}, {err: errFakeScan.Error()}, {}}},
		{name: "two tables", allOK: false,
			batch: func(t *testing.T) []hrpc.Call {
				return []hrpc.Call{putOf(t, tbl, "p1"), putOf(t, "other", "p2")}
			},
			want: []want{{err: "-"}, {err: "multiple tables in batch request"}}},
		{name: "non-batchable call", allOK: false,
			batch: func(t *testing.T) []hrpc.Call {
				return []hrpc.Call{putOf(t, tbl, "p1", hrpc.SkipBatch()), putOf(t, tbl, "p2")}
			},
			want: []want{{err: "non-batchable call passed to SendBatch"}, {err: "-"}}},
		{name: "same call twice", allOK: false,
			batch: func(t *testing.T) []hrpc.Call {
				p := putOf(t, tbl, "p1")
				return []hrpc.Call{p, putOf(t, tbl, "p2"), p}
			},
			want: []want{{err: "-"}, {err: "-"}, {err: "duplicate call in batch at index 0"}}},
		{name: "a call the wrapper refuses", allOK: false,
			batch: func(t *testing.T) []hrpc.Call {
				rowFilter := hrpc.Filters(filter.NewRowFilter(filter.NewCompareFilter(filter.Equal,
					filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("g1"))))))
				return []hrpc.Call{putOf(t, tbl, "p1"), getOf(t, tbl, "g1", rowFilter)}
			},
			want: []want{{err: "-"}, {err: ErrUnsupported.Error()}}},
		{name: "an empty key", allOK: false,
			batch: func(t *testing.T) []hrpc.Call {
				return []hrpc.Call{putOf(t, tbl, ""), putOf(t, tbl, "p2")}
			},
			want: []want{{err: backends.ErrInvalidKey.Error()}, {err: "-"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, f, s := newTestClient(t, "hash:4")
			for _, k := range tc.preload {
				if _, err := c.Put(putOf(t, tbl, k)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.failKey != "" {
				f.batchFail = must[[]byte](t)(s.AppendPhysical(nil, []byte(tc.failKey)))
			}
			before := len(f.calls())
			batch := tc.batch(t)
			res, allOK := c.SendBatch(ctx, batch)
			if allOK != tc.allOK {
				t.Errorf("allOK %v, want %v", allOK, tc.allOK)
			}
			if len(res) != len(tc.want) {
				t.Fatalf("%d results for %d calls", len(res), len(tc.want))
			}
			for i, w := range tc.want {
				err := res[i].Error
				switch {
				case w.err == "-" && !errors.Is(err, gohbase.NotExecutedError):
					t.Errorf("call %d: error %v, want NotExecutedError", i, err)
				case w.err == "" && err != nil:
					t.Errorf("call %d: %v", i, err)
				case w.err != "" && w.err != "-" && (err == nil || !strings.Contains(err.Error(), w.err)):
					t.Errorf("call %d: error %v, want one with %q", i, err, w.err)
				}
				if w.cellRow == "" {
					continue
				}
				cells := res[i].Msg.(*pb.GetResponse).GetResult().GetCell()
				if len(cells) == 0 {
					t.Fatalf("call %d: no cells", i)
				}
				for _, cell := range cells {
					if !bytes.Equal(cell.Row, []byte(w.cellRow)) {
						t.Errorf("call %d: cell of row %q, want the logical %q", i, cell.Row, w.cellRow)
					}
				}
			}
			if sent := len(f.calls()) - before; sent != tc.sentCalls {
				t.Errorf("%d calls reached gohbase, want %d", sent, tc.sentCalls)
			}
			salted := map[string]bool{}
			for _, call := range batch {
				if len(call.Key()) > 0 {
					salted[string(must[[]byte](t)(s.AppendPhysical(nil, call.Key())))] = true
				}
			}
			for _, call := range f.calls()[before:] {
				if !salted[string(call.Key())] {
					t.Errorf("call of key %q reached gohbase: not the salted key of a call of the batch", call.Key())
				}
			}
		})
	}
}

func TestSendBatchEmptyAndClosed(t *testing.T) {
	c, f, _ := newTestClient(t, "hash:4")
	if res, ok := c.SendBatch(context.Background(), nil); res != nil || !ok {
		t.Errorf("empty batch: %v, %v; gohbase answers nil, true", res, ok)
	}
	c.Close()
	res, ok := c.SendBatch(context.Background(), []hrpc.Call{putOf(t, tbl, "p1")})
	if ok || len(res) != 1 || !errors.Is(res[0].Error, gohbase.ErrClientClosed) {
		t.Errorf("closed client: %v, %v", res, ok)
	}
	if n := len(f.calls()); n != 0 {
		t.Errorf("%d calls sent", n)
	}
}
