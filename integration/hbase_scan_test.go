//go:build integration

package integration

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// scanKeys is the data set of the scan tests: binary keys with 0x00 and 0xFF bytes, keys that are
// prefixes of others, single bytes (each the bucket prefix of some bucket: in the unsalted reference
// they sit on region bounds, in a salted table they would collide with the prefix if it leaked into
// logical keys), grouped keys for lead-pruned specs ("gNN/...", the first two bytes the group) and
// a monotonic run.
func scanKeys() [][]byte {
	keys := [][]byte{
		{0x00}, {0x00, 0x00}, {0x00, 0x01}, {0x00, 0xff}, {0x00, 0xff, 0xff},
		{0xff}, {0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff},
		[]byte("a"), []byte("a\x00"), []byte("a\x00\x00"), []byte("ab"), []byte("abc"), []byte("abd"), []byte("b"),
	}
	for b := range 16 {
		keys = append(keys, []byte{byte(b)}, []byte{byte(b), 0x00}, []byte{byte(b << 4)}, []byte{byte(b<<4 | 0xf), 0xff})
	}
	for g := range 12 {
		for i := range 40 {
			keys = append(keys, fmt.Appendf(nil, "g%c/%04d", 'A'+g, i*3))
		}
	}
	for i := range 300 {
		keys = append(keys, binary.BigEndian.AppendUint64([]byte("t"), uint64(1_700_000_000+i*7)))
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal)
}

// scanRange is one range shape of the equivalence test.
type scanRange struct {
	name       string
	start, end []byte
	// oneBucket: under a spec whose lead is the first two bytes the range must read one bucket only.
	oneBucket bool
}

func scanRanges() []scanRange {
	return []scanRange{
		{name: "full"},
		{name: "one group", start: []byte("gC"), end: []byte("gD"), oneBucket: true},
		{name: "inside group", start: []byte("gE/0010"), end: []byte("gE/0061"), oneBucket: true},
		{name: "group to end of its prefix", start: []byte("gF/0050"), end: []byte("gF0"), oneBucket: true},
		{name: "across groups", start: []byte("gB/0100"), end: []byte("gD/0005")},
		{name: "start==stop", start: []byte("abc"), end: []byte("abc")},
		{name: "start>stop", start: []byte("b"), end: []byte("a")},
		{name: "on keys", start: []byte("a"), end: []byte("abc")},
		{name: "between keys", start: []byte("gA/0001"), end: []byte("gA/0002")},
		{name: "single row", start: []byte("ab"), end: []byte("ab\x00")},
		{name: "prefix a", start: []byte("a"), end: []byte("b")},
		{name: "prefix a\\x00", start: []byte("a\x00"), end: []byte("a\x01")},
		{name: "from 0x00", start: []byte{0x00}, end: []byte{0x00, 0x01}},
		{name: "below 0x00 0x00", end: []byte{0x00, 0x00}},
		{name: "to 0x00 0xff", start: nil, end: []byte{0x00, 0xff}},
		{name: "from 0xff", start: []byte{0xff}},
		{name: "from 0xff 0xff", start: []byte{0xff, 0xff}},
		{name: "0x00ff to 0xff00", start: []byte{0x00, 0xff}, end: []byte{0xff, 0x00}},
		{name: "monotonic run", start: []byte("t"), end: []byte("u")},
		{name: "open start", end: []byte("gA/0060")},
		{name: "open end", start: []byte("gK/0030")},
	}
}

