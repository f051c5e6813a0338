package keys

import (
	"fmt"
	"strconv"
	"strings"
)

// Field is one typed, named component of a composite key. Build it with String, Bytes, Int64,
// Uint64, FixedString or Raw, and wrap it in Descending to store it in decreasing order.
type Field struct {
	Name string
	Kind Kind
	// Width and Pad apply to KindFixed only: values are right-padded with Pad to Width bytes
	// (1..255).
	Width int
	Pad   byte
	// Desc stores the field in decreasing order (body bytes inverted).
	Desc bool
}

// String is a text field of any length; prefix-safe ("host1" is not a prefix of "host12").
func String(name string) Field { return Field{Name: name, Kind: KindString} }

// Bytes is a binary field of any length; prefix-safe. It decodes to []byte.
func Bytes(name string) Field { return Field{Name: name, Kind: KindBytes} }

// Int64 is a signed integer stored as 8 bytes big-endian with the sign bit flipped.
func Int64(name string) Field { return Field{Name: name, Kind: KindInt64} }

// Uint64 is an unsigned integer stored as 8 bytes big-endian.
func Uint64(name string) Field { return Field{Name: name, Kind: KindUint64} }

// FixedString is a text field right-padded with pad to exactly width bytes (1..255). A value longer
// than width, ending with pad, or holding a byte below pad is rejected: the first would be cut, the
// second could not be told from its padding, the third would sort out of order.
func FixedString(name string, width int, pad byte) Field {
	return Field{Name: name, Kind: KindFixed, Width: width, Pad: pad}
}

// Raw is the remaining bytes of the key, unescaped. It must be the last field and cannot be
// descending; a prefix range on it matches every value starting with the given bytes.
func Raw(name string) Field { return Field{Name: name, Kind: KindRaw} }

// Descending returns f stored in decreasing order, e.g. a timestamp for newest-first scans (what the
// guides write as Long.MAX_VALUE - ts).
func Descending(f Field) Field { f.Desc = true; return f }

func (f Field) validate() error {
	if !validName(f.Name) {
		return fmt.Errorf("%w: field name %q (want letters, digits, '_', '-', '.'; not starting with a digit)", ErrInvalidSchema, f.Name)
	}
	switch f.Kind {
	case KindString, KindBytes, KindInt64, KindUint64:
		if f.Width != 0 || f.Pad != 0 {
			return fmt.Errorf("%w: field %s: width/pad only apply to fixed", ErrInvalidSchema, f.Name)
		}
	case KindFixed:
		if f.Width < 1 || f.Width > 255 {
			return fmt.Errorf("%w: field %s: fixed width %d not in 1..255", ErrInvalidSchema, f.Name, f.Width)
		}
	case KindRaw:
		if f.Desc {
			return fmt.Errorf("%w: field %s: raw cannot be descending (it is not prefix-free)", ErrInvalidSchema, f.Name)
		}
	default:
		return fmt.Errorf("%w: field %s: unknown kind %d", ErrInvalidSchema, f.Name, f.Kind)
	}
	return nil
}

// spec is the field's canonical spec: name[:type][:fixed options][:desc].
func (f Field) spec() string {
	var b strings.Builder
	b.WriteString(f.Name)
	switch f.Kind {
	case KindString:
	case KindFixed:
		fmt.Fprintf(&b, ":fixed=%d", f.Width)
		if f.Pad != 0 {
			b.WriteString(":pad=")
			b.WriteString(FormatByte(f.Pad))
		}
	default:
		b.WriteString(":")
		b.WriteString(f.Kind.String())
	}
	if f.Desc {
		b.WriteString(":desc")
	}
	return b.String()
}

