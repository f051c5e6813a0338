package tablestore

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
	"github.com/brine-kv/brine/keys"
)

// KeyType is the type of one Tablestore primary-key column.
type KeyType string

// Primary-key column types.
const (
	KeyBinary  KeyType = "BINARY"
	KeyString  KeyType = "STRING"
	KeyInteger KeyType = "INTEGER"
)

// KeyColumn describes one primary-key column of a table.
type KeyColumn struct {
	Name string
	Type KeyType
	// Width applies to the first column of a multi-column key only: the number of leading bytes of the
	// physical key (salt included) that the first column holds. 0 makes the first column variable: the
	// physical key holds it escaped and terminated as the other columns are (AppendKeyHead). Either way
	// Tablestore's row order equals the byte order of physical keys, which brine's scans and merges
	// rely on.
	Width int
}

// MetaPrimaryKey is the TableOptions.Meta key that declares a table's primary key to CreateTable, as
// FormatPrimaryKey writes it, e.g. "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER". Without it a
// table gets the single column "pk:BINARY".
const MetaPrimaryKey = "tablestore.primary_key"

// FormatPrimaryKey writes the MetaPrimaryKey form of a primary key.
func FormatPrimaryKey(cols ...KeyColumn) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c.Name + ":" + string(c.Type)
		if c.Width > 0 {
			parts[i] += ":" + strconv.Itoa(c.Width)
		}
	}
	return strings.Join(parts, ",")
}

// ParsePrimaryKey parses and validates the MetaPrimaryKey form of a primary key.
func ParsePrimaryKey(spec string) ([]KeyColumn, error) {
	var cols []KeyColumn
	for part := range strings.SplitSeq(spec, ",") {
		f := strings.Split(strings.TrimSpace(part), ":")
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("tablestore: primary key %q: %w: want name:TYPE[:width] per column", spec, backends.ErrInvalidArgument)
		}
		c := KeyColumn{Name: f[0], Type: KeyType(strings.ToUpper(f[1]))}
		if len(f) == 3 {
			w, err := strconv.Atoi(f[2])
			if err != nil {
				return nil, fmt.Errorf("tablestore: primary key %q: %w: width %q", spec, backends.ErrInvalidArgument, f[2])
			}
			c.Width = w
		}
		cols = append(cols, c)
	}
	if _, err := newKeySchema(cols); err != nil {
		return nil, err
	}
	return cols, nil
}

// AppendKeyHead appends the logical part of a multi-column key's first column whose width is 0
// (variable): v escaped and terminated as AppendKeyTail writes STRING and BINARY values, without the
// type tag. A logical key for such a table is AppendKeyHead(first) followed by AppendKeyTail(rest...);
// a salt prefix that has no 0x00 or 0xFF byte (text: md5hex, none) then leaves the first column's
// stored value as the salt followed by the caller's value.
func AppendKeyHead(dst, v []byte) []byte { return keys.AppendEscaped(dst, v) }

// AppendKeyTail appends the encoding of the primary-key columns after the first to dst: a logical key
// for a multi-column table is the first column's bytes (less the salt) followed by this tail. Values
// are int64 or int (INTEGER), string (STRING) or []byte (BINARY). The encoding is package keys' for
// ascending int64, string and bytes fields, so keys.Schema builds the same tails (and whole logical
// keys, when the first column's part is a fixed-width field); it sorts like the values.
func AppendKeyTail(dst []byte, values ...any) ([]byte, error) {
	for i, v := range values {
		switch v := v.(type) {
		case int64:
			dst = keys.AppendInt64(dst, v)
		case int:
			dst = keys.AppendInt64(dst, int64(v))
		case string:
			if !utf8.ValidString(v) {
				return nil, fmt.Errorf("tablestore: key tail value %d: %w: STRING is not UTF-8", i, backends.ErrInvalidKey)
			}
			dst = keys.AppendText(dst, keys.KindString, v)
		case []byte:
			dst = keys.AppendText(dst, keys.KindBytes, v)
		default:
			return nil, fmt.Errorf("tablestore: key tail value %d: %w: type %T", i, backends.ErrInvalidKey, v)
		}
	}
	return dst, nil
}

// DecodeKey splits a physical key into its primary-key column values: []byte for the first column,
// then int64, string or []byte per column type.
func DecodeKey(cols []KeyColumn, key []byte) ([]any, error) {
	s, err := newKeySchema(cols)
	if err != nil {
		return nil, err
	}
	vals, err := s.values(key)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v.v
	}
	return out, nil
}

