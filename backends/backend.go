// Package backends is the contract between brine's user API (package client) and the store drivers
// below it (backends/local, backends/memory, backends/hbase, backends/tablestore), in the way
// database/sql/driver sits below database/sql: small, stable, and free of salting. A driver sees
// physical keys only; it never learns how they were salted.
//
// It holds the contract and nothing else: the Backend interface every driver implements, the
// optional interfaces RegionLister and Tuner, the types they take and return, and the sentinel errors
// callers branch on. The rules drivers share in applying it (key checks, version rules, filter
// evaluation, paging) are in backends/driverkit; the conformance suite that states it is
// backends/backendtest.
package backends

import (
	"context"
	"iter"
)

// Cell is one column value of a row.
//
// HBase maps it 1:1 (column family, qualifier, value, timestamp in milliseconds). Tablestore has no
// families: a driver maps (Family, Qualifier) to one attribute column name and refuses what cannot map.
type Cell struct {
	Family    string
	Qualifier string
	Value     []byte
	// Timestamp is the cell version in milliseconds since the Unix epoch. Zero on write means "let the
	// server choose"; writers that retry should set it so a repeated write is idempotent.
	Timestamp int64
}

// Row is a row key with its cells, sorted by family, then qualifier, then newest first (several
// versions of a column come only from a read asking for them). A driver returns physical keys; the
// client turns them back into logical keys before a caller sees them.
type Row struct {
	Key   []byte
	Cells []Cell
}

// Column names one column, or a whole family when Qualifier is empty.
type Column struct {
	Family    string
	Qualifier string
}

// Range is the half-open key interval [Start, End). A nil or empty Start means "from the first key",
// a nil or empty End means "to the last key".
type Range struct {
	Start []byte
	End   []byte
}

// Contains reports whether key lies in r.
func (r Range) Contains(key []byte) bool {
	if len(r.Start) > 0 && string(key) < string(r.Start) {
		return false
	}
	return len(r.End) == 0 || string(key) < string(r.End)
}

// TimeRange selects versions by timestamp: From <= Timestamp < To. A zero To means no upper bound;
// the zero TimeRange selects every version.
type TimeRange struct {
	From, To int64
}

// Contains reports whether ts lies in r.
func (r TimeRange) Contains(ts int64) bool { return ts >= r.From && (r.To == 0 || ts < r.To) }

// ReadOptions select what a read returns.
type ReadOptions struct {
	// Columns restricts the cells returned; empty means all columns.
	Columns []Column
	// MaxVersions is the most versions of each column returned, newest first; 0 means 1. A table
	// keeps TableOptions.MaxVersions of them.
	MaxVersions int
	// TimeRange keeps only versions stamped in it (applied before MaxVersions, as in HBase); the zero
	// TimeRange keeps all. A row with no cell left is not returned by a scan, and has no cells in a
	// read.
	TimeRange TimeRange
	// Filter, when not nil, keeps only the rows it passes (see Filter); drivers check it with driverkit.CheckRead.
	Filter *Filter
}

// ScanOptions control one physical range scan.
type ScanOptions struct {
	ReadOptions
	// Reverse returns rows in descending key order (from End, exclusive, down to Start, inclusive).
	Reverse bool
	// Limit is the most rows the scan returns; 0 means no limit. Drivers must not read much more than
	// this from the server (limit pushdown), since the fan-out passes the caller's limit to every bucket.
	Limit int
	// BatchSize is a hint for rows per server round trip; 0 lets the driver choose.
	BatchSize int
	// FirstBatch, when > 0, is a hint for a caller that may stop long before Limit (a fan-out bucket,
	// which the merge may need only a few rows of): the first round trip asks for FirstBatch rows and
	// each later one for as many rows as the scan has returned so far, up to the batch size. So the
	// first row comes back sooner, and a scan stopped early has read at most about twice what it
	// returned. 0 asks for full batches from the start. Drivers without round trips ignore it.
	FirstBatch int
}

// Mutation changes one row. With Delete false it writes Cells. With Delete true it deletes the columns
// named by Cells (Value ignored; an empty Qualifier names the whole family), or the whole row when
// Cells is empty. A cell of Timestamp 0 deletes every version of its column, stamped ahead of the
// store's clock too; a cell of Timestamp t > 0 deletes the one version stamped t (HBase's Delete of
// one version, Tablestore's DeleteOneVersion), and names a column, not a family.
type Mutation struct {
	Key    []byte
	Cells  []Cell
	Delete bool
}

// TableOptions describe a table to create.
type TableOptions struct {
	// Families are the column families to create (HBase); drivers without families ignore them.
	Families []string
	// SplitKeys pre-split the table: region/partition boundaries, sorted ascending.
	SplitKeys [][]byte
	// Meta is stored with the table and returned by TableMeta (brine keeps its salting spec here).
	Meta map[string]string
	// MaxVersions is how many versions of each column the table keeps, the newest; 0 means 1.
	MaxVersions int
	// FamilyOptions are per-family settings, keyed by a name in Families; a family without an entry
	// gets the driver's defaults (and MaxVersions). Drivers without families ignore them; client.CreateTable checks them
	// (driverkit.CheckFamilyOptions) whatever the store, so every store refuses the same bad input.
	FamilyOptions map[string]FamilyOptions
}

