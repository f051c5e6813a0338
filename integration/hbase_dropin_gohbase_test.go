//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/dropin"
	"github.com/brine-kv/brine/internal/hbasetest"
	"github.com/brine-kv/brine/internal/testkit"
)

// The tests of this file are written the way gohbase's own integration_test.go is: the same calls
// are made on raw gohbase (an unsalted table) and on the drop-in (a salted one), and the drop-in must
// answer as gohbase does, errors compared with == where gohbase's callers compare so.

// newDropin is a drop-in over a gohbase client of its own (closed with it), reading stored specs
// through e's backend.
func newDropin(t *testing.T, e *hbaseEnv, opts ...dropin.Option) *dropin.Client {
	t.Helper()
	c := dropin.New(gohbase.NewClient(hbasetest.ZK(t), gohbase.FlushInterval(0)),
		append([]dropin.Option{dropin.WithBackend(e.backend), dropin.WithLogger(testkit.Logger(t, slog.LevelWarn))}, opts...)...)
	t.Cleanup(c.Close)
	return c
}

// clients are the two sides of every comparison: raw gohbase on an unsalted table, the drop-in on a
// salted one, written with the same rows.
type side struct {
	name  string
	c     gohbase.Client
	table string
}

func bothSides(t *testing.T, e *hbaseEnv, spec string, keys [][]byte) []side {
	t.Helper()
	tbl := e.salted(t, spec, 0)
	ref := e.unsalted(t, nil)
	d := newDropin(t, e)
	for _, s := range []side{{"raw", e.raw, ref}, {"dropin", d, tbl.Name()}} {
		writeRaw(t, s.c, s.table, keys)
	}
	return []side{{"raw", e.raw, ref}, {"dropin", d, tbl.Name()}}
}

// TestDropinErrorsAreGohbases: a done context, a closed client and a missing table give gohbase's
// own error values, on every call, as raw gohbase gives them.
func TestDropinErrorsAreGohbases(t *testing.T) {
	e := openHBase(t)
	keys := [][]byte{[]byte("k1"), []byte("k2"), []byte("k3"), []byte("k4"), []byte("k5")}
	for _, s := range bothSides(t, e, "hash:4", keys) {
		t.Run(s.name, func(t *testing.T) {
			vals := map[string]map[string][]byte{fam: {"q": []byte("v")}}
			type call func(ctx context.Context, c gohbase.Client, table string) error
			calls := map[string]call{
				"Get": func(ctx context.Context, c gohbase.Client, table string) error {
					_, err := c.Get(must2(hrpc.NewGetStr(ctx, table, "k1")))
					return err
				},
				"Put": func(ctx context.Context, c gohbase.Client, table string) error {
					_, err := c.Put(must2(hrpc.NewPutStr(ctx, table, "k1", vals)))
					return err
				},
				"Scan": func(ctx context.Context, c gohbase.Client, table string) error {
					sc := c.Scan(must2(hrpc.NewScanStr(ctx, table)))
					defer sc.Close()
					_, err := sc.Next()
					return err
				},
			}
			expired, cancel := context.WithTimeout(context.Background(), 0)
			defer cancel()
			for name, call := range calls {
				if err := call(expired, s.c, s.table); err != context.DeadlineExceeded {
					t.Errorf("%s with a passed deadline: %v, want context.DeadlineExceeded", name, err)
				}
				if err := call(context.Background(), s.c, "brine_no_such_table"); err != gohbase.TableNotFound {
					t.Errorf("%s on a missing table: %v, want gohbase.TableNotFound", name, err)
				}
			}

			// gohbase's scanner: Next after the context ends returns ctx.Err() itself.
			ctx, cancelScan := context.WithCancel(context.Background())
			sc := s.c.Scan(must2(hrpc.NewScanStr(ctx, s.table, hrpc.NumberOfRows(1))))
			if _, err := sc.Next(); err != nil {
				t.Fatal(err)
			}
			cancelScan()
			if _, err := sc.Next(); err != context.Canceled {
				t.Errorf("Next after cancel: %v, want context.Canceled", err)
			}
			sc.Close()
		})
	}

	// Closed: a client of its own for each side, closed before use.
	closedRaw := gohbase.NewClient(hbasetest.ZK(t))
	closedRaw.Close()
	closedDropin := newDropin(t, e)
	closedDropin.Close()
	for name, c := range map[string]gohbase.Client{"raw": closedRaw, "dropin": closedDropin} {
		p := must2(hrpc.NewPutStr(context.Background(), "brine_any", "k", map[string]map[string][]byte{fam: {"q": nil}}))
		if _, err := c.Put(p); err != gohbase.ErrClientClosed {
			t.Errorf("%s: Put on a closed client: %v, want gohbase.ErrClientClosed", name, err)
		}
	}

	// brine's own API reports a missing table with both sentinels.
	_, err := e.client.OpenTable(testkit.Context(t, time.Minute), "brine_no_such_table", nil)
	if !errors.Is(err, backends.ErrTableNotFound) || !errors.Is(err, gohbase.TableNotFound) {
		t.Errorf("OpenTable of a missing table: %v, want ErrTableNotFound and gohbase.TableNotFound", err)
	}
}

