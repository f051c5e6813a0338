package client

import "github.com/brine-kv/brine/backends"

// ReadOption configures Get, GetMany and Scan. Options that make no sense for a call (Limit on Get)
// are ignored by it.
type ReadOption func(*readConfig)

type readConfig struct {
	read      backends.ReadOptions
	limit     int
	reverse   bool
	batchSize int
	after     []byte
}

func newReadConfig(opts []ReadOption) readConfig {
	var cfg readConfig
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
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
	next := keySuccessor(c.after)
	if string(next) > string(r.Start) {
		r.Start = next
	}
	return r
}

// limitPrefetch caps each bucket's read-ahead in a scan with a limit: rows a bucket has read but the
// merge has not taken are wasted when the limit is reached, so a limit scan reads about limit +
// buckets × (one driver batch + limitPrefetch) rows instead of limit + buckets × prefetch. The
// driver's batch still gives each bucket a round trip's worth of read-ahead.
const limitPrefetch = 16

func (c readConfig) prefetch(def int) int {
	if c.limit > 0 {
		return min(def, limitPrefetch)
	}
	return def
}