// Tail fields are package keys' ascending String, Bytes and Int64 fields, written by its encoder: a
// tag byte, then for INTEGER 8 bytes big-endian with the sign bit flipped, for STRING and BINARY the
// escaped, terminated body (keys.AppendEscaped). Every body sorts like its value and none is a prefix
// of another.

// fieldKind is the keys field kind a column of type t is encoded as.
func fieldKind(t KeyType) keys.Kind {
	switch t {
	case KeyString:
		return keys.KindString
	case KeyInteger:
		return keys.KindInt64
	}
	return keys.KindBytes
}

func fieldTag(t KeyType) byte { return fieldKind(t).Tag(false) }

// keySchema maps physical keys to primary keys and back for one table.
type keySchema struct {
	cols []KeyColumn
	// families are the table's column families from brine's meta; nil: any family (tables created
	// without Families, or by other programs).
	families map[string]bool
}

func newKeySchema(cols []KeyColumn) (*keySchema, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("tablestore: primary key %q: %w: "+format,
			append([]any{FormatPrimaryKey(cols...), backends.ErrInvalidArgument}, args...)...)
	}
	if len(cols) < 1 || len(cols) > maxPKColumns {
		return nil, bad("%d columns, want 1 to %d", len(cols), maxPKColumns)
	}
	seen := map[string]bool{}
	for i, c := range cols {
		if !validName(c.Name) {
			return nil, bad("column name %q", c.Name)
		}
		if seen[c.Name] {
			return nil, bad("column %q twice", c.Name)
		}
		seen[c.Name] = true
		switch c.Type {
		case KeyBinary, KeyString, KeyInteger:
		default:
			return nil, bad("column %q: type %q", c.Name, c.Type)
		}
		if i > 0 && c.Width != 0 {
			return nil, bad("column %q: only the first column has a width", c.Name)
		}
	}
	first := cols[0]
	switch {
	case len(cols) == 1 && first.Type == KeyInteger:
		return nil, bad("the key column must be BINARY or STRING")
	case len(cols) == 1 && first.Width != 0:
		return nil, bad("a single key column takes the whole key: no width")
	case len(cols) > 1 && first.Type == KeyInteger:
		return nil, bad("the first of several key columns must be BINARY or STRING")
	case first.Width < 0 || first.Width > maxPKValueLen:
		return nil, bad("the first column's width must be 0 (variable) to %d bytes", maxPKValueLen)
	}
	return &keySchema{cols: cols}, nil
}

// keyNames are the primary-key column names, for columns_to_get.
// variable reports a multi-column key whose first column has no fixed width.
func (s *keySchema) variable() bool { return len(s.cols) > 1 && s.cols[0].Width == 0 }

func (s *keySchema) keyNames() []string {
	names := make([]string, len(s.cols))
	for i, c := range s.cols {
		names[i] = c.Name
	}
	return names
}

func (s *keySchema) hasColumn(name string) bool {
	for _, c := range s.cols {
		if c.Name == name {
			return true
		}
	}
	return false
}

// pkVal is one primary-key column value, or INF_MIN/INF_MAX in a range bound.
type pkVal struct {
	inf int // -1 INF_MIN, +1 INF_MAX, 0 a value
	v   any // []byte, string or int64
}

var (
	infMin = pkVal{inf: -1}
	infMax = pkVal{inf: +1}
)

func (s *keySchema) valueOf(i int, b []byte) pkVal {
	if s.cols[i].Type == KeyString {
		return pkVal{v: string(b)}
	}
	return pkVal{v: b}
}

// values splits a physical key into column values, enforcing the service's key limits.
func (s *keySchema) values(key []byte) ([]pkVal, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("tablestore: key %q: %w: "+format, append([]any{key, backends.ErrInvalidKey}, args...)...)
	}
	if len(key) == 0 {
		return nil, bad("empty")
	}
	if len(s.cols) == 1 {
		if len(key) > maxPKValueLen {
			return nil, bad("%d bytes, Tablestore takes at most %d per key column", len(key), maxPKValueLen)
		}
		if s.cols[0].Type == KeyString && !utf8.Valid(key) {
			return nil, bad("column %s is STRING and the key is not UTF-8", s.cols[0].Name)
		}
		return []pkVal{s.valueOf(0, key)}, nil
	}
	var vals []pkVal
	rest, start := key, 0
	if w := s.cols[0].Width; w > 0 {
		if len(key) < w {
			return nil, bad("shorter than the %d bytes of key column %s", w, s.cols[0].Name)
		}
		if s.cols[0].Type == KeyString && !utf8.Valid(key[:w]) {
			return nil, bad("column %s is STRING and its value is not UTF-8", s.cols[0].Name)
		}
		vals, rest, start = []pkVal{s.valueOf(0, key[:w:w])}, key[w:], 1
	}
	for i := start; i < len(s.cols); i++ {
		c := s.cols[i]
		v, n, complete := s.field(i, rest)
		if !complete && i == 0 {
			return nil, bad("column %s has no fixed width: truncated or malformed (build keys with AppendKeyHead; a binary salt prefix needs the width declared)", c.Name)
		}
		if !complete {
			return nil, bad("column %s: truncated or malformed (build keys with AppendKeyTail)", c.Name)
		}
		if c.Type == KeyString && !utf8.ValidString(v.v.(string)) {
			return nil, bad("column %s is STRING and its value is not UTF-8", c.Name)
		}
		if l := valueLen(v); l > maxPKValueLen {
			return nil, bad("column %s: %d bytes, Tablestore takes at most %d", c.Name, l, maxPKValueLen)
		}
		vals = append(vals, v)
		rest = rest[n:]
	}
	if len(rest) > 0 {
		return nil, bad("%d bytes after the last key column", len(rest))
	}
	return vals, nil
}

