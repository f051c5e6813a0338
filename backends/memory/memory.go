// Package memory is brine's in-memory backends.Backend: the reference implementation of the driver
// contract and a fast test double (wrap it with backends/faulty to inject faults).
//
// Semantics follow HBase: a column keeps its TableOptions.MaxVersions newest versions (default one;
// an equal timestamp replaces, a write older than all kept versions is ignored), timestamp 0 means
// "now" in milliseconds, and deleting columns removes them outright (no delete markers, so a later
// write with any timestamp is visible again). When a table is created with Families, cells of other
// families are refused with backends.ErrInvalidArgument in writes, reads and scans, as HBase refuses
// them; a table created without
// Families accepts any family, as Tablestore does. A delete naming a cell with an empty Qualifier
// deletes that whole family, matching backends.Column. Keys are 1 to MaxKeyLen bytes.
//
// Nothing is persisted; the data lives until Close.
package memory

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/google/btree"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// MaxKeyLen is the longest row key accepted, HBase's limit (Short.MAX_VALUE), so that code tested here
// does not meet a surprise on a server.
const MaxKeyLen = 32767

// errClosed fails every call after Close.
var errClosed = fmt.Errorf("memory: %w", backends.ErrClosed)

// Option configures a Backend.
type Option func(*Backend)

// WithClock sets the clock that stamps cells written with timestamp 0 (default time.Now).
func WithClock(now func() time.Time) Option { return func(b *Backend) { b.now = now } }

// WithScanBatch sets how many rows a scan copies per lock acquisition when ScanOptions.BatchSize is 0
// (default 256).
func WithScanBatch(n int) Option {
	return func(b *Backend) {
		if n > 0 {
			b.scanBatch = n
		}
	}
}

// Backend is an in-memory backends.Backend. The zero value is not usable; call New.
type Backend struct {
	now       func() time.Time
	scanBatch int

	mu     sync.RWMutex // guards tables and closed
	tables map[string]*table
	closed bool
}

var (
	_ backends.Backend      = (*Backend)(nil)
	_ backends.RegionLister = (*Backend)(nil)
)

// New returns an empty Backend.
func New(opts ...Option) *Backend {
	b := &Backend{now: time.Now, scanBatch: 256, tables: map[string]*table{}}
	for _, o := range opts {
		o(b)
	}
	return b
}

type table struct {
	families map[string]bool // nil: any family
	versions int             // kept per column
	splits   [][]byte

	mu      sync.RWMutex // guards rows, meta and dropped
	meta    map[string]string
	rows    *btree.BTreeG[*row]
	dropped bool
	stamp   int64 // the last stamp given to cells of timestamp 0
}

// row is immutable once in the tree: Apply replaces it whole, so scans and reads may use a row after
// releasing the lock.
type row struct {
	key   []byte
	cells []backends.Cell // sorted by family, qualifier; one per column; never empty
}

func lessRow(a, b *row) bool { return bytes.Compare(a.key, b.key) < 0 }

func (b *Backend) table(name string) (*table, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, errClosed
	}
	t, ok := b.tables[name]
	if !ok {
		return nil, fmt.Errorf("memory: table %q: %w", name, backends.ErrTableNotFound)
	}
	return t, nil
}

// CreateTable creates an empty table.
func (b *Backend) CreateTable(ctx context.Context, name string, opts backends.TableOptions) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: create table %q: %w", name, err)
	}
	if name == "" {
		return fmt.Errorf("memory: create table: %w: empty table name", backends.ErrInvalidArgument)
	}
	fams, err := familySet(opts.Families)
	if err != nil {
		return fmt.Errorf("memory: create table %q: %w", name, err)
	}
	if err := checkSplitKeys(opts.SplitKeys); err != nil {
		return fmt.Errorf("memory: create table %q: %w", name, err)
	}
	if opts.MaxVersions < 0 {
		return fmt.Errorf("memory: create table %q: %w: negative MaxVersions", name, backends.ErrInvalidArgument)
	}
	t := &table{
		families: fams,
		versions: driverkit.Versions(opts.MaxVersions),
		meta:     maps.Clone(opts.Meta),
		splits:   cloneKeys(opts.SplitKeys),
		rows:     btree.NewG(32, lessRow),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed
	}
	if _, ok := b.tables[name]; ok {
		return fmt.Errorf("memory: create table %q: %w", name, backends.ErrTableExists)
	}
	b.tables[name] = t
	return nil
}

// DeleteTable removes a table. Scans under way on it end with ErrTableNotFound at their next batch.
func (b *Backend) DeleteTable(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: delete table %q: %w", name, err)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return errClosed
	}
	t, ok := b.tables[name]
	delete(b.tables, name)
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("memory: delete table %q: %w", name, backends.ErrTableNotFound)
	}
	t.mu.Lock()
	t.dropped = true
	t.rows = btree.NewG(2, lessRow) // let the rows go even while a scan holds t
	t.mu.Unlock()
	return nil
}

// TableMeta returns a copy of the table's Meta (never nil).
func (b *Backend) TableMeta(ctx context.Context, name string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: table meta %q: %w", name, err)
	}
	t, err := b.table(name)
	if err != nil {
		return nil, err
	}
	t.mu.RLock()
	m := maps.Clone(t.meta)
	t.mu.RUnlock()
	if m == nil {
		m = map[string]string{}
	}
	return m, nil
}

