//go:build integration

package integration

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/brine-kv/brine/internal/testkit"
)

// regionCounts counts, server-side, the rows of every region of table: the regions come from
// hbase:meta and each one's key range is scanned raw.
func (e *hbaseEnv) regionCounts(t *testing.T, table string) []int {
	t.Helper()
	starts, err := e.backend.Regions(testkit.Context(t, time.Minute), table)
	if err != nil {
		t.Fatalf("Regions(%s): %v", table, err)
	}
	counts := make([]int, len(starts))
	for i, start := range starts {
		var stop []byte
		if i+1 < len(starts) {
			stop = starts[i+1]
		}
		counts[i] = len(rawScan(t, e.raw, table, start, stop))
	}
	return counts
}

func maxMean(counts []int) (maxN int, ratio float64, at int) {
	total := 0
	for i, n := range counts {
		total += n
		if n > maxN {
			maxN, at = n, i
		}
	}
	if total == 0 {
		return 0, 0, 0
	}
	return maxN, float64(maxN) / (float64(total) / float64(len(counts))), at
}

// TestSpreadMonotonicKeys: a monotonic key sequence (big-endian uint64 counters, like timestamps) is
// the textbook hotspot. Through a hash:16 table it spreads over all 16 regions; the same keys in an
// unsalted table pre-split into 16 regions at even first-byte bounds all land in one region.
func TestSpreadMonotonicKeys(t *testing.T) {
	const rows, regions = 20_000, 16
	e := openHBase(t)
	keys := make([][]byte, rows)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64(nil, uint64(1_700_000_000_000+i))
	}

	tbl := e.salted(t, "hash:16", 0)
	writeBrine(t, tbl, keys)
	salted := e.regionCounts(t, tbl.Name())

	var splits [][]byte
	for i := 1; i < regions; i++ {
		splits = append(splits, []byte{byte(i * 256 / regions)})
	}
	ref := e.unsalted(t, splits)
	writeRaw(t, e.raw, ref, keys)
	unsalted := e.regionCounts(t, ref)

	sMax, sRatio, _ := maxMean(salted)
	_, uRatio, uAt := maxMean(unsalted)
	t.Logf("SPREAD salted hash:16 regions=%d max/mean=%.3f ; unsalted max/mean=%.1f (all rows in region %d)",
		len(salted), sRatio, uRatio, uAt)
	t.Logf("rows per region: salted %v (max %d, mean %.1f); unsalted %v", salted, sMax, float64(rows)/float64(len(salted)), unsalted)

	if len(salted) != regions || len(unsalted) != regions {
		t.Fatalf("regions: salted %d, unsalted %d, want %d each", len(salted), len(unsalted), regions)
	}
	if sum(salted) != rows || sum(unsalted) != rows {
		t.Fatalf("rows counted: salted %d, unsalted %d, want %d each", sum(salted), sum(unsalted), rows)
	}
	for i, n := range salted {
		if n == 0 {
			t.Errorf("salted region %d holds no rows", i)
		}
	}
	if sRatio > 1.1 {
		t.Errorf("salted max/mean = %.3f, want <= 1.1 (%v)", sRatio, salted)
	}
	if unsalted[uAt] != rows {
		t.Errorf("unsalted: region %d holds %d of %d rows, want all in one region (%v)", uAt, unsalted[uAt], rows, unsalted)
	}

	// The regions are the buckets: every row of salted region i carries bucket prefix i.
	s := tbl.Salter()
	starts, err := e.backend.Regions(testkit.Context(t, time.Minute), tbl.Name())
	if err != nil {
		t.Fatal(err)
	}
	for i, start := range starts {
		var stop []byte
		if i+1 < len(starts) {
			stop = starts[i+1]
		}
		for _, r := range rawScan(t, e.raw, tbl.Name(), start, stop) {
			logical, err := s.AppendLogical(nil, []byte(r.Key))
			if err != nil {
				t.Fatalf("region %d row %q: %v", i, r.Key, err)
			}
			if b, _ := s.Bucket(logical); b != i || !bytes.HasPrefix([]byte(r.Key), []byte{byte(i)}) {
				t.Fatalf("region %d holds row %q of bucket %d", i, r.Key, b)
			}
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