func valueLen(v pkVal) int {
	switch x := v.v.(type) {
	case []byte:
		return len(x)
	case string:
		return len(x)
	}
	return 8
}

// field reads column i of a multi-column key: a tail field, or a variable first column.
func (s *keySchema) field(i int, b []byte) (v pkVal, n int, complete bool) {
	if i == 0 {
		return decodeBody(s.cols[0].Type, b)
	}
	return decodeField(s.cols[i].Type, b)
}

// decodeField reads one tail field with package keys' decoders. complete is false when b ends
// inside the field or the field is malformed; v then holds the longest prefix that was read (for range
// bounds), n how far it got.
func decodeField(t KeyType, b []byte) (v pkVal, n int, complete bool) {
	if len(b) == 0 || b[0] != fieldTag(t) {
		return infMin, 0, false
	}
	if t == KeyInteger {
		x, n, complete := keys.DecodeInt64(b[1:])
		return pkVal{v: x}, 1 + n, complete
	}
	v, n, complete = decodeBody(t, b[1:])
	return v, 1 + n, complete
}

// decodeBody reads an escaped, terminated STRING or BINARY value (a field without its tag).
func decodeBody(t KeyType, body []byte) (v pkVal, n int, complete bool) {
	out, n, complete := keys.DecodeEscaped(body)
	if t == KeyString {
		return pkVal{v: string(out)}, n, complete
	}
	return pkVal{v: out}, n, complete
}

// primaryKey builds the SDK's primary key from column values.
func (s *keySchema) primaryKey(vals []pkVal) *ots.PrimaryKey {
	pk := new(ots.PrimaryKey)
	for i, v := range vals {
		name := s.cols[i].Name
		switch v.inf {
		case -1:
			pk.AddPrimaryKeyColumnWithMinValue(name)
		case +1:
			pk.AddPrimaryKeyColumnWithMaxValue(name)
		default:
			pk.AddPrimaryKeyColumn(name, v.v)
		}
	}
	return pk
}

// keyOf turns a primary key read from the server back into the physical key.
func (s *keySchema) keyOf(pk *ots.PrimaryKey) ([]byte, error) {
	if pk == nil || len(pk.PrimaryKeys) != len(s.cols) {
		n := 0
		if pk != nil {
			n = len(pk.PrimaryKeys)
		}
		return nil, fmt.Errorf("tablestore: row has %d primary-key columns, the table has %d", n, len(s.cols))
	}
	var key []byte
	for i, c := range pk.PrimaryKeys {
		col := s.cols[i]
		if c.ColumnName != col.Name {
			return nil, fmt.Errorf("tablestore: row primary-key column %d is %q, want %q", i, c.ColumnName, col.Name)
		}
		switch v := c.Value.(type) {
		case []byte, string:
			b := bytesOf(pkVal{v: v})
			switch {
			case i == 0 && s.variable():
				key = keys.AppendEscaped(key, b)
			case i == 0:
				key = append(key, b...)
			default:
				key = keys.AppendText(key, fieldKind(col.Type), b)
			}
		case int64:
			if i == 0 {
				return nil, fmt.Errorf("tablestore: row key column %s is INTEGER", col.Name)
			}
			key = keys.AppendInt64(key, v)
		default:
			return nil, fmt.Errorf("tablestore: row primary-key column %s has type %T", col.Name, c.Value)
		}
		if i == 0 && s.cols[0].Width > 0 && len(key) != s.cols[0].Width {
			return nil, fmt.Errorf("tablestore: row key column %s has %d bytes, the table declares %d", col.Name, len(key), s.cols[0].Width)
		}
	}
	return key, nil
}
