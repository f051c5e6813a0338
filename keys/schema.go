package keys

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Codec turns tuples of values into order-preserving row keys and back. Schema and Joined implement
// it.
type Codec interface {
	// Append appends the key of a full tuple (one value per field) to dst.
	Append(dst []byte, values ...any) ([]byte, error)
	// Encode returns the key of a full tuple.
	Encode(values ...any) ([]byte, error)
	// Decode returns the tuple of a key, one value per field.
	Decode(key []byte) ([]any, error)
	// PrefixRange returns the key range [start, end) of all rows whose leading fields equal values
	// (end nil: to the end of the table). With no values it is the whole table (nil, nil); with one
	// value per field, the single key.
	PrefixRange(values ...any) (start, end []byte, err error)
	// ParseValues converts text (e.g. command-line arguments), one per leading field, to values
	// of the fields' Go types.
	ParseValues(text ...string) ([]any, error)
	// String is the codec's canonical spec.
	String() string
}

// Schema is the ordered list of fields of a composite key, with the codec described in the package
// documentation. It is immutable and safe for concurrent use.
//
// Values accepted by Append, Encode and PrefixRange: String, FixedString: string or []byte; Bytes,
// Raw: []byte or string; Int64: any Go integer type within int64 range; Uint64: any Go integer type
// that is not negative. Decode returns string, []byte, int64, uint64, string, []byte respectively.
type Schema struct {
	fields []Field
}

var _ Codec = (*Schema)(nil)

// NewSchema builds a schema from its fields: at least one, names unique, Raw only last.
func NewSchema(fields ...Field) (*Schema, error) {
	if len(fields) == 0 {
		return nil, fmt.Errorf("%w: no fields", ErrInvalidSchema)
	}
	if len(fields) > 255 {
		return nil, fmt.Errorf("%w: %d fields (at most 255)", ErrInvalidSchema, len(fields))
	}
	seen := make(map[string]bool, len(fields))
	for i, f := range fields {
		if err := f.validate(); err != nil {
			return nil, err
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("%w: field name %q used twice", ErrInvalidSchema, f.Name)
		}
		seen[f.Name] = true
		if f.Kind == KindRaw && i != len(fields)-1 {
			return nil, fmt.Errorf("%w: raw field %s must be the last", ErrInvalidSchema, f.Name)
		}
	}
	return &Schema{fields: append([]Field(nil), fields...)}, nil
}

// ParseSchema builds a schema from its spec: fields separated by ',', each
//
//	name[:type][:pad=B][:asc|:desc]
//
// where type is string (the default), bytes, int64, uint64, raw, or fixed=W (a FixedString of width W,
// padded with pad=B, default 0x00; B is a character or 0xHH). Examples:
//
//	"hostname,event,ts:int64:desc"
//	"userid:fixed=12:pad=0x20,orderid:uint64"
//	"hostname,event,ts:desc"          (types left out: three strings)
func ParseSchema(spec string) (*Schema, error) {
	if spec == "" {
		return nil, fmt.Errorf("%w: empty spec", ErrInvalidSchema)
	}
	parts := strings.Split(spec, ",")
	fields := make([]Field, len(parts))
	for i, p := range parts {
		f, err := parseField(p)
		if err != nil {
			return nil, err
		}
		fields[i] = f
	}
	return NewSchema(fields...)
}

// String is the canonical spec, which ParseSchema turns back into an equal schema.
func (s *Schema) String() string {
	specs := make([]string, len(s.fields))
	for i, f := range s.fields {
		specs[i] = f.spec()
	}
	return strings.Join(specs, ",")
}

// Fields returns a copy of the schema's fields.
func (s *Schema) Fields() []Field { return append([]Field(nil), s.fields...) }

// Len is the number of fields.
func (s *Schema) Len() int { return len(s.fields) }

// Append appends the key of a full tuple to dst.
func (s *Schema) Append(dst []byte, values ...any) ([]byte, error) {
	if len(values) != len(s.fields) {
		return dst, fmt.Errorf("%w: %d values for %d fields", ErrInvalidValue, len(values), len(s.fields))
	}
	return s.appendFields(dst, values)
}