// TestScanEquivalence: for each salting spec, the brine scan of every range shape, limit, direction
// and paging equals a raw gohbase scan of an unsalted copy of the same rows (reversed for reverse
// scans): same keys, same values, same order.
func TestScanEquivalence(t *testing.T) {
	e := openHBase(t)
	keys := scanKeys()

	// The reference is pre-split too, at bounds that some keys sit on.
	ref := e.unsalted(t, [][]byte{{0x01}, []byte("a\x00"), []byte("gF"), {0xff}})
	writeRaw(t, e.raw, ref, keys)

	specs := []struct {
		spec  string
		lead2 bool // the lead is the first two bytes: one-group ranges are pruned to one bucket
	}{
		{spec: "hash:8"},
		{spec: "hash:16:prefix=2", lead2: true},
		{spec: "md5hex:1:prefix=2", lead2: true},
	}
	limits := []int{0, 1, 7, 100, len(keys) + 10}
	for _, sc := range specs {
		t.Run(sc.spec, func(t *testing.T) {
			tbl := e.salted(t, sc.spec, 0)
			writeBrine(t, tbl, keys)
			// A second client over a counting wrapper of the same driver sees how many bucket
			// scans each brine scan sends.
			counter := &countingBackend{Backend: e.backend}
			ctbl, err := client.New(counter).OpenTable(testkit.Context(t, time.Minute), tbl.Name(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if ctbl.Salter().Spec() != sc.spec {
				t.Fatalf("adopted spec %q, want %q", ctbl.Salter().Spec(), sc.spec)
			}
			buckets := ctbl.Salter().Buckets()
			for _, r := range scanRanges() {
				t.Run(r.name, func(t *testing.T) {
					ctx := testkit.Context(t, time.Minute)
					empty := len(r.end) > 0 && bytes.Compare(r.start, r.end) >= 0
					// start > stop is refused before anything is sent (a descending scan is the
					// ascending range and Reverse()); start == stop is an empty range.
					inverted := len(r.end) > 0 && bytes.Compare(r.start, r.end) > 0
					var want []row
					if !empty {
						want = rawScan(t, e.raw, ref, r.start, r.end)
					}
					for _, limit := range limits {
						for _, reverse := range []bool{false, true} {
							opts := []client.ReadOption{client.Limit(limit), client.BatchSize(5)}
							w := want
							if reverse {
								opts = append(opts, client.Reverse())
								w = reversed(want)
							}
							w = limited(w, limit)
							counter.reset()
							got, err := collect(ctbl.Scan(ctx, client.RowRange(r.start, r.end), opts...))
							if inverted {
								if len(got) != 0 || !errors.Is(err, client.ErrInvalidArgument) {
									t.Fatalf("limit %d reverse %v: %d rows, %v; want ErrInvalidArgument", limit, reverse, len(got), err)
								}
								if scans := counter.reset(); scans != 0 {
									t.Errorf("inverted range: %d bucket scans, want none", scans)
								}
								continue
							}
							if err != nil {
								t.Fatalf("limit %d reverse %v: %v", limit, reverse, err)
							}
							if d := diffRows(got, w); d != "" {
								t.Fatalf("limit %d reverse %v: %s", limit, reverse, d)
							}
							scans := counter.reset()
							switch {
							case empty && scans != 0:
								t.Errorf("empty range: %d bucket scans, want none", scans)
							case r.oneBucket && sc.lead2 && scans != 1:
								t.Errorf("limit %d reverse %v: %d bucket scans, want 1 (pruned)", limit, reverse, scans)
							case !empty && !r.oneBucket && r.end == nil && r.start == nil && scans != buckets:
								t.Errorf("full range: %d bucket scans, want %d", scans, buckets)
							}
						}
					}
					if empty {
						return
					}
					// Cursor paging, page by page until a short page: forward and reverse.
					for _, reverse := range []bool{false, true} {
						for _, page := range []int{1, 7, 50} {
							if len(want) > 40*page {
								continue // small pages on big ranges add run time, not coverage
							}
							w := want
							if reverse {
								w = reversed(want)
							}
							var got []row
							var cursor []byte
							for pages := 0; ; pages++ {
								if pages > len(w)+2 {
									t.Fatalf("page %d: paging does not end", pages)
								}
								opts := []client.ReadOption{client.Limit(page)}
								if reverse {
									opts = append(opts, client.Reverse())
								}
								if cursor != nil {
									opts = append(opts, client.ResumeAfter(cursor))
								}
								p, err := collect(tbl.Scan(ctx, client.RowRange(r.start, r.end), opts...))
								if err != nil {
									t.Fatalf("reverse %v page size %d, page %d: %v", reverse, page, pages, err)
								}
								got = append(got, p...)
								if len(p) < page {
									break
								}
								cursor = []byte(p[len(p)-1].Key)
							}
							if d := diffRows(got, w); d != "" {
								t.Fatalf("paging reverse %v page size %d: %s", reverse, page, d)
							}
						}
					}
				})
			}
		})
	}
}
