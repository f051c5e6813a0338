//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tsuna/gohbase"
	"github.com/tsuna/gohbase/filter"
	"github.com/tsuna/gohbase/hrpc"
	"golang.org/x/sync/errgroup"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/hbase/dropin"
	"github.com/brine-kv/brine/internal/testkit"
	"github.com/brine-kv/brine/keys"
)

// successor is the least key greater than k (nil, unbounded, for an empty k).
func successor(k []byte) []byte {
	if len(k) == 0 {
		return nil
	}
	return keys.Successor(k)
}

// writeCalls sends the same write calls, built by gohbase's own hrpc constructors with logical keys,
// to c (the drop-in on the salted table, or raw gohbase on the reference) and returns what each
// answered, for comparison.
func writeCalls(t *testing.T, ctx context.Context, c gohbase.Client, table string) []string {
	t.Helper()
	var out []string
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s on %s: %v", what, table, err)
		}
	}
	app, err := hrpc.NewAppStr(ctx, table, "ab", map[string]map[string][]byte{fam: {"q": []byte("+tail")}})
	must("NewAppStr", err)
	res, err := c.Append(app)
	must("Append", err)
	out = append(out, "append "+resultRow(res).String())

	for range 2 {
		inc, err := hrpc.NewIncStrSingle(ctx, table, "abc", fam, "cnt", 5)
		must("NewIncStrSingle", err)
		n, err := c.Increment(inc)
		must("Increment", err)
		out = append(out, fmt.Sprintf("increment %d", n))
	}

	for _, expected := range []string{"v:b", "not the value"} {
		p, err := hrpc.NewPutStr(ctx, table, "b", map[string]map[string][]byte{fam: {"q": []byte("cas " + expected)}})
		must("NewPutStr", err)
		ok, err := c.CheckAndPut(p, fam, "q", []byte(expected))
		must("CheckAndPut", err)
		out = append(out, fmt.Sprintf("checkandput %q %v", expected, ok))
	}

	del, err := hrpc.NewDelStr(ctx, table, "abd", nil)
	must("NewDelStr", err)
	_, err = c.Delete(del)
	must("Delete", err)
	delCol, err := hrpc.NewDelStr(ctx, table, "a\x00", map[string]map[string][]byte{fam: {"n": nil}})
	must("NewDelStr", err)
	_, err = c.Delete(delCol)
	must("Delete column", err)
	return out
}

