package bench

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/client"
	"github.com/brine-kv/brine/salting"
)

// Sections a run can do; Config.Sections picks some (spread needs the write tables, which are loaded
// untimed when write is not picked).
const (
	SectionSpread = "spread"
	SectionWrite  = "write"
	SectionScan   = "scan"
	SectionGet    = "get"
	SectionLimit  = "limit"
	// SectionCluster runs only when the write tables' regions are on more than one server, or when
	// Config.Cluster asks for it.
	SectionCluster = "cluster"
	// SectionIndex: Puts with 0, 1, 2 indexes and queries by index against a hand-written two-table
	// application. SectionFilter: a selective filter run by the store against reading every row.
	SectionIndex  = "index"
	SectionFilter = "filter"
	// SectionRebucket: a rebucket's copy of BulkRows rows from hash:8 to hash:16 against Import of
	// the same rows into a hash:16 table.
	SectionRebucket = "rebucket"
	// SectionVerify: compare.Tables over two equal tables of BulkRows rows against scanning both.
	SectionVerify = "verify"
	// SectionCopy: migrate.Copy of BulkRows rows, re-salted, against Import of the same rows, into
	// the store and into an embedded store.
	SectionCopy = "copy"
	// SectionSync: migrate.Sync of two tables of BulkRows rows that differ in 1% of them against
	// compare.Tables over the same two tables.
	SectionSync = "sync"
	// SectionShards: migrate.Copy of BulkRows rows by 2 shards at once against one unsharded copy.
	SectionShards = "shards"
)

// AllSections is every section, in the order they run.
var AllSections = []string{SectionWrite, SectionSpread, SectionGet, SectionScan, SectionLimit, SectionIndex, SectionRebucket, SectionVerify, SectionSync, SectionCopy, SectionShards, SectionFilter, SectionCluster}

// Config sizes a run. Zero values take the defaults of DefaultConfig where noted.
type Config struct {
	// ClientOptions are given to every client the run builds (e.g. a meter provider).
	ClientOptions []client.Option `json:"-"`

	Rows      int `json:"rows"`       // rows written per run, and held by every table
	ValueSize int `json:"value_size"` // bytes per value
	NaiveRows int `json:"naive_rows"` // rows of the one-Put-at-a-time loop (it is slow; rows/s is what counts)
	Gets      int `json:"gets"`       // keys read by both sides per repeat
	Repeat    int `json:"repeat"`     // measured runs per figure; medians are reported

	// Salt is the salting spec of the write, spread and get table.
	Salt string `json:"salt"`
	// ScanBuckets are the bucket counts of the fan-out scan tables (hash:N each).
	ScanBuckets []int `json:"scan_buckets"`
	// ScanRows is the length of the scanned logical range, in rows, centred in the data (0: all rows).
	ScanRows int `json:"scan_rows"`
	// ScanBatch is rows per round trip, for both sides' scans.
	ScanBatch int `json:"scan_batch"`
	// FirstRows is how many times each scan table's first-row figures are sampled (one raw scanner,
	// brine, and the floor of N raw scanners at once, in turn; each scan broken off at its first
	// row); medians are reported. A first row takes milliseconds, which one busy moment on a small
	// machine can double: the full scans' 3 repeats alone swing the ratios by ±20%.
	FirstRows int `json:"first_rows"`

	// Limits, LimitBuckets, LimitBatch: the limited scans, on a hash:LimitBuckets table with
	// client.BatchSize(LimitBatch). LimitPrefetch lists the client prefetch settings tried (0: the
	// client's default).
	Limits        []int `json:"limits"`
	LimitBuckets  int   `json:"limit_buckets"`
	LimitBatch    int   `json:"limit_batch"`
	LimitPrefetch []int `json:"limit_prefetch"`

	// RawConcurrency lists the concurrent-writer counts tried for raw batching; the fastest is used.
	RawConcurrency []int `json:"raw_concurrency"`
	// ImportWorkers is Table.Import's Workers (0: the client's default).
	ImportWorkers int `json:"import_workers"`
	// TuneRows is how many rows each point of that sweep writes (0: min(Rows, 20000)).
	TuneRows int `json:"tune_rows"`
	// BulkRows is how many rows each repeat of the bulk paths writes: the indexed Import (and the
	// plain Import it is held against), the rebucket copy, and the verify, sync, copy and shards
	// sections' tables (0: min(Rows, 20000)).
	BulkRows int `json:"bulk_rows"`

	// ServerPIDs are the store's server processes on this machine (read from Linux's /proc). When
	// given, the indexed Import, the rebucket copy, the sync and the shards sections also report the
	// CPU those processes spent per row, beside the same figure for what they are held against.
	ServerPIDs []int `json:"server_pids,omitempty"`

	// Settle is the longest the copy and exclusive sections wait, before each measure, for the
	// machine to be quiet (below 10% busy for half a second), so that what one measure leaves the
	// server to do (flushes, compactions) is not charged to the next (0: no wait).
	Settle time.Duration `json:"settle"`

	// Cluster runs the multi-server section even when every region is on one server.
	Cluster bool `json:"cluster,omitempty"`

	Seed     uint64   `json:"seed"`
	Sections []string `json:"sections"`

	Logger *slog.Logger `json:"-"`
}

