// Package local is brine's embedded, persistent store: a backends.Backend in one file, on bbolt
// (go.etcd.io/bbolt), for development, tests, demos and single-machine use with no server.
//
// # Layout
//
// The file holds a bucket "brine" (format marker), a bucket "brine.tables" with one entry per table
// (its Meta, Families and SplitKeys, as JSON, and a numeric id), and one bucket per table, named after
// the id, whose keys are the row keys and whose values are rows: all cells of the row in a compact
// encoding (see codec.go). Naming data buckets by id means a table dropped and recreated while a
// write is in flight never receives that write.
//
// # Semantics
//
// As package memory, which is the reference: a column keeps its TableOptions.MaxVersions newest
// versions, one by default (a write older than every kept version is dropped, an equal timestamp
// replaces; timestamp 0 is the current time in milliseconds). Deleting columns removes them outright, with no delete markers. When a
// table has Families, writes, reads and scans naming other families are refused with
// backends.ErrInvalidArgument (as HBase);
// a table without Families takes any family. A delete naming a cell with an empty qualifier deletes
// the whole family. Keys are 1 to MaxKeyLen bytes (32767, HBase's limit, below bbolt's 32768). A row
// is at most 256 MiB encoded. SplitKeys cannot split a single file; they are recorded and Regions
// returns them, so tools can show how rows would spread over regions on a server.
//
// # Transactions
//
// Each Apply is one bbolt write transaction, shared with the Apply calls that arrive while the
// previous transaction commits (group commit: one commit, and one fsync unless WithNoSync, for many
// concurrent writers, with no added delay for a lone one). A mutation's rows are validated and
// encoded before the transaction, so concurrent writers overlap that work. Cells of timestamp 0 are
// stamped with the time their Apply prepared them, unless an earlier transaction gave a later stamp:
// then the transaction stamps them (and encodes them again), so that a write that starts after
// another returned replaces it; CheckAndMutate and Increment stamp inside their transaction. Each
// row is written whole, so a mutation is atomic on its row; if the commit fails, every mutation of
// the call fails.
//
// Scans read in batches, one short read transaction each, resuming after the last key, and yield
// copies: bbolt's memory is valid only inside a transaction, and a transaction held while a slow
// consumer works would stop the file from growing (a writer needing a larger memory map waits for all
// readers).
package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"
	bberrors "go.etcd.io/bbolt/errors"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/backends/driverkit"
)

// MaxKeyLen is the longest row key accepted: HBase's limit, so that keys that work here work there.
const MaxKeyLen = 32767

// maxRowBytes caps one encoded row; bbolt stores big values on overflow pages, rewritten whole on
// every change of the row.
const maxRowBytes = 256 << 20

// Errors of this package. Table, key and argument errors wrap the backends sentinels.
var (
	// errClosed fails operations on a closed Backend.
	errClosed = fmt.Errorf("local: store: %w", backends.ErrClosed)
	// ErrReadOnly is returned by writes to a Backend opened WithReadOnly.
	ErrReadOnly = errors.New("local: store opened read-only")
	// ErrNotStore means the file is a bbolt database that brine did not create, or of a newer format.
	ErrNotStore = errors.New("local: not a brine local store")
	// ErrLocked is returned by Open when the file is still open elsewhere past the lock timeout, in
	// another process or through another Backend of this one (the error says which): the embedded
	// store is single-process with one Backend per file (bbolt's file lock), so a second process
	// must wait, a program must share one Backend, or use a store many processes share (HBase,
	// Tablestore).
	ErrLocked = errors.New("local: the store file is already open, and the embedded store is single-process")
)

const (
	formatBucket = "brine"
	formatKey    = "format"
	formatValue  = "brine-local/1"
	tablesBucket = "brine.tables"
)