// Encode returns the key of a full tuple.
func (s *Schema) Encode(values ...any) ([]byte, error) { return s.Append(nil, values...) }

func (s *Schema) appendFields(dst []byte, values []any) ([]byte, error) {
	n := len(dst)
	for i, v := range values {
		var err error
		if dst, err = appendField(dst, s.fields[i], v); err != nil {
			return dst[:n], fmt.Errorf("field %d (%s): %w", i, s.fields[i].Name, err)
		}
	}
	return dst, nil
}

func appendField(dst []byte, f Field, v any) ([]byte, error) {
	dst = append(dst, f.Kind.tag(f.Desc))
	switch f.Kind {
	case KindInt64:
		x, err := toInt64(v)
		if err != nil {
			return dst, err
		}
		return appendInt64(dst, x, f.Desc), nil
	case KindUint64:
		x, err := toUint64(v)
		if err != nil {
			return dst, err
		}
		return appendUint64(dst, x, f.Desc), nil
	}
	// The text kinds take string or []byte, each handled as it is: converting one to the other would
	// allocate.
	switch x := v.(type) {
	case string:
		return appendText(dst, f, x)
	case []byte:
		return appendText(dst, f, x)
	}
	return dst, fmt.Errorf("%w: %T is not a string or []byte", ErrInvalidValue, v)
}

func appendText[T string | []byte](dst []byte, f Field, text T) ([]byte, error) {
	switch f.Kind {
	case KindString, KindBytes:
		return appendStringBody(dst, text, f.Desc), nil
	case KindFixed:
		if err := checkFixed(text, f); err != nil {
			return dst, err
		}
		dst = append(dst, byte(f.Width))
		n := len(dst)
		dst = append(dst, text...)
		for range f.Width - len(text) {
			dst = append(dst, f.Pad)
		}
		if f.Desc {
			invert(dst[n:])
		}
		return dst, nil
	default: // KindRaw
		return append(dst, text...), nil
	}
}

func checkFixed[T string | []byte](text T, f Field) error {
	if len(text) > f.Width {
		return fmt.Errorf("%w: %d bytes do not fit width %d", ErrInvalidValue, len(text), f.Width)
	}
	if len(text) > 0 && text[len(text)-1] == f.Pad {
		return fmt.Errorf("%w: value ends with the pad byte %#02x and could not be told from its padding", ErrInvalidValue, f.Pad)
	}
	for i := 0; i < len(text); i++ {
		if text[i] < f.Pad {
			return fmt.Errorf("%w: byte %#02x is below the pad byte %#02x and would sort out of order", ErrInvalidValue, text[i], f.Pad)
		}
	}
	return nil
}

// Decode returns the tuple of a key encoded with this schema. It fails with ErrMalformedKey if the key
// does not parse, a field's tag does not match the schema, or bytes are left over.
func (s *Schema) Decode(key []byte) ([]any, error) {
	out := make([]any, len(s.fields))
	off := 0
	for i, f := range s.fields {
		sp, err := next(key, off)
		if err != nil {
			return nil, fmt.Errorf("field %d (%s): %w", i, f.Name, err)
		}
		if sp.Kind != f.Kind || sp.Desc != f.Desc {
			return nil, fmt.Errorf("%w: field %d (%s): key holds %s, schema says %s", ErrMalformedKey, i, f.Name, describe(sp.Kind, sp.Desc), describe(f.Kind, f.Desc))
		}
		body := key[sp.Body:sp.End]
		switch f.Kind {
		case KindString, KindBytes:
			text, err := parseStringBody(key, sp)
			if err != nil {
				return nil, fmt.Errorf("field %d (%s): %w", i, f.Name, err)
			}
			if f.Kind == KindString {
				out[i] = text
			} else {
				out[i] = []byte(text)
			}
		case KindInt64:
			out[i] = decodeInt64(body, f.Desc)
		case KindUint64:
			out[i] = decodeUint64(body, f.Desc)
		case KindFixed:
			if len(body) != f.Width {
				return nil, fmt.Errorf("%w: field %d (%s): width %d, schema says %d", ErrMalformedKey, i, f.Name, len(body), f.Width)
			}
			b := append([]byte(nil), body...)
			if f.Desc {
				invert(b)
			}
			n := len(b)
			for n > 0 && b[n-1] == f.Pad {
				n--
			}
			out[i] = string(b[:n])
		case KindRaw:
			out[i] = append([]byte{}, body...)
		}
		off = sp.End
	}
	if off != len(key) {
		return nil, fmt.Errorf("%w: %d bytes left after the last field", ErrMalformedKey, len(key)-off)
	}
	return out, nil
}

