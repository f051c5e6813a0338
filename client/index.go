package client

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/internal/indexproto"
	"github.com/brine-kv/brine/keys"
	"github.com/brine-kv/brine/salting"
)

// Index metadata and bookkeeping columns. The index table holds, per entry, its status, the main
// row's key and the covered columns in one cell each, so that one put replaces all of them.
const (
	metaIndexPrefix = indexproto.MetaPrefix // + index name: the definition (IndexConfig.spec)
	metaIndexFamily = indexproto.MetaFamily // the main table's family holding the version column
	versionQual     = IndexVersionQualifier
	indexFamily     = "ix" // the index table's only family
	statusQual      = "s"  // "v" verified, or "u" + the writer's token
	mainKeyQual     = "k"  // the main row's logical key
	coveredQual     = "c"  // the covered columns, encoded by encodeCovered
	statusVerified  = 'v'  // + the token of the write or repair that verified it
	statusPending   = 'u'  // + the token of the write that left it pending
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
	// ErrPlainWriters: AddIndex of a table's first index was not told that no plain Table handle
	// writes the table any more (AddIndexOptions.NoPlainWriters): such a handle would not keep it.
	ErrPlainWriters = errors.New("brine: plain table handles may still write the table")
)

// IndexPart is one field of an index key: a field of the main row's logical key (which must be
// built with package keys), or the value of a column, encoded as a keys Bytes field.
type IndexPart struct {
	// KeyField is the index of the logical key's field copied, encoded as it is, when Column is zero.
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
}

// IndexTableName is the store table holding an index's entries.
func IndexTableName(table, index string) string { return table + "__ix_" + index }

func validIndexName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func validColumnName(c Column) bool {
	return c.Family != "" && c.Qualifier != "" && !strings.ContainsAny(c.Family+c.Qualifier, ":,|")
}

// check refuses a definition the store could not keep or brine could not parse back.
// check refuses a bad definition: families, when not nil, are the table's, and ks, when not nil, the
// table's key schema, whose fields a key part must name.
func (cfg IndexConfig) check(families []string, ks *keys.Schema) error {
	if !validIndexName(cfg.Name) {
		return fmt.Errorf("%w: index name %q: want 1-64 letters, digits or '_'", backends.ErrInvalidArgument, cfg.Name)
	}
	if len(cfg.Parts) == 0 {
		return fmt.Errorf("%w: index %q has no parts", backends.ErrInvalidArgument, cfg.Name)
	}
	for _, p := range cfg.Parts {
		switch {
		case p.Column.Family == "" && (p.KeyField < 0 || p.KeyField > 255):
			return fmt.Errorf("%w: index %q: key field %d", backends.ErrInvalidArgument, cfg.Name, p.KeyField)
		case p.Column.Family == "" && p.Desc:
			return fmt.Errorf("%w: index %q: a key field keeps its own order; Desc is for column parts", backends.ErrInvalidArgument, cfg.Name)
		case p.Column.Family == "" && ks != nil && p.KeyField >= ks.Len():
			return fmt.Errorf("%w: index %q: key part k%d: the table's key schema %q has %d fields (k0 to k%d)",
				backends.ErrInvalidArgument, cfg.Name, p.KeyField, ks, ks.Len(), ks.Len()-1)
		}
	}
	for _, c := range cfg.columns() {
		if !validColumnName(c) {
			return fmt.Errorf("%w: index %q: column %q:%q (want a family and a qualifier without ':', ',' or '|')", backends.ErrInvalidArgument, cfg.Name, c.Family, c.Qualifier)
		}
		if families != nil && !slices.Contains(families, c.Family) {
			return fmt.Errorf("%w: index %q: family %q is not one of the table's %v", backends.ErrInvalidArgument, cfg.Name, c.Family, families)
		}
		if c.Qualifier == versionQual {
			return fmt.Errorf("%w: index %q: column %q is brine's", backends.ErrInvalidArgument, cfg.Name, versionQual)
		}
	}
	return nil
}

// spec is the definition as stored in table meta: "salt=<spec>|key=k0,c:f:q,c:f:q:desc|cover=f:q|unique".
func (cfg IndexConfig) spec() string {
	salt := "none"
	if cfg.Salter != nil {
		salt = cfg.Salter.Spec()
	}
	parts := make([]string, len(cfg.Parts))
	for i, p := range cfg.Parts {
		switch {
		case p.Column.Family == "":
			parts[i] = "k" + strconv.Itoa(p.KeyField)
		case p.Desc:
			parts[i] = "c:" + p.Column.Family + ":" + p.Column.Qualifier + ":desc"
		default:
			parts[i] = "c:" + p.Column.Family + ":" + p.Column.Qualifier
		}
	}
	s := "salt=" + salt + "|key=" + strings.Join(parts, ",")
	if len(cfg.Covered) > 0 {
		cov := make([]string, len(cfg.Covered))
		for i, c := range cfg.Covered {
			cov[i] = c.Family + ":" + c.Qualifier
		}
		s += "|cover=" + strings.Join(cov, ",")
	}
	if cfg.Unique {
		s += "|unique"
	}
	return s
}

