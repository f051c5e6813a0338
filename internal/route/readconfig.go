package route

import (
	"slices"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
	"github.com/brine-kv/brine/keys"
)

// ReadConfig is what client's ReadOptions set for a Get, GetMany or Scan.
type ReadConfig struct {
	Read      backends.ReadOptions
	Limit     int
	Reverse   bool
	BatchSize int
	After     []byte // ResumeAfter's cursor
	Buckets   []int  // nil: every bucket
}

// Resume narrows r to what follows the cursor in scan order.
func (c ReadConfig) Resume(r backends.Range) backends.Range {
	if c.After == nil {
		return r
	}
	if c.Reverse {
		// Descending: the next rows are the ones strictly below the cursor.
		if len(r.End) == 0 || string(c.After) < string(r.End) {
			r.End = c.After
		}
		if len(r.End) == 0 {
			// Nothing is below the empty key; an empty End would mean "unbounded".
			r.Start, r.End = []byte{0}, []byte{0}
		}
		return r
	}
	next := keys.Successor(c.After)
	if string(next) > string(r.Start) {
		r.Start = next
	}
	return r
}

// Scans start every bucket with a small batch that grows (backends.ScanOptions.FirstBatch): the merge
// needs every bucket's first row before it yields one, so a full first batch per bucket is what a
// fan-out's first row waited for.
const scanFirstBatch = 8

// firstBatch is the first round trip's rows for each of n bucket scans. With a limit, the buckets
// share about limit rows, so each starts at half its share and grows only if the merge takes more;
// a single bucket owes exactly the limit, which the driver asks for at once.
func (c ReadConfig) firstBatch(buckets int) int {
	switch {
	case c.Limit == 0:
		return scanFirstBatch
	case buckets <= 1:
		return 0
	default:
		return max(1, c.Limit/(2*buckets))
	}
}

// prefetch is each bucket's read-ahead in a scan over n buckets. With a limit, it is an eighth of a
// bucket's share of the limit, at least one row: with one, a bucket hands a row over only when the
// merge takes the one before, so the driver sends its next round trip only when the merge needs a
// row past the ones received, and with growing batches a bucket reads at most about twice what the
// merge took from it. A larger limit affords a little read-ahead (at most a quarter of the limit in
// all), and needs it: a row handed over alone costs the merge a goroutine wake-up.
func (c ReadConfig) prefetch(def, buckets int) int {
	if c.Limit > 0 {
		return min(def, max(1, c.Limit/(8*max(1, buckets))))
	}
	return def
}

// PrintedKeys makes a KeyRegexFilter in c match keys as ks prints them (keys.Schema.Format),
// failing keys ks cannot decode; with no schema, or no such filter, c as it is.
func (c ReadConfig) PrintedKeys(ks *keys.Schema) ReadConfig {
	if ks == nil || !driverkit.Has(c.Read.Filter, backends.FilterKeyRegex) {
		return c
	}
	text := func(key []byte) ([]byte, bool) {
		s, err := ks.Format(key)
		return []byte(s), err == nil
	}
	bound := driverkit.WithKeyText(*c.Read.Filter, text)
	c.Read.Filter = &bound
	return c
}

// withColumns is c reading cols too, its own Columns left as they are.
func (c ReadConfig) withColumns(cols ...backends.Column) ReadConfig {
	c.Read.Columns = append(slices.Clip(c.Read.Columns), cols...)
	return c
}
