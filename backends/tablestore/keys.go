package tablestore

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	ots "github.com/aliyun/aliyun-tablestore-go-sdk/tablestore"

	"github.com/brine-kv/brine/backends"
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
	// physical key (salt included) that the first column holds. A fixed width is what keeps Tablestore's
	// row order equal to the byte order of physical keys, which brine's scans and merges rely on.
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

// AppendKeyTail appends the encoding of the primary-key columns after the first to dst: a logical key
// for a multi-column table is the first column's bytes (less the salt) followed by this tail. Values
// are int64 or int (INTEGER), string (STRING) or []byte (BINARY). The encoding is package keys' for
// ascending int64, string and bytes fields, so keys.Schema builds the same tails (and whole logical
// keys, when the first column's part is a fixed-width field); it sorts like the values.
func AppendKeyTail(dst []byte, values ...any) ([]byte, error) {
	for i, v := range values {
		switch v := v.(type) {
		case int64:
			dst = appendInt(dst, v)
		case int:
			dst = appendInt(dst, int64(v))
		case string:
			if !utf8.ValidString(v) {
				return nil, fmt.Errorf("tablestore: key tail value %d: %w: STRING is not UTF-8", i, backends.ErrInvalidKey)
			}
			dst = appendText(dst, tagString, []byte(v))
		case []byte:
			dst = appendText(dst, tagBytes, v)
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

// Tail fields use the wire format of package keys (ascending String, Bytes and Int64 fields): a tag
// byte, then for INTEGER 8 bytes big-endian with the sign bit flipped, for STRING and BINARY the
// bytes with 0x00 written 0x00 0xFF and 0xFF written 0xFF 0x00, then 0x00 0x01 (orderedcode's string
// format). Every body sorts like its value and none is a prefix of another.
const (
	tagString  = 's'
	tagBytes   = 'b'
	tagInteger = 'i'
)

func fieldTag(t KeyType) byte {
	switch t {
	case KeyString:
		return tagString
	case KeyInteger:
		return tagInteger
	}
	return tagBytes
}

func appendInt(dst []byte, v int64) []byte {
	dst = append(dst, tagInteger)
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

func appendText(dst []byte, tag byte, v []byte) []byte {
	dst = append(dst, tag)
	for _, c := range v {
		switch c {
		case 0x00:
			dst = append(dst, 0x00, 0xFF)
		case 0xFF:
			dst = append(dst, 0xFF, 0x00)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, 0x00, 0x01)
}

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
	case len(cols) > 1 && first.Type != KeyBinary:
		return nil, bad("the first of several key columns must be BINARY")
	case len(cols) > 1 && (first.Width < 1 || first.Width > maxPKValueLen):
		return nil, bad("the first of several key columns needs a width of 1 to %d bytes", maxPKValueLen)
	}
	return &keySchema{cols: cols}, nil
}

// keyNames are the primary-key column names, for columns_to_get.
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
	w := s.cols[0].Width
	if len(key) < w {
		return nil, bad("shorter than the %d bytes of key column %s", w, s.cols[0].Name)
	}
	vals := []pkVal{{v: key[:w:w]}}
	rest := key[w:]
	for _, c := range s.cols[1:] {
		v, n, complete := decodeField(c.Type, rest)
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

// decodeField reads one tail field. complete is false when b ends inside the field or the field is
// malformed; v then holds the longest prefix that was read (for range bounds), n how far it got.
func decodeField(t KeyType, b []byte) (v pkVal, n int, complete bool) {
	if len(b) == 0 || b[0] != fieldTag(t) {
		return infMin, 0, false
	}
	body := b[1:]
	if t == KeyInteger {
		var pad [8]byte
		n := copy(pad[:], body)
		return pkVal{v: int64(binary.BigEndian.Uint64(pad[:]) ^ (1 << 63))}, 1 + n, n == 8
	}
	out := []byte{}
	mk := func() pkVal {
		if t == KeyString {
			return pkVal{v: string(out)}
		}
		return pkVal{v: out}
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != 0x00 && c != 0xFF {
			out = append(out, c)
			continue
		}
		if i+1 >= len(body) {
			return mk(), 1 + i, false
		}
		switch {
		case c == 0x00 && body[i+1] == 0xFF:
			out = append(out, 0x00)
			i++
		case c == 0xFF && body[i+1] == 0x00:
			out = append(out, 0xFF)
			i++
		case c == 0x00 && body[i+1] == 0x01:
			return mk(), 1 + i + 2, true
		default:
			return mk(), 1 + i, false
		}
	}
	return mk(), len(b), false
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
		case []byte:
			if i == 0 {
				key = append(key, v...)
			} else {
				key = appendText(key, fieldTag(col.Type), v)
			}
		case string:
			if i == 0 {
				key = append(key, v...)
			} else {
				key = appendText(key, fieldTag(col.Type), []byte(v))
			}
		case int64:
			if i == 0 {
				return nil, fmt.Errorf("tablestore: row key column %s is INTEGER", col.Name)
			}
			key = appendInt(key, v)
		default:
			return nil, fmt.Errorf("tablestore: row primary-key column %s has type %T", col.Name, c.Value)
		}
		if i == 0 && len(s.cols) > 1 && len(key) != s.cols[0].Width {
			return nil, fmt.Errorf("tablestore: row key column %s has %d bytes, the table declares %d", col.Name, len(key), s.cols[0].Width)
		}
	}
	return key, nil
}

// Range bounds. Tablestore bounds are primary-key tuples while brine's are byte strings; for the keys a
// schema accepts, tuple order equals byte order, so each byte bound maps to a tuple that is exact where
// that is cheap and otherwise errs on the inclusive side. The scan drops the few extra rows by comparing
// physical keys with the brine range, so a loose bound costs reads, never correctness.

// lowerBound returns T with tuple(K) >= T (strict: > T) for every valid key K >= b.
func (s *keySchema) lowerBound(b []byte, strict bool) []pkVal {
	n := len(s.cols)
	out := make([]pkVal, 0, n)
	pad := func() []pkVal {
		for len(out) < n {
			out = append(out, infMin)
		}
		return out
	}
	if len(b) == 0 {
		return pad()
	}
	if n == 1 {
		return []pkVal{s.lowerBytes(0, b, strict)}
	}
	w := s.cols[0].Width
	if len(b) < w {
		// A shorter bound compares with the fixed-width first column alone; the MIN padding below makes
		// the bound strict as well.
		out = append(out, pkVal{v: b})
		return pad()
	}
	out = append(out, pkVal{v: b[:w:w]})
	rest := b[w:]
	if len(rest) == 0 {
		return pad()
	}
	for i := 1; i < n; i++ {
		last := i == n-1
		v, used, complete := decodeField(s.cols[i].Type, rest)
		rest = rest[used:]
		if !complete {
			if used == 0 {
				return pad() // tag missing or wrong: INF_MIN is always low enough
			}
			if s.cols[i].Type != KeyInteger {
				v = s.lowerBytes(i, bytesOf(v), strict && last)
			} else if strict && last {
				v = predInt(v)
			}
			out = append(out, v)
			return pad()
		}
		if last && strict && len(rest) == 0 {
			// b is exactly a key: step below its last column.
			if s.cols[i].Type == KeyInteger {
				v = predInt(v)
			} else {
				v = s.lowerBytes(i, bytesOf(v), true)
			}
		}
		out = append(out, v)
		if len(rest) == 0 {
			return pad()
		}
	}
	// b is a key followed by more bytes: every K >= b is > that key, so its tuple is a strict bound too.
	return out
}

// lowerBytes is the lower bound for a STRING/BINARY column whose bytes must be >= b (strict: the bound
// itself must be < b).
func (s *keySchema) lowerBytes(i int, b []byte, strict bool) pkVal {
	if len(b) > maxPKValueLen {
		b = b[:maxPKValueLen] // a prefix sorts before b: still a lower bound
	}
	if len(b) == 0 {
		return infMin
	}
	if strict {
		switch {
		case len(b) == 0:
			return infMin
		case b[len(b)-1] == 0x00:
			b = b[:len(b)-1] // the immediate predecessor
		case s.cols[i].Type == KeyBinary:
			// Just below b: b[:-1], last byte - 1, then 0xFF bytes; rows between it and b are few.
			p := append([]byte(nil), b[:len(b)-1]...)
			p = append(p, b[len(b)-1]-1)
			for len(p) < maxPKValueLen && len(p) < len(b)+16 {
				p = append(p, 0xFF)
			}
			b = p
		default:
			b = b[:len(b)-1]
		}
	}
	if s.cols[i].Type == KeyString {
		b = validPrefix(b) // shorter still sorts lower
	}
	if len(b) == 0 && strict {
		return infMin
	}
	return s.valueOf(i, b)
}

// upperBound returns T with tuple(K) < T for every valid key K < b: an exclusive upper bound, and an
// inclusive one for BACKWARD scans.
func (s *keySchema) upperBound(b []byte) []pkVal {
	n := len(s.cols)
	if len(b) == 0 {
		out := make([]pkVal, n)
		for i := range out {
			out[i] = infMax
		}
		return out
	}
	out := make([]pkVal, 0, n)
	pad := func(p pkVal) []pkVal {
		for len(out) < n {
			out = append(out, p)
		}
		return out
	}
	if n == 1 {
		return []pkVal{s.upperBytes(0, b)}
	}
	w := s.cols[0].Width
	if len(b) < w {
		out = append(out, pkVal{v: b})
		return pad(infMin)
	}
	out = append(out, pkVal{v: b[:w:w]})
	rest := b[w:]
	if len(rest) == 0 {
		return pad(infMin)
	}
	for i := 1; i < n; i++ {
		v, used, complete := decodeField(s.cols[i].Type, rest)
		junk := rest[used:]
		rest = junk
		if !complete {
			if used == 0 {
				// The field's tag is missing or wrong: every row sharing the columns before sorts above b
				// (no byte left, or a smaller one) or below it (a larger one).
				if len(junk) > 0 && junk[0] > fieldTag(s.cols[i].Type) {
					return pad(infMax)
				}
				return pad(infMin)
			}
			if s.cols[i].Type == KeyInteger {
				out = append(out, v) // enc(x) < prefix p exactly when x < p padded with zeros
				return pad(infMin)
			}
			p := bytesOf(v)
			switch {
			case len(junk) > 0 && junk[0] == 0xFF:
				// b continues past p with 0xFF and no valid escape after it: every value with prefix p
				// may sort below b.
				if p = increment(p); p == nil {
					return pad(infMax)
				}
			case len(junk) > 1 && junk[1] != 0x00:
				// b continues past p with 0x00 y, y neither escape nor terminator: p itself sorts below b.
				p = append(append([]byte(nil), p...), 0x00)
			}
			if len(p) > maxPKValueLen || (s.cols[i].Type == KeyString && !utf8.Valid(p)) {
				return pad(infMax) // loose: every row sharing the columns before
			}
			out = append(out, s.valueOf(i, p))
			return pad(infMin)
		}
		out = append(out, v)
		if len(rest) == 0 {
			return pad(infMin)
		}
	}
	// b is a key followed by more bytes: K < b means K <= that key, so step past its last column.
	last := out[n-1]
	if s.cols[n-1].Type == KeyInteger {
		x := last.v.(int64)
		if x == math.MaxInt64 {
			out[n-1] = infMax
		} else {
			out[n-1] = pkVal{v: x + 1}
		}
		return out
	}
	p := append(append([]byte(nil), bytesOf(last)...), 0x00)
	if len(p) > maxPKValueLen {
		out[n-1] = infMax
	} else {
		out[n-1] = s.valueOf(n-1, p)
	}
	return out
}

// upperBytes is the exclusive upper bound of a single key column.
func (s *keySchema) upperBytes(i int, b []byte) pkVal {
	if len(b) > maxPKValueLen {
		// Keys have at most maxPKValueLen bytes: those below b are at most its prefix, and all of them
		// sort before the prefix incremented.
		inc := increment(b[:maxPKValueLen])
		if inc == nil {
			return infMax
		}
		b = inc
	}
	if s.cols[i].Type == KeyString && !utf8.Valid(b) {
		return infMax
	}
	return s.valueOf(i, b)
}

// increment returns the shortest byte string above every string with prefix b, nil if there is none.
func increment(b []byte) []byte {
	p := append([]byte(nil), b...)
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xFF {
			p[i]++
			return p[:i+1]
		}
	}
	return nil
}

func predInt(v pkVal) pkVal {
	x := v.v.(int64)
	if x == math.MinInt64 {
		return infMin
	}
	return pkVal{v: x - 1}
}

func bytesOf(v pkVal) []byte {
	switch x := v.v.(type) {
	case []byte:
		return x
	case string:
		return []byte(x)
	}
	return nil
}

// validPrefix returns the longest prefix of b that is valid UTF-8.
func validPrefix(b []byte) []byte {
	for !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return b
}
