package client

import (
	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
)

// ReadOption configures Get, GetMany and Scan. Options that make no sense for a call (Limit on Get)
// are ignored by it. Only this package makes them (Columns, Limit, ...): as bigtable's, the
// interface's one method is unexported.
type ReadOption interface {
	applyRead(*route.ReadConfig)
}

// readOption is every ReadOption: a function of the read's configuration.
type readOption func(*route.ReadConfig)

func (f readOption) applyRead(c *route.ReadConfig) { f(c) }

// readConfig is what opts set, KeyRegexFilter matching keys as ks prints them (keys.Schema.Format;
// nil: the key's bytes).
func readConfig(ks *keys.Schema, opts []ReadOption) route.ReadConfig {
	if len(opts) == 0 {
		return route.ReadConfig{} // the options would move it to the heap: a Get without any allocates none
	}
	cfg := new(route.ReadConfig)
	for _, o := range opts {
		o.applyRead(cfg)
	}
	return cfg.PrintedKeys(ks)
}

// Columns restricts the cells returned to these columns (a Column with no Qualifier selects a family).
func Columns(cols ...Column) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.Read.Columns = append(c.Read.Columns, cols...) })
}

// Families restricts the cells returned to these column families.
func Families(families ...string) ReadOption {
	return readOption(func(c *route.ReadConfig) {
		for _, f := range families {
			c.Read.Columns = append(c.Read.Columns, Column{Family: f})
		}
	})
}

// MaxVersions returns up to n versions of each column, newest first (n <= 1: the newest only). A
// table keeps TableConfig.MaxVersions of them.
func MaxVersions(n int) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.Read.MaxVersions = max(0, n) })
}

// TimeRange returns only versions stamped in [from, to), in milliseconds (to 0: no upper bound),
// before MaxVersions applies, as in HBase. A row with no version in the range is skipped by Scan and
// is ErrNotFound to Get.
func TimeRange(from, to int64) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.Read.TimeRange = backends.TimeRange{From: from, To: to} })
}

// Limit returns at most n rows (n <= 0: no limit). The limit is pushed down: no bucket reads more rows
// than n.
func Limit(n int) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.Limit = max(0, n) })
}

// Reverse returns rows in descending logical key order.
func Reverse() ReadOption {
	return readOption(func(c *route.ReadConfig) { c.Reverse = true })
}

// BatchSize hints how many rows each bucket fetches per server round trip.
func BatchSize(n int) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.BatchSize = max(0, n) })
}

// Buckets restricts a Scan to these buckets of the table's salter, so that parallel readers can split
// a table by bucket as MapReduce splits an HBase table by region: each bucket's rows come in logical
// key order, and the buckets 0 to Salter().Buckets()-1 together are the whole scan. A bucket out of
// that range, or a table in the middle of a rebucket (its rows are under two salters), fails the
// scan with ErrInvalidArgument.
func Buckets(b ...int) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.Buckets = append(c.Buckets[:0:0], b...) })
}

// ResumeAfter continues a scan after the row with this logical key (exclusive) in the scan's own
// direction: the key of the last row a page returned is the whole cursor.
func ResumeAfter(cursor []byte) ReadOption {
	return readOption(func(c *route.ReadConfig) { c.After = cursor })
}
