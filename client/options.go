package client

import (
	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/keys"
)

// ReadOption configures Get, GetMany and Scan. Options that make no sense for a call (Limit on Get)
// are ignored by it.
type ReadOption func(*readConfig)

type readConfig struct {
	read      backends.ReadOptions
	limit     int
	reverse   bool
	batchSize int
	after     []byte
	buckets   []int // nil: every bucket
}

func newReadConfig(opts []ReadOption) readConfig {
	if len(opts) == 0 {
		return readConfig{} // the options would move it to the heap: a Get without any allocates none
	}
	cfg := new(readConfig)
	for _, o := range opts {
		o(cfg)
	}
	return *cfg
}

// Columns restricts the cells returned to these columns (a Column with no Qualifier selects a family).
func Columns(cols ...Column) ReadOption {
	return func(c *readConfig) { c.read.Columns = append(c.read.Columns, cols...) }
}

// Families restricts the cells returned to these column families.
func Families(families ...string) ReadOption {
	return func(c *readConfig) {
		for _, f := range families {
			c.read.Columns = append(c.read.Columns, Column{Family: f})
		}
	}
}

// MaxVersions returns up to n versions of each column, newest first (n <= 1: the newest only). A
// table keeps TableConfig.MaxVersions of them.
func MaxVersions(n int) ReadOption { return func(c *readConfig) { c.read.MaxVersions = max(0, n) } }

// TimeRange returns only versions stamped in [from, to), in milliseconds (to 0: no upper bound),
// before MaxVersions applies, as in HBase. A row with no version in the range is skipped by Scan and
// is ErrNotFound to Get.
func TimeRange(from, to int64) ReadOption {
	return func(c *readConfig) { c.read.TimeRange = backends.TimeRange{From: from, To: to} }
}

// Limit returns at most n rows (n <= 0: no limit). The limit is pushed down: no bucket reads more rows
// than n.
func Limit(n int) ReadOption { return func(c *readConfig) { c.limit = max(0, n) } }

// Reverse returns rows in descending logical key order.
func Reverse() ReadOption { return func(c *readConfig) { c.reverse = true } }

// BatchSize hints how many rows each bucket fetches per server round trip.
func BatchSize(n int) ReadOption { return func(c *readConfig) { c.batchSize = max(0, n) } }

// Buckets restricts a Scan to these buckets of the table's salter, so that parallel readers can split
// a table by bucket as MapReduce splits an HBase table by region: each bucket's rows come in logical
// key order, and the buckets 0 to Salter().Buckets()-1 together are the whole scan. A bucket out of
// that range, or a table in the middle of a rebucket (its rows are under two salters), fails the
// scan with ErrInvalidArgument.
func Buckets(b ...int) ReadOption {
	return func(c *readConfig) { c.buckets = append(c.buckets[:0:0], b...) }
}

// ResumeAfter continues a scan after the row with this logical key (exclusive) in the scan's own
// direction: the key of the last row a page returned is the whole cursor.
func ResumeAfter(cursor []byte) ReadOption {
	return func(c *readConfig) { c.after = cursor }
}

// resume narrows r to what follows the cursor in scan order.
func (c readConfig) resume(r Range) Range {
	if c.after == nil {
		return r
	}
	if c.reverse {
		// Descending: the next rows are the ones strictly below the cursor.
		if len(r.End) == 0 || string(c.after) < string(r.End) {
			r.End = c.after
		}
		if len(r.End) == 0 {
			// Nothing is below the empty key; an empty End would mean "unbounded".
			r.Start, r.End = []byte{0}, []byte{0}
		}
		return r
	}
	next := keys.Successor(c.after)
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
func (c readConfig) firstBatch(buckets int) int {
	switch {
	case c.limit == 0:
		return scanFirstBatch
	case buckets <= 1:
		return 0
	default:
		return max(1, c.limit/(2*buckets))
	}
}

// prefetch is each bucket's read-ahead in a scan over n buckets. With a limit, it is an eighth of a
// bucket's share of the limit, at least one row: with one, a bucket hands a row over only when the
// merge takes the one before, so the driver sends its next round trip only when the merge needs a
// row past the ones received, and with growing batches a bucket reads at most about twice what the
// merge took from it. A larger limit affords a little read-ahead (at most a quarter of the limit in
// all), and needs it: a row handed over alone costs the merge a goroutine wake-up.
func (c readConfig) prefetch(def, buckets int) int {
	if c.limit > 0 {
		return min(def, max(1, c.limit/(8*max(1, buckets))))
	}
	return def
}
