package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/internal/route"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Index metadata and bookkeeping columns (the index tables' columns are indexproto's).
const (
	metaIndexPrefix = indexproto.MetaPrefix // + index name: the definition (IndexConfig.spec)
	metaIndexFamily = indexproto.MetaFamily // the main table's family holding the version column
	versionQual     = IndexVersionQualifier
	indexFamily     = indexproto.EntryFamily
	statusQual      = indexproto.StatusQual
	mainKeyQual     = indexproto.MainKeyQual
	statusVerified  = indexproto.StatusVerified
	statusPending   = indexproto.StatusPending
)

// IndexVersionQualifier is the column, in a table's first family, where a table with indexes keeps
// the token of the row's last write. Reads return it only when their Columns name it.
const IndexVersionQualifier = indexproto.VersionQualifier

var (
	// ErrIndexNotFound: the table has no index of that name.
	ErrIndexNotFound = errors.New("brine: no such index")
	// ErrUniqueViolation: a write would give a unique index's key to a second row.
	ErrUniqueViolation = errors.New("brine: unique index key already used by another row")
	// ErrIndexMismatch: a table was opened with index definitions other than the ones stored with it.
	ErrIndexMismatch = errors.New("brine: index definitions do not match the table's")
	// ErrPlainWriters: AddIndex of a table's first index was not told that nothing writes the table
	// around brine's Table (AddIndexOptions.NoPlainWriters): such a writer would not keep it.
	ErrPlainWriters = errors.New("brine: writers that keep no index may still write the table")
)

// IndexPart is one field of an index key: a field of the main row's logical key (which must be
// built with package keys), or the value of a column, encoded as a keys Bytes field.
type IndexPart struct {
	// KeyField is the index of the logical key's field copied (counted from 0, kN in a spec),
	// encoded as it is, when Column is zero.
	KeyField int
	// Column, when its Family is set, is the column whose newest value is the part.
	Column Column
	// Desc orders a column part descending (newest first for a big-endian timestamp).
	Desc bool
}

// KeyPart is the i-th field of the main row's logical key.
func KeyPart(i int) IndexPart { return IndexPart{KeyField: i} }

// ColumnPart is the value of a column, ascending.
func ColumnPart(family, qualifier string) IndexPart {
	return IndexPart{Column: Column{Family: family, Qualifier: qualifier}}
}

// Descending returns p ordered descending (column parts only).
func (p IndexPart) Descending() IndexPart { p.Desc = true; return p }

// IndexConfig declares one index of a table.
type IndexConfig struct {
	// Name names the index (letters, digits, '_'); the index table is "<table>__ix_<name>".
	Name string
	// Parts build the index key. A row missing a column of a column part has no entry.
	Parts []IndexPart
	// Salter salts the index table; nil means "none".
	Salter salting.Salter
	// Covered columns are copied into the index entry, so a scan asking only for them needs no
	// second read.
	Covered []Column
	// Unique makes the index key identify one row: the entry's key is the index key alone, and a
	// write giving a used key to a second row fails with ErrUniqueViolation. A non-unique entry's
	// key is the index key followed by the main row's key.
	Unique bool
	// keyCell: the index was stored before entry format 2, and its entries hold the main key in a
	// cell too (indexproto.Def.KeyCell). Set only from a table's meta (storedIndexConfig): a new
	// index gets the newest format.
	keyCell bool
}

// IndexTableName is the store table holding an index's entries.
func IndexTableName(table, index string) string { return table + "__ix_" + index }

// def is cfg as the index protocol's encodings take it.
func (cfg IndexConfig) def() indexproto.Def {
	parts := make([]indexproto.Part, len(cfg.Parts))
	for i, p := range cfg.Parts {
		parts[i] = indexproto.Part(p)
	}
	return indexproto.Def{Name: cfg.Name, Parts: parts, Salter: cfg.Salter, Covered: cfg.Covered, Unique: cfg.Unique,
		KeyCell: cfg.Unique || cfg.keyCell}
}

// check refuses a bad definition: families, when not nil, are the table's, and ks, when not nil, the
// table's key schema, whose fields a key part must name.
func (cfg IndexConfig) check(families []string, ks *keys.Schema) error {
	return cfg.def().Check(families, ks)
}

// spec is the definition as declared: "salt=<spec>|key=k0,c:f:q,c:f:q:desc|cover=f:q|unique".
func (cfg IndexConfig) spec() string { return cfg.def().Spec() }