// Config configures Open.
type Config struct {
	// Path is the store's file, created when absent. Required.
	Path string
	// NoSync skips fsync at commit: much faster writes, but a crash of the machine (not of the
	// process) may lose recent writes or corrupt the file. For demos, tests and data that can be
	// rebuilt.
	NoSync bool
	// ReadOnly opens the file with a shared lock, so several processes may read it; writes fail with
	// ErrReadOnly.
	ReadOnly bool
	// LockTimeout is how long Open waits for the file to be released (the file is locked
	// exclusively while open for writing); 0 means 1 s. A deadline of Open's ctx that comes sooner
	// bounds the wait instead.
	LockTimeout time.Duration
	// InitialMmapSize is the initial size of the file's memory map in bytes; 0 means 1 GiB on 64-bit
	// platforms (address space only), negative none (the map grows with the file). While the file
	// fits in the map, writers never wait for readers to remap it.
	InitialMmapSize int
	// ScanBatch is the rows one scan reads per read transaction when ScanOptions.BatchSize is 0; 0
	// means 512.
	ScanBatch int
}

// config is Config with its defaults applied, and the settings tests reach (fillPercent).
type config struct {
	noSync      bool
	readOnly    bool
	lockTimeout time.Duration
	mmapSize    int
	fillPercent float64
	scanBatch   int
}

// config applies c's defaults; a deadline of ctx sooner than the lock timeout bounds the wait.
func (c Config) config(ctx context.Context) config {
	cfg := config{noSync: c.NoSync, readOnly: c.ReadOnly, lockTimeout: c.LockTimeout, mmapSize: c.InitialMmapSize,
		fillPercent: 0.9, scanBatch: c.ScanBatch}
	if cfg.lockTimeout <= 0 {
		cfg.lockTimeout = time.Second
	}
	if d, ok := ctx.Deadline(); ok {
		cfg.lockTimeout = max(time.Millisecond, min(cfg.lockTimeout, time.Until(d)))
	}
	switch {
	case cfg.mmapSize == 0 && strconv.IntSize == 64:
		cfg.mmapSize = 1 << 30
	case cfg.mmapSize < 0:
		cfg.mmapSize = 0
	}
	if cfg.scanBatch <= 0 {
		cfg.scanBatch = 512
	}
	return cfg
}

// Backend is a local store; it implements backends.Backend and backends.RegionLister. Methods are safe
// for concurrent use. Only one process may open a file for writing at a time.
type Backend struct {
	db  *bbolt.DB
	cfg config

	// mu guards tables, a copy of the tables bucket; CreateTable and DeleteTable hold it across their
	// transaction so the copy never disagrees with the file.
	mu     sync.RWMutex
	tables map[string]*tableInfo

	closed atomic.Bool
	gc     groupCommit
	clock  stampClock // stamps writes, inside their transaction
}

var (
	_ backends.Backend      = (*Backend)(nil)
	_ backends.RegionLister = (*Backend)(nil)
)

// tableInfo is a table's entry in the tables bucket.
type tableInfo struct {
	ID       uint64   `json:"id"`
	Families []string `json:"families,omitempty"`
	// Versions kept per column; absent (files written before versions were kept) means one.
	MaxVersions int               `json:"max_versions,omitempty"`
	SplitKeys   [][]byte          `json:"split_keys,omitempty"`
	Meta        map[string]string `json:"meta,omitempty"`

	bucket   []byte          // data bucket name, from ID
	families map[string]bool // nil: any family
}

func (ti *tableInfo) init() {
	ti.bucket = []byte("t/" + strconv.FormatUint(ti.ID, 10))
	if len(ti.Families) > 0 {
		ti.families = make(map[string]bool, len(ti.Families))
		for _, f := range ti.Families {
			ti.families[f] = true
		}
	}
}

// Open opens or creates the store at cfg.Path. ctx bounds the wait for a file another holder has
// open (Config.LockTimeout).
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	path := cfg.Path
	if path == "" {
		return nil, fmt.Errorf("local: open: %w: no Path", backends.ErrInvalidArgument)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: open %s: %w", path, err)
	}
	return open(path, cfg.config(ctx))
}