// parseField parses one field of a schema spec: name, then ':'-separated parts: a type (string,
// bytes, int64, uint64, raw, fixed=W), pad=B (fixed only), and asc or desc. Missing type: string.
func parseField(s string) (Field, error) {
	parts := strings.Split(s, ":")
	f := Field{Name: parts[0], Kind: KindString}
	var haveType, haveDir, havePad bool
	for _, p := range parts[1:] {
		key, val, hasVal := strings.Cut(p, "=")
		switch {
		case !hasVal && (p == "asc" || p == "desc"):
			if haveDir {
				return Field{}, fmt.Errorf("%w: field %q: direction given twice", ErrInvalidSchema, s)
			}
			haveDir, f.Desc = true, p == "desc"
		case !hasVal && kindByName(p) != 0:
			if haveType {
				return Field{}, fmt.Errorf("%w: field %q: type given twice", ErrInvalidSchema, s)
			}
			haveType, f.Kind = true, kindByName(p)
		case hasVal && key == "fixed":
			if haveType {
				return Field{}, fmt.Errorf("%w: field %q: type given twice", ErrInvalidSchema, s)
			}
			w, err := parseSmallInt(val, 255)
			if err != nil {
				return Field{}, fmt.Errorf("%w: field %q: fixed width: %w", ErrInvalidSchema, s, err)
			}
			haveType, f.Kind, f.Width = true, KindFixed, w
		case hasVal && key == "pad":
			if havePad {
				return Field{}, fmt.Errorf("%w: field %q: pad given twice", ErrInvalidSchema, s)
			}
			b, err := ParseByte(val)
			if err != nil {
				return Field{}, fmt.Errorf("%w: field %q: pad: %w", ErrInvalidSchema, s, err)
			}
			havePad, f.Pad = true, b
		default:
			return Field{}, fmt.Errorf("%w: field %q: unknown part %q", ErrInvalidSchema, s, p)
		}
	}
	if havePad && f.Kind != KindFixed {
		return Field{}, fmt.Errorf("%w: field %q: pad applies to fixed only", ErrInvalidSchema, s)
	}
	if err := f.validate(); err != nil {
		return Field{}, err
	}
	return f, nil
}

// kindByName maps the spec names of the kinds that take no parameter; 0 for any other word.
func kindByName(s string) Kind {
	switch s {
	case "string":
		return KindString
	case "bytes":
		return KindBytes
	case "int64":
		return KindInt64
	case "uint64":
		return KindUint64
	case "raw":
		return KindRaw
	}
	return 0
}

func validName(s string) bool {
	if s == "" || len(s) > 128 || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// parseSmallInt parses a decimal in 1..max: digits only, no sign, no leading zero.
func parseSmallInt(s string, max int) (int, error) {
	if s == "" || len(s) > 9 || s[0] == '0' {
		return 0, fmt.Errorf("%q is not a number in 1..%d", s, max)
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("%q is not a number in 1..%d", s, max)
		}
		n = n*10 + int(s[i]-'0')
	}
	if n > max {
		return 0, fmt.Errorf("%d is not in 1..%d", n, max)
	}
	return n, nil
}

// ParseByte parses a one-byte literal as used in specs: a single printable ASCII character other than
// ',', ':' and '=' (which separate spec parts), or 0x followed by two hex digits ("0x2c" for ',').
func ParseByte(s string) (byte, error) {
	if len(s) == 1 && plainByte(s[0]) {
		return s[0], nil
	}
	if len(s) == 4 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		v, err := strconv.ParseUint(s[2:], 16, 8)
		if err == nil {
			return byte(v), nil
		}
	}
	return 0, fmt.Errorf("%q is not a byte (a character or 0xHH)", s)
}

// FormatByte is the canonical form of a byte literal parsed by ParseByte: the character itself when it
// may stand alone, else 0x and two lower-case hex digits.
func FormatByte(b byte) string {
	if plainByte(b) {
		return string(rune(b))
	}
	return fmt.Sprintf("0x%02x", b)
}

func plainByte(c byte) bool { return c > ' ' && c < 0x7f && c != ',' && c != ':' && c != '=' }
