package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/backends/memory"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// scanSalters cover many buckets, few buckets, one bucket (the fan-out's single-stream path), a
// pruning lead, and a salter that reads key bytes.
var scanSalters = []string{"hash:8", "hash:32", "md5hex:1", "hash:4:prefix=3", "mod:5:offset=0,width=1", "phoenix:3", "none"}

type scanShape struct {
	name    string
	r       client.Range
	reverse bool
	limit   int
	after   []byte // ResumeAfter cursor, nil for none
}

// cursorOutside reports whether after is a cursor outside r, which Scan refuses.
func cursorOutside(r client.Range, after []byte) bool {
	return after != nil && (bytes.Compare(after, r.Start) < 0 || len(r.End) > 0 && bytes.Compare(after, r.End) >= 0)
}

func scanShapes() []scanShape {
	ranges := []struct {
		name string
		r    client.Range
	}{
		{"all", client.Range{}},
		{"prefix", client.PrefixRange([]byte("u05"))},
		{"between", client.RowRange([]byte("u03/e10"), []byte("u07/e05"))},
		{"from", client.InfiniteRange([]byte("u17"))},
		{"to", client.RowRange(nil, []byte("u02/e03"))},
		{"single", client.SingleRow([]byte("u11/e11"))},
		{"no-rows", client.RowRange([]byte("u05/e99"), []byte("u06"))},
		{"inverted", client.RowRange([]byte("u09"), []byte("u01"))},
	}
	var shapes []scanShape
	for _, rg := range ranges {
		shapes = append(shapes,
			scanShape{rg.name, rg.r, false, 0, nil},
			scanShape{rg.name + "/reverse", rg.r, true, 0, nil},
			scanShape{rg.name + "/limit1", rg.r, false, 1, nil},
			scanShape{rg.name + "/reverse/limit7", rg.r, true, 7, nil},
		)
	}
	// Cursors on a row, between rows, before and past every row, and the empty key; those outside a
	// range are refused.
	for _, after := range [][]byte{[]byte("u05/e07"), []byte("u05/e07\x00"), []byte("u10"), {}, {0}, {0xff, 0xff, 0xff}} {
		for _, rg := range ranges[:3] {
			shapes = append(shapes,
				scanShape{fmt.Sprintf("%s/after %q", rg.name, after), rg.r, false, 5, after},
				scanShape{fmt.Sprintf("%s/reverse/after %q", rg.name, after), rg.r, true, 0, after},
			)
		}
	}
	return shapes
}

// scanFaults draws a fault mix for one seed: mid-stream errors (sometimes on one bucket only),
// timeouts and slow streams.
func scanFaults(rng *rand.Rand, buckets []backends.Range) []faulty.Rule {
	// Probabilities are per bucket scan: divided by the buckets, a whole scan fails with about the
	// drawn chance whatever the salter, so that paging still gets through.
	k := float64(len(buckets))
	rules := []faulty.Rule{
		{Fault: faulty.Error, Ops: faulty.OpScan, Prob: (0.05 + 0.4*rng.Float64()) / k, AfterRows: rng.IntN(40), Retryable: rng.IntN(2) == 0},
		{Fault: faulty.Timeout, Ops: faulty.OpScan, Prob: 0.05 / k, AfterRows: 20},
		{Fault: faulty.Delay, Ops: faulty.OpScan, Prob: 0.05, Delay: 50 * time.Microsecond, AfterRows: 30},
	}
	if len(buckets) > 1 && rng.IntN(3) == 0 {
		rules[0].Range = buckets[rng.IntN(len(buckets))]
		rules[0].Prob = 0.3
	}
	return rules
}

func physicalBuckets(t testing.TB, spec string) []backends.Range {
	brs, err := testkit.Salter(t, spec).BucketRanges(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]backends.Range, len(brs))
	for i, br := range brs {
		out[i] = backends.Range{Start: br.Start, End: br.End}
	}
	return out
}