// TestDropin: the salted gohbase.Client answers gohbase's own requests, built with logical keys, as
// raw gohbase answers them on an unsalted copy: Put, Get, Append, Increment, CheckAndPut, Delete,
// forward and reversed range scans, with logical keys in every result. What it cannot rewrite it
// refuses with dropin.ErrUnsupported naming the call, and sends nothing.
func TestDropin(t *testing.T) {
	e := openHBase(t)
	ctx := testkit.Context(t, 3*time.Minute)
	tbl := e.salted(t, "hash:8", 0)
	name := tbl.Name()
	ref := e.unsalted(t, [][]byte{{0x01}, []byte("gF"), {0xff}})
	dc := newDropin(t, e, dropin.WithPrefetch(4))

	keys := scanKeys()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(32)
	for _, k := range keys {
		g.Go(func() error {
			p, err := hrpc.NewPutStr(gctx, name, string(k), map[string]map[string][]byte{fam: testCells(k)})
			if err != nil {
				return err
			}
			_, err = dc.Put(p)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("drop-in puts: %v", err)
	}
	writeRaw(t, e.raw, ref, keys)

	// Every physical row is a salted key of the table's spec; nothing went in unsalted.
	physRows := rawScan(t, e.raw, name, nil, nil)
	if len(physRows) != len(keys) {
		t.Fatalf("physical rows %d, want %d", len(physRows), len(keys))
	}
	for _, r := range physRows {
		if _, err := tbl.Salter().AppendLogical(nil, []byte(r.Key)); err != nil {
			t.Fatalf("physical row %q is not a hash:8 key: %v", r.Key, err)
		}
	}

	t.Run("get", func(t *testing.T) {
		for _, k := range keys[:60] {
			get, err := hrpc.NewGetStr(ctx, name, string(k))
			if err != nil {
				t.Fatal(err)
			}
			res, err := dc.Get(get)
			if err != nil {
				t.Fatalf("Get %q: %v", k, err)
			}
			for _, c := range res.Cells {
				if !bytes.Equal(c.Row, k) {
					t.Fatalf("Get %q: cell of row %q", k, c.Row)
				}
			}
			if got, want := resultRow(res), expectRow(k); got.String() != want.String() {
				t.Fatalf("Get %q: %v, want %v", k, got, want)
			}
		}
		get, err := hrpc.NewGetStr(ctx, name, "no such row")
		if err != nil {
			t.Fatal(err)
		}
		if res, err := dc.Get(get); err != nil || len(res.Cells) != 0 {
			t.Fatalf("Get of a missing row: %v, %v", res, err)
		}
	})

	t.Run("writes", func(t *testing.T) {
		got := writeCalls(t, ctx, dc, name)
		want := writeCalls(t, ctx, e.raw, ref)
		for _, w := range []string{"increment 10", `checkandput "v:b" true`, `checkandput "not the value" false`} {
			if !strings.Contains(strings.Join(want, "\n"), w) {
				t.Fatalf("reference answers lack %q: %q", w, want)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("drop-in answers:\n%s\nraw gohbase on the reference:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		all, err := drain(dc.Scan(mustScan(t)(hrpc.NewScanStr(ctx, name))))
		if err != nil {
			t.Fatal(err)
		}
		if d := diffRows(all, rawScan(t, e.raw, ref, nil, nil)); d != "" {
			t.Fatalf("table after the writes: %s", d)
		}
	})

	t.Run("scan", func(t *testing.T) {
		for _, r := range scanRanges() {
			if len(r.end) > 0 && bytes.Compare(r.start, r.end) >= 0 {
				// HBase reads start == stop as a Get of that row; the drop-in reads the logical range,
				// which is empty: only that it is empty and no error is checked.
				got, err := drain(dc.Scan(mustScan(t)(hrpc.NewScanRange(ctx, []byte(name), r.start, r.end))))
				if err != nil || len(got) != 0 {
					t.Errorf("%s: %v, %v; want nothing", r.name, got, err)
				}
				continue
			}
			got, err := drain(dc.Scan(mustScan(t)(hrpc.NewScanRange(ctx, []byte(name), r.start, r.end, hrpc.NumberOfRows(5)))))
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			if d := diffRows(got, rawScan(t, e.raw, ref, r.start, r.end)); d != "" {
				t.Fatalf("%s: %s", r.name, d)
			}
			// Reversed: (StopRow, StartRow], highest key first.
			got, err = drain(dc.Scan(mustScan(t)(hrpc.NewScanRange(ctx, []byte(name), r.end, r.start, hrpc.Reversed(), hrpc.NumberOfRows(5)))))
			if err != nil {
				t.Fatalf("%s reversed: %v", r.name, err)
			}
			want := reversed(rawScan(t, e.raw, ref, successor(r.start), successor(r.end)))
			if d := diffRows(got, want); d != "" {
				t.Fatalf("%s reversed: %s", r.name, d)
			}
		}
	})

	t.Run("unsupported", func(t *testing.T) {
		before := rawScan(t, e.raw, name, nil, nil)
		// A row-key comparison no per-bucket range expresses (a PrefixFilter is rewritten instead).
		rowKeyFilter := hrpc.Filters(filter.NewRowFilter(filter.NewCompareFilter(filter.Less,
			filter.NewBinaryComparator(filter.NewByteArrayComparable([]byte("g"))))))
		calls := []struct {
			call string
			run  func() error
		}{
			{"Scan", func() error {
				_, err := drain(dc.Scan(mustScan(t)(hrpc.NewScanStr(ctx, name, rowKeyFilter))))
				return err
			}},
			{"Scan", func() error {
				_, err := drain(dc.Scan(mustScan(t)(hrpc.NewScanStr(ctx, name, hrpc.Filters(filter.NewPageFilter(10))))))
				return err
			}},
			{"Get", func() error {
				get, err := hrpc.NewGetStr(ctx, name, "gA/0000", rowKeyFilter)
				if err != nil {
					return err
				}
				_, err = dc.Get(get)
				return err
			}},
			{"Scan (Reversed)", func() error {
				_, err := drain(dc.Scan(mustScan(t)(hrpc.NewScanStr(ctx, name, hrpc.Reversed(), hrpc.MaxVersions(3)))))
				return err
			}},
		}
		for _, c := range calls {
			err := c.run()
			if !errors.Is(err, dropin.ErrUnsupported) || !strings.Contains(err.Error(), c.call+" ") {
				t.Errorf("%s: got %v, want dropin.ErrUnsupported naming %s", c.call, err, c.call)
			}
		}
		// An empty logical key is refused before sending too.
		p, err := hrpc.NewPutStr(ctx, name, "", map[string]map[string][]byte{fam: {"q": []byte("x")}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dc.Put(p); !errors.Is(err, backends.ErrInvalidKey) {
			t.Errorf("Put with an empty key: %v, want ErrInvalidKey", err)
		}
		if d := diffRows(rawScan(t, e.raw, name, nil, nil), before); d != "" {
			t.Fatalf("refused calls changed the table: %s", d)
		}
	})
}

func mustScan(t *testing.T) func(*hrpc.Scan, error) *hrpc.Scan {
	return func(s *hrpc.Scan, err error) *hrpc.Scan {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}