// DefaultConfig finishes in a few minutes against a standalone HBase on a small machine.
func DefaultConfig() Config {
	return Config{
		Rows:           50_000,
		ValueSize:      64,
		NaiveRows:      2_000,
		Gets:           1_000,
		Repeat:         3,
		Salt:           "hash:16",
		ScanBuckets:    []int{1, 8, 32},
		ScanBatch:      256,
		FirstRows:      40,
		Limits:         []int{10, 100, 1000},
		LimitBuckets:   32,
		LimitBatch:     100,
		LimitPrefetch:  []int{0},
		RawConcurrency: []int{64, 256, 1024},
		Settle:         30 * time.Second,
		Seed:           1,
		Sections:       AllSections,
	}
}

// Validate refuses a configuration that cannot run, before any table is created.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("bench: %w: %s", backends.ErrInvalidArgument, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Rows < 1:
		return bad("rows must be >= 1, got %d", c.Rows)
	case c.ValueSize < 1:
		return bad("value size must be >= 1, got %d", c.ValueSize)
	case c.NaiveRows < 1:
		return bad("naive rows must be >= 1, got %d", c.NaiveRows)
	case c.Gets < 1:
		return bad("gets must be >= 1, got %d", c.Gets)
	case c.Repeat < 1:
		return bad("repeat must be >= 1, got %d", c.Repeat)
	case c.ScanRows < 0 || c.ScanRows > c.Rows:
		return bad("scan rows must be in [0, rows=%d], got %d", c.Rows, c.ScanRows)
	case c.ScanBatch < 1:
		return bad("scan batch must be >= 1, got %d", c.ScanBatch)
	case c.FirstRows < 1:
		return bad("first rows must be >= 1, got %d", c.FirstRows)
	case c.LimitBatch < 1:
		return bad("limit batch must be >= 1, got %d", c.LimitBatch)
	case c.Settle < 0:
		return bad("settle must be >= 0, got %s", c.Settle)
	case c.ImportWorkers < 0:
		return bad("import workers must be >= 0, got %d", c.ImportWorkers)
	case c.TuneRows < 0:
		return bad("tune rows must be >= 0, got %d", c.TuneRows)
	case c.BulkRows < 0:
		return bad("bulk rows must be >= 0, got %d", c.BulkRows)
	case len(c.RawConcurrency) == 0:
		return bad("no raw concurrency to try")
	}
	if _, err := salting.ParseSpec(c.Salt); err != nil {
		return fmt.Errorf("bench: salt: %w", err)
	}
	for _, n := range append(slices.Clone(c.ScanBuckets), c.LimitBuckets) {
		if n < 1 || n > 65536 {
			return bad("bucket counts must be in [1, 65536], got %d", n)
		}
	}
	for _, n := range c.Limits {
		if n < 1 {
			return bad("limits must be >= 1, got %d", n)
		}
	}
	for _, n := range c.LimitPrefetch {
		if n < 0 {
			return bad("limit prefetch must be >= 0, got %d", n)
		}
	}
	for _, n := range c.RawConcurrency {
		if n < 1 {
			return bad("raw concurrency must be >= 1, got %d", n)
		}
	}
	for _, s := range c.Sections {
		if !slices.Contains(AllSections, s) {
			return bad("unknown section %q (known: %v)", s, AllSections)
		}
	}
	if len(c.Sections) == 0 {
		return bad("no section to run")
	}
	return nil
}

func (c Config) has(section string) bool { return slices.Contains(c.Sections, section) }

func (c Config) tuneRows() int {
	if c.TuneRows > 0 {
		return c.TuneRows
	}
	return min(c.Rows, 20_000)
}

func (c Config) bulkRows() int {
	if c.BulkRows > 0 {
		return c.BulkRows
	}
	return min(c.Rows, 20_000)
}

// scanRange is the [lo, hi) row indices of the scanned range, centred in the data.
func (c Config) scanRange() (lo, hi int) {
	n := c.ScanRows
	if n == 0 {
		n = c.Rows
	}
	lo = (c.Rows - n) / 2
	return lo, lo + n
}