// badPart says what an index key part must look like.
func badPart(p string) string {
	return fmt.Sprintf("key part %q: want kN (the main key's part N) or c:FAMILY:QUALIFIER[:desc] (a column)", p)
}

// ParseIndexConfig reads an index definition in the form stored with a table (and shown by
// Index.Spec): "salt=SPEC|key=PART,...|cover=FAMILY:QUALIFIER,...|unique", a PART being kN (field
// N of the row key) or c:FAMILY:QUALIFIER[:desc] (a column's value); cover and unique are optional.
func ParseIndexConfig(name, s string) (IndexConfig, error) {
	cfg := IndexConfig{Name: name}
	bad := func(why string) (IndexConfig, error) {
		return IndexConfig{}, fmt.Errorf("%w: index %q spec %q: %s", backends.ErrInvalidArgument, name, s, why)
	}
	for item := range strings.SplitSeq(s, "|") {
		k, v, _ := strings.Cut(item, "=")
		switch k {
		case "salt":
			sl, err := salting.ParseSpec(v)
			if err != nil {
				return bad(err.Error())
			}
			cfg.Salter = sl
		case "key":
			for p := range strings.SplitSeq(v, ",") {
				f := strings.Split(p, ":")
				switch {
				case len(f) == 1 && strings.HasPrefix(p, "k"):
					n, err := strconv.Atoi(p[1:])
					if err != nil {
						return bad(badPart(p))
					}
					cfg.Parts = append(cfg.Parts, KeyPart(n))
				case (len(f) == 3 || len(f) == 4 && f[3] == "desc") && f[0] == "c":
					cfg.Parts = append(cfg.Parts, IndexPart{Column: Column{Family: f[1], Qualifier: f[2]}, Desc: len(f) == 4})
				default:
					return bad(badPart(p))
				}
			}
		case "cover":
			for c := range strings.SplitSeq(v, ",") {
				fam, q, ok := strings.Cut(c, ":")
				if !ok {
					return bad(fmt.Sprintf("covered column %q: want FAMILY:QUALIFIER", c))
				}
				cfg.Covered = append(cfg.Covered, Column{Family: fam, Qualifier: q})
			}
		case "unique":
			cfg.Unique = true
		default:
			return bad(fmt.Sprintf("item %q: want salt=SPEC, key=PARTS, cover=COLUMNS or unique", item))
		}
	}
	if cfg.Salter == nil {
		return bad("no salt")
	}
	if err := cfg.check(nil, nil); err != nil {
		return IndexConfig{}, err
	}
	return cfg, nil
}