// metaSpec is the definition as the table's meta stores it: spec and the entries' format.
func (cfg IndexConfig) metaSpec() string { return cfg.def().MetaSpec() }

// ParseIndexConfig reads an index definition as a user declares it, in the form Index.Spec shows:
// "salt=SPEC|key=PART,...|cover=FAMILY:QUALIFIER,...|unique", a PART being kN (field N of the row
// key, counted from 0) or c:FAMILY:QUALIFIER[:desc] (a column's value); cover and unique are
// optional. SPEC is read by salting.ParseSpec. It takes the form a table's meta stores too, whose
// entry format it leaves out: an index declared by it gets the newest.
func ParseIndexConfig(name, s string) (IndexConfig, error) {
	cfg, err := parseIndexConfig(name, s, indexproto.Parse)
	cfg.keyCell = false
	return cfg, err
}

// storedIndexConfig reads an index definition from a table's meta (IndexConfig.metaSpec), format
// included, its salt spec in any spelling a brine stored (salting.ParseStoredSpec).
func storedIndexConfig(name, s string) (IndexConfig, error) {
	return parseIndexConfig(name, s, indexproto.ParseStored)
}

// storedMetaSpec is a stored definition as metaSpec spells it now (s when it does not parse), for
// comparing it with a definition's: two spellings of one salt spec are one definition.
func storedMetaSpec(name, s string) string {
	cfg, err := storedIndexConfig(name, s)
	if err != nil {
		return s
	}
	return cfg.metaSpec()
}

func parseIndexConfig(name, s string, parse func(name, s string) (indexproto.Def, error)) (IndexConfig, error) {
	d, err := parse(name, s)
	if err != nil {
		return IndexConfig{}, err
	}
	cfg := IndexConfig{Name: d.Name, Salter: d.Salter, Covered: d.Covered, Unique: d.Unique, keyCell: d.KeyCell && !d.Unique,
		Parts: make([]IndexPart, len(d.Parts))}
	for i, p := range d.Parts {
		cfg.Parts[i] = IndexPart(p)
	}
	return cfg, nil
}

// Index is a handle on one index of a table. It is cheap, immutable and safe for concurrent use.
type Index struct {
	t     *indexedTable // the main table
	cfg   IndexConfig
	def   indexproto.Def // cfg, for the protocol's encodings
	table *Table         // the index table: salted by cfg.Salter, keyed by entry keys
	// grace is how old a pending entry must be before a reader takes its writer for dead and repairs
	// it (see the package documentation); a younger one is answered from the main row, unrepaired.
	grace time.Duration
	state IndexState
}

// DefaultIndexGrace is how long a write may take between its first index write and its data write
// before readers repair what it left: far above any RPC deadline, so a live writer is never fenced.
const DefaultIndexGrace = time.Minute

// Name is the index's name.
func (ix *Index) Name() string { return ix.cfg.Name }

// Config is the index's definition.
func (ix *Index) Config() IndexConfig { return ix.cfg }

// Spec is the definition as declared, which ParseIndexConfig reads back. The table's meta stores
// the entries' format with it.
func (ix *Index) Spec() string { return ix.cfg.spec() }

// WithGrace returns a handle whose readers repair pending entries older than d (tests, tools that
// know no writer is running pass 0).
func (ix *Index) WithGrace(d time.Duration) *Index {
	c := *ix
	c.grace = max(0, d)
	return &c
}

// Prefix is the start of the index keys whose leading parts hold vals, for PrefixRange: a key field
// part takes the field as package keys encoded it (e.g. keys.AppendText(nil, keys.KindString, "s1")),
// a column part takes the column's raw value.
func (ix *Index) Prefix(vals ...[]byte) ([]byte, error) { return ix.def.Prefix(vals...) }

// EntryKey is the index entry's key for a main row with these cells (what Scan returns as
// IndexRow.IndexKey, and the reference a test or tool computes from the main table); ok is false when the row has no
// entry (no cells, or a column part missing). A key field the key does not have is an error: the
// index was declared over keys built otherwise.
func (ix *Index) EntryKey(mainKey []byte, cells []Cell) (key []byte, ok bool, err error) {
	if key, ok, err = ix.def.EntryKey(mainKey, cells); err != nil {
		return nil, false, fmt.Errorf("index %s: key %s %w", ix.cfg.Name, route.KeyText(mainKey), err)
	}
	return key, ok, nil
}
