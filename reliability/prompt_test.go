package reliability_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/brine-kv/brine/backends/faulty"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/internal/testkit"
)

// stuckFor is how long one bucket's scan blocks in I/O (honouring its ctx) in TestScanStopsPromptly;
// promptly means well under it.
const stuckFor = 2 * time.Second

// TestScanStopsPromptly: when a scan is over for the caller — the loop breaks, the limit is reached,
// another bucket fails — while one bucket's scan is blocked in I/O, Scan must return without waiting
// for that I/O: the bucket scans' context has to be cancelled, as a store driver (HBase, Tablestore)
// only stops a request in flight through its ctx. Otherwise a slow region server holds up every
// caller that has already got what it asked for, for as long as a request can take.
func TestScanStopsPromptly(t *testing.T) {
	const spec = "hash:8"
	ks := scanKeys()
	mem := newMemTable(t, spec, ks)
	buckets := physicalBuckets(t, spec)
	// The stuck bucket gives one row, then blocks before its second. It must hold none of the first
	// rows in key order: the merge rightly waits for a bucket whose next row it needs.
	salter := testkit.Salter(t, spec)
	first := map[int]bool{}
	for _, k := range ks[:4] {
		b, err := salter.Bucket(k)
		if err != nil {
			t.Fatal(err)
		}
		first[b] = true
	}
	var free []int
	for b := range buckets {
		if !first[b] {
			free = append(free, b)
		}
	}
	stuckB, failB := free[0], free[1]
	stuck := faulty.Rule{Fault: faulty.Delay, Ops: faulty.OpScan, Range: buckets[stuckB], Delay: stuckFor, MinRows: 1, AfterRows: 1}
	cases := []struct {
		name   string
		rules  []faulty.Rule
		opts   []client.ReadOption
		breakN int // break out of the loop after this many rows (0: read to the end)
		err    bool
	}{
		{"break", []faulty.Rule{stuck}, nil, 2, false},
		{"limit", []faulty.Rule{stuck}, []client.ReadOption{client.Limit(2)}, 0, false},
		// Another bucket fails after 3 rows and 100 ms, when the stuck one surely is.
		{"other-bucket-fails", []faulty.Rule{stuck,
			{Fault: faulty.Delay, Ops: faulty.OpScan, Range: buckets[failB], Delay: 100 * time.Millisecond, MinRows: 3, AfterRows: 3},
			{Fault: faulty.Error, Ops: faulty.OpScan, Range: buckets[failB], MinRows: 3, AfterRows: 3},
		}, nil, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tbl := openOn(t, faulty.New(mem, faulty.Config{Rules: tc.rules}))
			began := time.Now()
			n := 0
			var err error
			for _, e := range tbl.Scan(context.Background(), client.Range{}, tc.opts...) {
				if e != nil {
					err = e
					break
				}
				if n++; n == tc.breakN {
					break
				}
			}
			took := time.Since(began)
			if tc.err != errors.Is(err, faulty.ErrInjected) {
				t.Fatalf("scan ended with %v after %d rows", err, n)
			}
			if took > stuckFor/2 {
				t.Errorf("Scan returned %v after the caller was done (%d rows, error %v): it waited for a bucket's I/O in flight instead of cancelling it",
					took.Round(time.Millisecond), n, err)
			}
		})
	}
}

// TestCountByBucketStopsOnError: CountByBucket fails as soon as one bucket fails, without waiting
// for the others to finish (each may be a full scan of a large region).
func TestCountByBucketStopsOnError(t *testing.T) {
	const spec = "hash:8"
	mem := newMemTable(t, spec, scanKeys())
	buckets := physicalBuckets(t, spec)
	tbl := openOn(t, faulty.New(mem, faulty.Config{Rules: []faulty.Rule{
		{Fault: faulty.Delay, Ops: faulty.OpScan, Range: buckets[1], Delay: stuckFor, MinRows: 1, AfterRows: 1},
		{Fault: faulty.Delay, Ops: faulty.OpScan, Range: buckets[6], Delay: 100 * time.Millisecond},
		{Fault: faulty.Error, Ops: faulty.OpScan, Range: buckets[6]},
	}}))
	began := time.Now()
	_, err := tbl.CountByBucket(context.Background())
	if !errors.Is(err, faulty.ErrInjected) {
		t.Fatalf("CountByBucket = %v; want the injected error", err)
	}
	if took := time.Since(began); took > stuckFor/2 {
		t.Errorf("CountByBucket returned its error after %v: it waited for the other buckets' scans", took.Round(time.Millisecond))
	}
}