// Index is a handle on one index of a table. It is cheap, immutable and safe for concurrent use.
type Index struct {
	t     *IndexedTable // the main table
	cfg   IndexConfig
	table *Table // the index table: salted by cfg.Salter, keyed by entry keys
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

// Spec is the definition as stored with the table.
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
func (ix *Index) Prefix(vals ...[]byte) ([]byte, error) {
	if len(vals) > len(ix.cfg.Parts) {
		return nil, fmt.Errorf("index %s: %w: %d values for %d parts", ix.cfg.Name, backends.ErrInvalidArgument, len(vals), len(ix.cfg.Parts))
	}
	var out []byte
	for i, v := range vals {
		p := ix.cfg.Parts[i]
		if p.Column.Family == "" {
			if n, err := keys.FieldsLen(v, 1); err != nil || n != len(v) {
				return nil, fmt.Errorf("index %s: %w: value %d is not one encoded key field", ix.cfg.Name, backends.ErrInvalidArgument, i)
			}
			out = append(out, v...)
			continue
		}
		out = appendColumnPart(out, v, p.Desc)
	}
	return out, nil
}

// appendColumnPart encodes a column value as a keys Bytes field, so that parts never run into each
// other ("host1" is not a prefix of "host12"'s part) and compare as the values do.
func appendColumnPart(dst, v []byte, desc bool) []byte {
	if !desc {
		return keys.AppendText(dst, keys.KindBytes, v)
	}
	start := len(dst)
	dst = keys.AppendText(dst, keys.KindBytes, v)
	dst[start] = keys.KindBytes.Tag(true)
	for i := start + 1; i < len(dst); i++ {
		dst[i] ^= 0xFF
	}
	return dst
}

// newest returns the newest value of a column among cells (sorted newest first per column).
func newest(cells []Cell, col Column) ([]byte, bool) {
	for _, c := range cells {
		if c.Family == col.Family && c.Qualifier == col.Qualifier {
			return c.Value, true
		}
	}
	return nil, false
}

// EntryKey is the index entry's key for a main row with these cells (what Scan returns as
// IndexRow.IndexKey, and the reference a test or tool computes from the main table); ok is false when the row has no
// entry (no cells, or a column part missing). A key field the key does not have is an error: the
// index was declared over keys built otherwise.
func (ix *Index) EntryKey(mainKey []byte, cells []Cell) (key []byte, ok bool, err error) {
	if len(dataCells(cells)) == 0 {
		return nil, false, nil
	}
	for _, p := range ix.cfg.Parts {
		if p.Column.Family == "" {
			sp, err := keys.FieldSpan(mainKey, p.KeyField)
			if err != nil {
				return nil, false, fmt.Errorf("index %s: key %s field %d: %w: %w", ix.cfg.Name, keyText(mainKey), p.KeyField, backends.ErrInvalidKey, err)
			}
			key = append(key, mainKey[sp.Start:sp.End]...)
			continue
		}
		v, found := newest(cells, p.Column)
		if !found {
			return nil, false, nil
		}
		key = appendColumnPart(key, v, p.Desc)
	}
	if !ix.cfg.Unique {
		key = append(key, mainKey...)
	}
	return key, true, nil
}

// dataCells drops the version column: what a caller wrote.
func dataCells(cells []Cell) []Cell {
	if !slices.ContainsFunc(cells, isVersionCell) {
		return cells
	}
	return slices.DeleteFunc(slices.Clone(cells), isVersionCell)
}

func isVersionCell(c Cell) bool { return c.Qualifier == versionQual }

// entryCells are the cells of the entry of the row mainKey with status st and the covered values
// of row: every entry the protocol, a repair or an exclusive job writes.
func (ix *Index) entryCells(mainKey, st []byte, row []Cell) []Cell {
	return []Cell{
		{Family: indexFamily, Qualifier: statusQual, Value: st},
		{Family: indexFamily, Qualifier: mainKeyQual, Value: mainKey},
		{Family: indexFamily, Qualifier: coveredQual, Value: ix.encodeCovered(row)},
	}
}

// encodeCovered packs the covered columns' newest values: per column a presence byte, then the
// value, length-prefixed. Timestamps are left out: a write stamped by the server has none yet when
// its entry is written, so a covered answer carries values only (Timestamp 0).
func (ix *Index) encodeCovered(cells []Cell) []byte {
	var out []byte
	for _, col := range ix.cfg.Covered {
		i := slices.IndexFunc(cells, func(c Cell) bool { return c.Family == col.Family && c.Qualifier == col.Qualifier })
		if i < 0 {
			out = append(out, 0)
			continue
		}
		out = append(out, 1)
		out = binary.AppendUvarint(out, uint64(len(cells[i].Value)))
		out = append(out, cells[i].Value...)
	}
	return out
}

// decodeCovered unpacks encodeCovered's bytes into cells, sorted as a row's are.
func (ix *Index) decodeCovered(b []byte) ([]Cell, error) {
	var cells []Cell
	for _, col := range ix.cfg.Covered {
		if len(b) == 0 {
			return nil, fmt.Errorf("index %s: covered columns truncated", ix.cfg.Name)
		}
		present := b[0]
		b = b[1:]
		if present == 0 {
			continue
		}
		l, n := binary.Uvarint(b)
		if n <= 0 || uint64(len(b)-n) < l {
			return nil, fmt.Errorf("index %s: covered columns corrupt", ix.cfg.Name)
		}
		cells = append(cells, Cell{Family: col.Family, Qualifier: col.Qualifier, Value: bytes.Clone(b[n : n+int(l)])})
		b = b[n+int(l):]
	}
	slices.SortStableFunc(cells, func(a, b Cell) int {
		return strings.Compare(a.Family+"\x00"+a.Qualifier, b.Family+"\x00"+b.Qualifier)
	})
	return cells, nil
}

// touches reports whether a mutation may change an index entry: it names an indexed or covered
// column, or deletes a whole family or row.
func (ix *Index) touches(m Mutation) bool {
	if m.Delete && len(m.Cells) == 0 {
		return true
	}
	for _, c := range m.Cells {
		if ix.usesColumn(Column{Family: c.Family, Qualifier: c.Qualifier}) {
			return true
		}
	}
	return false
}

func (ix *Index) usesColumn(col Column) bool {
	match := func(c Column) bool {
		return c.Family == col.Family && (col.Qualifier == "" || c.Qualifier == col.Qualifier)
	}
	if slices.ContainsFunc(ix.cfg.Covered, match) {
		return true
	}
	return slices.ContainsFunc(ix.cfg.Parts, func(p IndexPart) bool { return p.Column.Family != "" && match(p.Column) })
}