// Tables returns the tables' names, sorted.
func (b *Backend) Tables(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: tables: %w", err)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, errClosed
	}
	return slices.Sorted(maps.Keys(b.tables)), nil
}

// Regions returns the empty key followed by the table's split keys: the regions the table would
// have on HBase.
func (b *Backend) Regions(ctx context.Context, name string) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: regions %q: %w", name, err)
	}
	t, err := b.table(name)
	if err != nil {
		return nil, err
	}
	return append([][]byte{{}}, cloneKeys(t.splits)...), nil
}

// Read returns rows[i] for keys[i], copies the caller may keep and modify.
func (b *Backend) Read(ctx context.Context, name string, keys [][]byte, opts backends.ReadOptions) ([]backends.Row, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: read %q: %w", name, err)
	}
	for _, k := range keys {
		if err := checkKey(k); err != nil {
			return nil, fmt.Errorf("memory: read %q: %w", name, err)
		}
	}
	t, err := b.table(name)
	if err != nil {
		return nil, err
	}
	if err := driverkit.CheckRead(t.families, opts); err != nil {
		return nil, fmt.Errorf("memory: read %q: %w", name, err)
	}
	found := make([]*row, len(keys))
	t.mu.RLock()
	if t.dropped {
		t.mu.RUnlock()
		return nil, fmt.Errorf("memory: read %q: %w", name, backends.ErrTableNotFound)
	}
	for i, k := range keys {
		found[i], _ = t.rows.Get(&row{key: k})
	}
	t.mu.RUnlock()

	out := make([]backends.Row, len(keys))
	for i, k := range keys {
		out[i].Key = bytes.Clone(k)
		if found[i] != nil {
			out[i].Cells = copyCells(found[i].cells, opts)
		}
	}
	return out, nil
}

// Apply applies muts under one write lock. Invalid mutations are
// reported in rowErrs; the others are applied.
func (b *Backend) Apply(ctx context.Context, name string, muts []backends.Mutation) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: apply %q: %w", name, err)
	}
	t, err := b.table(name)
	if err != nil {
		return nil, err
	}
	var rowErrs []error
	fail := func(i int, err error) {
		if rowErrs == nil {
			rowErrs = make([]error, len(muts))
		}
		rowErrs[i] = err
	}
	// Prepare (validate, copy) outside the lock so concurrent writers overlap the work; the stamp is
	// given under it.
	prepared := make([]*change, len(muts))
	for i, m := range muts {
		c, err := prepare(t.families, t.versions, m)
		if err != nil {
			fail(i, fmt.Errorf("memory: apply %q: %w", name, err))
			continue
		}
		prepared[i] = c
	}

	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return nil, fmt.Errorf("memory: apply %q: %w", name, backends.ErrTableNotFound)
	}
	now := t.stampLocked(b.now)
	for _, c := range prepared {
		if c != nil {
			t.applyLocked(c, now)
		}
	}
	return rowErrs, nil
}

// cellsLocked returns the stored cells of a row (nil: none); t.mu is held.
func (t *table) cellsLocked(key []byte) []backends.Cell {
	if r, ok := t.rows.Get(&row{key: key}); ok {
		return r.cells
	}
	return nil
}

// stampLocked returns the stamp for the writes of this hold of t.mu (for writing): the clock, never
// below a stamp given before, so that a write that starts after another returned replaces it.
func (t *table) stampLocked(clock func() time.Time) int64 {
	t.stamp = max(t.stamp, clock().UnixMilli())
	return t.stamp
}

// applyLocked applies a prepared change, its cells of timestamp 0 stamped now; t.mu is held for
// writing.
func (t *table) applyLocked(c *change, now int64) {
	c.stamp(now, t.versions)
	old, _ := t.rows.Get(&row{key: c.key})
	var oldCells []backends.Cell
	if old != nil {
		oldCells = old.cells
	}
	cells := c.apply(oldCells, t.versions)
	switch {
	case len(cells) > 0:
		t.rows.ReplaceOrInsert(&row{key: c.key, cells: cells})
	case old != nil:
		t.rows.Delete(old)
	}
}

func familySet(fams []string) (map[string]bool, error) {
	if len(fams) == 0 {
		return nil, nil
	}
	set := make(map[string]bool, len(fams))
	for _, f := range fams {
		if f == "" {
			return nil, fmt.Errorf("%w: empty column family name", backends.ErrInvalidArgument)
		}
		set[f] = true
	}
	return set, nil
}

func checkSplitKeys(keys [][]byte) error {
	for i, k := range keys {
		if len(k) == 0 {
			return fmt.Errorf("%w: split key %d is empty", backends.ErrInvalidArgument, i)
		}
		if i > 0 && bytes.Compare(keys[i-1], k) >= 0 {
			return fmt.Errorf("%w: split keys not strictly ascending at %d", backends.ErrInvalidArgument, i)
		}
	}
	return nil
}

func cloneKeys(keys [][]byte) [][]byte {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		out[i] = bytes.Clone(k)
	}
	return out
}

// Close drops all tables; later calls fail with backends.ErrClosed.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.tables = nil
	return nil
}