// TestDropinPrefixFilter: a PrefixFilter (alone or in MUST_PASS_ALL) on a salted table returns what it
// returns on raw gohbase over the unsalted copy, for Scans and Gets; what cannot be carried is refused
// with ErrUnsupported and changes nothing.
func TestDropinPrefixFilter(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 3*time.Minute)
	sides := bothSides(t, e, "hash:8", scanKeys())
	keyOnly := filter.NewKeyOnlyFilter(false)
	scans := []struct {
		name        string
		start, stop string
		f           filter.Filter
		none        bool // the reference returns no row
	}{
		{"prefix gC", "", "", filter.NewPrefixFilter([]byte("gC")), false},
		{"prefix g in a range", "gB/0030", "gE", filter.NewPrefixFilter([]byte("g")), false},
		{"prefix outside the range", "a", "b", filter.NewPrefixFilter([]byte("t")), true},
		{"prefix 0xff", "", "", filter.NewPrefixFilter([]byte{0xff}), false},
		{"prefix in MustPassAll", "", "", filter.NewList(filter.MustPassAll, filter.NewPrefixFilter([]byte("gD/00")), keyOnly), false},
		{"empty prefix: every row", "", "", filter.NewPrefixFilter([]byte{}), false},
		{"absent prefix: no row", "", "", filter.NewPrefixFilter(nil), true},
	}
	for _, sc := range scans {
		t.Run("Scan "+sc.name, func(t *testing.T) {
			var got [2][]row
			for i, s := range sides {
				rows, err := drain(s.c.Scan(must2(hrpc.NewScanRangeStr(ctx, s.table, sc.start, sc.stop, hrpc.Filters(sc.f), hrpc.NumberOfRows(7)))))
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				got[i] = rows
			}
			if d := diffRows(got[1], got[0]); d != "" {
				t.Fatalf("drop-in vs raw gohbase: %s", d)
			}
			if (len(got[0]) == 0) != sc.none {
				t.Fatalf("the reference returned %d rows: the case is not what it says", len(got[0]))
			}
		})
	}
	for _, key := range []string{"gC/0003", "gD/0003", "no such row"} {
		t.Run("Get "+key, func(t *testing.T) {
			var got [2]string
			for i, s := range sides {
				res, err := s.c.Get(must2(hrpc.NewGetStr(ctx, s.table, key, hrpc.Filters(filter.NewPrefixFilter([]byte("gC"))))))
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				got[i] = resultRow(res).String()
			}
			if got[0] != got[1] {
				t.Fatalf("drop-in %s, raw gohbase %s", got[1], got[0])
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		d := sides[1]
		rowF := filter.NewRowFilter(filter.NewCompareFilter(filter.Equal, filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("gC/0003")))))
		for name, f := range map[string]filter.Filter{
			"RowFilter":             rowF,
			"PrefixFilter, OR-ed":   filter.NewList(filter.MustPassOne, filter.NewPrefixFilter([]byte("g")), rowF),
			"PageFilter":            filter.NewPageFilter(5),
			"InclusiveStopFilter":   filter.NewInclusiveStopFilter([]byte("gD")),
			"PrefixFilter, wrapped": filter.NewWhileMatchFilter(filter.NewPrefixFilter([]byte("g"))),
		} {
			_, err := drain(d.c.Scan(must2(hrpc.NewScanStr(ctx, d.table, hrpc.Filters(f)))))
			if !errors.Is(err, dropin.ErrUnsupported) || !strings.Contains(err.Error(), "Scan") {
				t.Errorf("Scan with %s: %v, want ErrUnsupported naming Scan", name, err)
			}
		}
	})
}

// TestDropinUnsaltedPassesThrough: on a table brine created unsalted ("none"), every filter, row-key
// and per-region ones included, reaches the server as built, and the drop-in answers as raw gohbase
// does on the very same table.
func TestDropinUnsaltedPassesThrough(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 2*time.Minute)
	tbl := e.salted(t, "none", 0)
	keys := scanKeys()
	writeRaw(t, e.raw, tbl.Name(), keys)
	d := newDropin(t, e)
	rowF := filter.NewRowFilter(filter.NewCompareFilter(filter.GreaterOrEqual, filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("gK")))))
	for name, f := range map[string]filter.Filter{
		"PageFilter":          filter.NewPageFilter(9),
		"RowFilter":           rowF,
		"InclusiveStopFilter": filter.NewInclusiveStopFilter([]byte("gB/0009")),
		"WhileMatchFilter":    filter.NewWhileMatchFilter(filter.NewPrefixFilter([]byte{0x00})),
		"FuzzyRowFilter": filter.NewFuzzyRowFilter([]*filter.BytesBytesPair{
			filter.NewBytesBytesPair([]byte("g?/0003"), []byte{0, 1, 0, 0, 0, 0, 0})}),
	} {
		t.Run(name, func(t *testing.T) {
			want, err := drain(e.raw.Scan(must2(hrpc.NewScanStr(ctx, tbl.Name(), hrpc.Filters(f)))))
			if err != nil {
				t.Fatal(err)
			}
			got, err := drain(d.Scan(must2(hrpc.NewScanStr(ctx, tbl.Name(), hrpc.Filters(f)))))
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("the reference returned no rows: the case proves nothing")
			}
			if d := diffRows(got, want); d != "" {
				t.Fatalf("drop-in vs raw gohbase on the same table: %s", d)
			}
		})
	}
}

// must2 unwraps an hrpc constructor's result; they fail only on a bad option, a test bug.
func must2[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("building a request: %v", err))
	}
	return v
}