// Backend is what a store driver implements. Methods are safe for concurrent use. Errors that a caller
// must branch on wrap the sentinel errors of this package. Every method is required: the conformance
// suite (backends/backendtest) tests each one on every driver. The capabilities only some stores have
// are the optional interfaces RegionLister and Tuner.
type Backend interface {
	// CreateTable creates a table; ErrTableExists if it is there already.
	CreateTable(ctx context.Context, table string, opts TableOptions) error
	// DeleteTable removes a table and its data; ErrTableNotFound if it is not there.
	DeleteTable(ctx context.Context, table string) error
	// TableMeta returns the Meta stored at creation; ErrTableNotFound if the table is not there.
	TableMeta(ctx context.Context, table string) (map[string]string, error)
	// RewriteTableMeta replaces table's Meta with newMeta if the stored Meta equals old (key for key;
	// nil and empty are equal), atomically with respect to every other RewriteTableMeta: of two
	// rewrites from the same old, one fails with ErrMetaChanged. TableMeta returns newMeta from then
	// on, until the table is deleted (a table created again under the name starts from its own
	// Meta). ErrTableNotFound if the table is not there. It is how a table gains or loses an index
	// while it is in use.
	RewriteTableMeta(ctx context.Context, table string, old, newMeta map[string]string) error
	// Tables returns the names of the tables there are, sorted: every table a brine program can open,
	// whoever created it, and none of the driver's own bookkeeping tables.
	Tables(ctx context.Context) ([]string, error)

	// Read returns one row per key, rows[i] for keys[i]; a missing row has no Cells (its Key is still set).
	Read(ctx context.Context, table string, keys [][]byte, opts ReadOptions) ([]Row, error)
	// Apply applies mutations, each atomic on its row. rowErrs is nil when every mutation succeeded;
	// otherwise rowErrs[i] is the error of muts[i] (nil for the ones that succeeded). err reports a
	// failure of the whole call, in which case no mutation is known to have succeeded.
	Apply(ctx context.Context, table string, muts []Mutation) (rowErrs []error, err error)
	// Scan streams the rows of one physical range in key order. The sequence stops early when the
	// consumer stops or ctx is done; it yields at most one error, as its last element, which names
	// the scan and the table (the client adds neither when the table is the one its caller named).
	Scan(ctx context.Context, table string, r Range, opts ScanOptions) iter.Seq2[Row, error]

	// The atomic single-row operations, which the index protocol and the rebucket copy are built on
	// (HBase's checkAndMutate and increment, Tablestore's conditional update, a lock or transaction
	// on the embedded stores).

	// CheckAndMutate applies m (a put or a delete, as in Apply) to its row if cond holds there,
	// atomically; applied reports whether it did. Bad input (key, families, a put without cells) fails
	// before anything is sent.
	CheckAndMutate(ctx context.Context, table string, cond Condition, m Mutation) (applied bool, err error)
	// CheckAndMutateBatch does CheckAndMutate for each of ms: each row atomically, not the batch as a
	// whole; a store sends them together where it can (HBase: one Multi RPC per region, one
	// conditional action per row). applied[i] reports whether ms[i] was applied. rowErrs is nil when
	// every row got an answer; otherwise rowErrs[i] is the error of ms[i] (nil for the rows
	// answered), and such a row may have been applied when the error is a lost reply. err reports a
	// failure of the whole call (missing table, bad input, ctx done before any answer), with applied
	// and rowErrs nil.
	//
	// Input that cannot be sent as given fails the whole call before anything is sent: an empty or
	// too long key, a put without cells, a negative timestamp, two mutations of one row
	// (driverkit.CheckBatch). A family the table does not have, in the mutation or the
	// condition, fails that row alone with ErrInvalidArgument (HBase learns it from the server).
	CheckAndMutateBatch(ctx context.Context, table string, ms []CondMutation) (applied []bool, rowErrs []error, err error)
	// Increment adds each delta to its counter atomically, stamps the new values with the store's
	// clock, and returns them, one cell per Increment in the order given. A column holding anything
	// but 8 bytes fails with ErrInvalidArgument and changes nothing.
	Increment(ctx context.Context, table string, key []byte, incs []Increment) ([]Cell, error)

	// Close releases the driver's resources.
	Close() error
}

// RegionLister is implemented by drivers that can say how a table is split on the server, so tools can
// report how rows spread over regions/partitions. It is optional (Tablestore has no such call): tools
// fall back on the split keys, and the conformance suite skips its tests on a driver without it.
type RegionLister interface {
	// Regions returns the start keys of the table's regions, sorted; the first is empty.
	// ErrTableNotFound if the table is not there.
	Regions(ctx context.Context, table string) ([][]byte, error)
}