// open is Open with the settings decided.
func open(path string, cfg config) (*Backend, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:  cfg.lockTimeout,
		NoSync:   cfg.noSync,
		ReadOnly: cfg.readOnly,
		// The freelist is rebuilt when the file is opened instead of written at every commit: cheaper
		// commits for big files, and no durability cost.
		NoFreelistSync:  true,
		FreelistType:    bbolt.FreelistMapType,
		InitialMmapSize: cfg.mmapSize,
	})
	if err != nil {
		if errors.Is(err, bberrors.ErrTimeout) && heldHere.has(path) {
			return nil, fmt.Errorf("local: open %s: %w: this process has it open through another Backend; share that one (waited %v: %w)",
				path, ErrLocked, cfg.lockTimeout, err)
		}
		if errors.Is(err, bberrors.ErrTimeout) {
			return nil, fmt.Errorf("local: open %s: %w: another process has it open (waited %v: %w)", path, ErrLocked, cfg.lockTimeout, err)
		}
		return nil, fmt.Errorf("local: open %s: %w", path, err)
	}
	s := &Backend{db: db, cfg: cfg, tables: map[string]*tableInfo{}}
	s.gc.fill, s.gc.clock = cfg.fillPercent, &s.clock
	if err := s.load(); err != nil {
		db.Close()
		return nil, fmt.Errorf("local: open %s: %w", path, err)
	}
	heldHere.add(s, path)
	return s, nil
}

// load checks the format marker (writing it into a new file) and reads the tables bucket.
func (s *Backend) load() error {
	check := func(tx *bbolt.Tx) (fresh bool, err error) {
		if fb := tx.Bucket([]byte(formatBucket)); fb != nil {
			if v := fb.Get([]byte(formatKey)); string(v) != formatValue {
				return false, fmt.Errorf("%w: format %q, this version reads %q", ErrNotStore, v, formatValue)
			}
			return false, nil
		}
		var other bool
		_ = tx.ForEach(func([]byte, *bbolt.Bucket) error { other = true; return nil })
		if other {
			return false, ErrNotStore
		}
		return true, nil
	}
	if !s.cfg.readOnly {
		err := s.db.Update(func(tx *bbolt.Tx) error {
			fresh, err := check(tx)
			if err != nil || !fresh {
				return err
			}
			fb, err := tx.CreateBucket([]byte(formatBucket))
			if err != nil {
				return err
			}
			if err := fb.Put([]byte(formatKey), []byte(formatValue)); err != nil {
				return err
			}
			_, err = tx.CreateBucket([]byte(tablesBucket))
			return err
		})
		if err != nil {
			return err
		}
	}
	return s.db.View(func(tx *bbolt.Tx) error {
		if _, err := check(tx); err != nil {
			return err
		}
		tb := tx.Bucket([]byte(tablesBucket))
		if tb == nil {
			return nil // a new file opened read-only: no tables
		}
		return tb.ForEach(func(k, v []byte) error {
			ti := &tableInfo{}
			if err := json.Unmarshal(v, ti); err != nil {
				return fmt.Errorf("%w: table %q: %v", ErrNotStore, k, err)
			}
			ti.init()
			s.tables[string(k)] = ti
			return nil
		})
	})
}

// Path returns the file's path.
func (s *Backend) Path() string { return s.db.Path() }

// Close closes the file, after the transactions under way. Later calls fail with backends.ErrClosed.
func (s *Backend) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	defer heldHere.remove(s)
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("local: close: %w", err)
	}
	return nil
}

// dbErr maps bbolt's errors to this package's.
func dbErr(err error) error {
	switch {
	case errors.Is(err, bberrors.ErrDatabaseNotOpen):
		return fmt.Errorf("%w: %w", errClosed, err)
	case errors.Is(err, bberrors.ErrDatabaseReadOnly):
		return fmt.Errorf("%w: %w", ErrReadOnly, err)
	}
	return err
}

func (s *Backend) usable(write bool) error {
	if s.closed.Load() {
		return errClosed
	}
	if write && s.cfg.readOnly {
		return ErrReadOnly
	}
	return nil
}

func (s *Backend) table(name string) (*tableInfo, error) {
	s.mu.RLock()
	ti := s.tables[name]
	s.mu.RUnlock()
	if ti == nil {
		return nil, fmt.Errorf("local: table %q: %w", name, backends.ErrTableNotFound)
	}
	return ti, nil
}