func describe(k Kind, desc bool) string {
	if desc {
		return k.String() + " desc"
	}
	return k.String()
}

// PrefixRange returns the key range [start, end) of all rows whose leading fields equal values: the
// encoding of values and the smallest key above every key it prefixes (nil end: to the end of the
// table). No values: (nil, nil), the whole table. One value per field: [key, key+"\x00"), the key
// alone. When the values end with a Raw field, rows whose Raw bytes start with it match.
func (s *Schema) PrefixRange(values ...any) (start, end []byte, err error) {
	if len(values) > len(s.fields) {
		return nil, nil, fmt.Errorf("%w: %d values for %d fields", ErrInvalidValue, len(values), len(s.fields))
	}
	if len(values) == 0 {
		return nil, nil, nil
	}
	start, err = s.appendFields(nil, values)
	if err != nil {
		return nil, nil, err
	}
	if len(values) == len(s.fields) && s.fields[len(values)-1].Kind != KindRaw {
		return start, append(start[:len(start):len(start)], 0), nil
	}
	return start, PrefixEnd(start), nil
}

// ParseValues converts text to values for the leading len(text) fields: strings as they are, Bytes and
// Raw as the text's bytes, Int64 and Uint64 as decimal numbers.
func (s *Schema) ParseValues(text ...string) ([]any, error) {
	if len(text) > len(s.fields) {
		return nil, fmt.Errorf("%w: %d values for %d fields", ErrInvalidValue, len(text), len(s.fields))
	}
	out := make([]any, len(text))
	for i, t := range text {
		f := s.fields[i]
		switch f.Kind {
		case KindString, KindFixed:
			out[i] = t
		case KindBytes, KindRaw:
			out[i] = []byte(t)
		case KindInt64:
			v, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: field %d (%s): %w", ErrInvalidValue, i, f.Name, err)
			}
			out[i] = v
		case KindUint64:
			v, err := strconv.ParseUint(t, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: field %d (%s): %w", ErrInvalidValue, i, f.Name, err)
			}
			out[i] = v
		}
	}
	return out, nil
}

func toText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	}
	return "", fmt.Errorf("%w: %T is not a string or []byte", ErrInvalidValue, v)
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint, uint64:
		u, _ := toUint64(x)
		if u > math.MaxInt64 {
			return 0, fmt.Errorf("%w: %d overflows int64", ErrInvalidValue, u)
		}
		return int64(u), nil
	}
	return 0, fmt.Errorf("%w: %T is not an integer", ErrInvalidValue, v)
}

func toUint64(v any) (uint64, error) {
	switch x := v.(type) {
	case uint:
		return uint64(x), nil
	case uint8:
		return uint64(x), nil
	case uint16:
		return uint64(x), nil
	case uint32:
		return uint64(x), nil
	case uint64:
		return x, nil
	case int, int8, int16, int32, int64:
		i, _ := toInt64(x)
		if i < 0 {
			return 0, fmt.Errorf("%w: %d is negative", ErrInvalidValue, i)
		}
		return uint64(i), nil
	}
	return 0, fmt.Errorf("%w: %T is not an integer", ErrInvalidValue, v)
}