// TestScanUnderFaults: a fan-out scan under injected faults yields exactly the reference rows or a
// prefix of them followed by an error — never a short, reordered or duplicated result without one —
// for every range shape, direction and limit, many seeds and client settings; and paging with
// ResumeAfter, retrying a page that failed, reassembles the reference exactly.
func TestScanUnderFaults(t *testing.T) {
	ks := scanKeys()
	shapes := scanShapes()
	n := seedCount(t, 16)
	var total struct{ scans, exact, failed, pages, rows, injected int64 }
	for _, spec := range scanSalters {
		t.Run(spec, func(t *testing.T) {
			mem := newMemTable(t, spec, ks, memory.WithScanBatch(5))
			buckets := physicalBuckets(t, spec)
			for seed := range uint64(n) {
				rng := rand.New(rand.NewPCG(seed, 0x5ca9))
				f := faulty.New(mem, faulty.Config{Seed: seed, Rules: scanFaults(rng, buckets)})
				opts := []client.Option{
					client.WithScanConcurrency([]int{1, 2, 16}[rng.IntN(3)]),
					client.WithPrefetch([]int{1, 2, 5, 256}[rng.IntN(4)]),
				}
				tbl := openOn(t, f, opts...)
				batch := client.BatchSize([]int{0, 1, 3}[rng.IntN(3)])
				for _, sh := range shapes {
					want := expected(ks, sh.r, sh.reverse, sh.limit, sh.after)
					ropts := []client.ReadOption{batch, client.Limit(sh.limit)}
					if sh.reverse {
						ropts = append(ropts, client.Reverse())
					}
					if sh.after != nil {
						ropts = append(ropts, client.ResumeAfter(sh.after))
					}
					got, err := testkit.CollectErr(tbl.Scan(context.Background(), sh.r, ropts...))
					if strings.HasPrefix(sh.name, "inverted") || cursorOutside(sh.r, sh.after) {
						// Refused before anything is read, whatever the faults: a descending scan is
						// the ascending range and Reverse(), and a cursor resumes the query that
						// returned it, so one outside the range is another query's.
						if len(got) != 0 || !errors.Is(err, client.ErrInvalidArgument) {
							t.Fatalf("seed %d, %s: %d rows, %v; want ErrInvalidArgument", seed, sh.name, len(got), err)
						}
						continue
					}
					if cerr := checkScan(want, got, err); cerr != nil {
						t.Fatalf("seed %d, %s: %v (scan error: %v)", seed, sh.name, cerr, err)
					}
					if err != nil && !injectedErr(err) {
						t.Fatalf("seed %d, %s: unexpected error %v", seed, sh.name, err)
					}
					total.scans++
					total.rows += int64(len(got))
					if err == nil {
						total.exact++
					} else {
						total.failed++
					}
				}
				// One paging run per seed, its shape drawn: pages cost a fan-out each.
				r := []client.Range{{}, client.PrefixRange([]byte("u1"))}[rng.IntN(2)]
				reverse := rng.IntN(2) == 0
				size := []int{1, 13, 50}[rng.IntN(3)]
				if size == 1 {
					r = client.PrefixRange([]byte("u05/")) // a page per row: keep it short
				}
				pages, rows, err := pageThrough(tbl, r, reverse, size, expected(ks, r, reverse, 0, nil))
				if err != nil {
					t.Fatalf("seed %d, paging %q by %d reverse=%v: %v", seed, r.Start, size, reverse, err)
				}
				total.pages += int64(pages)
				total.rows += int64(rows)
				total.injected += f.Stats().Injected()
			}
		})
	}
	t.Logf("%d scans (%d exact, %d ended with an error) and %d pages, %d rows checked, %d faults injected",
		total.scans, total.exact, total.failed, total.pages, total.rows, total.injected)
	if total.failed == 0 || total.exact == 0 || total.injected == 0 {
		t.Fatal("the fault mix produced no failed scans or no clean ones: the test proves nothing")
	}
}

// pageThrough reads r in pages of size rows with ResumeAfter, retrying a page that failed (as a
// caller would), and checks every page and the whole against want.
func pageThrough(tbl *client.Table, r client.Range, reverse bool, size int, want [][]byte) (pages, rows int, _ error) {
	var all [][]byte
	var cursor []byte
	for tries := 0; ; {
		opts := []client.ReadOption{client.Limit(size)}
		if reverse {
			opts = append(opts, client.Reverse())
		}
		if cursor != nil {
			opts = append(opts, client.ResumeAfter(cursor))
		}
		got, err := testkit.CollectErr(tbl.Scan(context.Background(), r, opts...))
		pages++
		rest := want[len(all):]
		if cerr := checkScan(rest[:min(size, len(rest))], got, err); cerr != nil {
			return pages, rows, fmt.Errorf("page %d after %q: %w (scan error %v)", pages, cursor, cerr, err)
		}
		rows += len(got)
		if err != nil {
			if !injectedErr(err) {
				return pages, rows, fmt.Errorf("page %d: unexpected error %w", pages, err)
			}
			if tries++; tries > 200 {
				return pages, rows, fmt.Errorf("page %d failed 200 times: %w", pages, err)
			}
			continue // the same page again: nothing of a failed page is kept
		}
		for _, row := range got {
			all = append(all, row.Key)
		}
		if len(got) < size {
			break
		}
		cursor = got[len(got)-1].Key
	}
	if len(all) != len(want) {
		return pages, rows, fmt.Errorf("pages gave %d rows, the reference has %d", len(all), len(want))
	}
	return pages, rows, nil
}

// truncating is a broken driver: its scans end quietly after a few rows. It exists to show that the
// checks above catch a silent short result; a checker that cannot fail would prove nothing.
type truncating struct {
	backends.Backend
	after int
}

func (b truncating) Scan(ctx context.Context, table string, r backends.Range, opts backends.ScanOptions) iter.Seq2[backends.Row, error] {
	return func(yield func(backends.Row, error) bool) {
		n := 0
		for row, err := range b.Backend.Scan(ctx, table, r, opts) {
			if n == b.after || !yield(row, err) || err != nil {
				return
			}
			n++
		}
	}
}

func TestScanCheckCatchesSilentLoss(t *testing.T) {
	ks := scanKeys()
	mem := newMemTable(t, "hash:8", ks)
	tbl := openOn(t, truncating{mem, 3})
	got, err := testkit.CollectErr(tbl.Scan(context.Background(), client.Range{}))
	if checkScan(expected(ks, client.Range{}, false, 0, nil), got, err) == nil {
		t.Fatalf("a driver that drops rows quietly passed the check (%d rows, error %v)", len(got), err)
	}
}