// CreateTable creates a table.
func (s *Backend) CreateTable(ctx context.Context, name string, opts backends.TableOptions) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("local: create table %q: %w", name, err)
	}
	if err := s.usable(true); err != nil {
		return err
	}
	if name == "" {
		return fmt.Errorf("local: create table: %w: empty table name", backends.ErrInvalidArgument)
	}
	for _, f := range opts.Families {
		if f == "" {
			return fmt.Errorf("local: create table %q: %w: empty column family name", name, backends.ErrInvalidArgument)
		}
	}
	for i, k := range opts.SplitKeys {
		if len(k) == 0 || i > 0 && bytes.Compare(opts.SplitKeys[i-1], k) >= 0 {
			return fmt.Errorf("local: create table %q: %w: split keys must be non-empty and strictly ascending (key %d)",
				name, backends.ErrInvalidArgument, i)
		}
	}
	if opts.MaxVersions < 0 {
		return fmt.Errorf("local: create table %q: %w: negative MaxVersions", name, backends.ErrInvalidArgument)
	}
	ti := &tableInfo{Families: opts.Families, SplitKeys: opts.SplitKeys, Meta: opts.Meta, MaxVersions: opts.MaxVersions}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tables[name] != nil {
		return fmt.Errorf("local: create table %q: %w", name, backends.ErrTableExists)
	}
	var enc []byte
	err := s.db.Update(func(tx *bbolt.Tx) error {
		tb := tx.Bucket([]byte(tablesBucket))
		id, err := tb.NextSequence()
		if err != nil {
			return err
		}
		ti.ID = id
		// A JSON round trip gives the cached copy its own maps and slices.
		if enc, err = json.Marshal(ti); err != nil {
			return err
		}
		ti.init()
		if _, err := tx.CreateBucket(ti.bucket); err != nil {
			return err
		}
		return tb.Put([]byte(name), enc)
	})
	if err != nil {
		return fmt.Errorf("local: create table %q: %w", name, dbErr(err))
	}
	cached := &tableInfo{}
	if err := json.Unmarshal(enc, cached); err != nil {
		return fmt.Errorf("local: create table %q: %w", name, err)
	}
	cached.init()
	s.tables[name] = cached
	return nil
}

// DeleteTable removes a table and its rows.
func (s *Backend) DeleteTable(ctx context.Context, name string) error {
	ti, unlock, err := s.lockTable(ctx, "delete table", name)
	if err != nil {
		return err
	}
	defer unlock()
	err = s.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.DeleteBucket(ti.bucket); err != nil && !errors.Is(err, bberrors.ErrBucketNotFound) {
			return err
		}
		return tx.Bucket([]byte(tablesBucket)).Delete([]byte(name))
	})
	if err != nil {
		return fmt.Errorf("local: delete table %q: %w", name, dbErr(err))
	}
	delete(s.tables, name)
	return nil
}

// Tables returns the tables' names, sorted.
func (s *Backend) Tables(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: tables: %w", err)
	}
	if err := s.usable(false); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.tables)), nil
}

// TableMeta returns a copy of the Meta the table was created with (never nil).
func (s *Backend) TableMeta(ctx context.Context, name string) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: table meta %q: %w", name, err)
	}
	if err := s.usable(false); err != nil {
		return nil, err
	}
	ti, err := s.table(name)
	if err != nil {
		return nil, err
	}
	m := maps.Clone(ti.Meta)
	if m == nil {
		m = map[string]string{}
	}
	return m, nil
}

// Regions returns the empty key followed by the split keys the table was created with: the regions
// the table would have on HBase.
func (s *Backend) Regions(ctx context.Context, name string) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: regions %q: %w", name, err)
	}
	if err := s.usable(false); err != nil {
		return nil, err
	}
	ti, err := s.table(name)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, len(ti.SplitKeys)+1)
	out = append(out, []byte{})
	for _, k := range ti.SplitKeys {
		out = append(out, bytes.Clone(k))
	}
	return out, nil
}

func checkKey(k []byte) error { return driverkit.CheckKey(k, MaxKeyLen) }
