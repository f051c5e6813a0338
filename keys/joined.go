package keys

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// JoinedField is one field of a Joined key.
type JoinedField struct {
	Name string
	// Digits > 0 (1..20): an unsigned integer written as exactly Digits decimal digits, zero-padded
	// ("000054"). 0: text of any length whose bytes all sort above the separator.
	Digits int
}

// Joined is the Tablestore guide's concatenated key: fields joined by a separator byte that sorts
// below every byte a value may hold, numbers zero-padded to a fixed number of digits. With separator
// ',' and fields device:digits=6, seller, card it writes "000054,a100,6777", byte for byte as in the
// guide, and those keys sort like the tuples (54, "a100", "6777"). There are no tags: this is the
// layout for stores and tools that read the key as text. Encode rejects a text value holding a byte
// at or below the separator, which is what would break the ordering (the guide's ':' example).
//
// Values: text fields take string or []byte and decode to string; digits fields take any
// non-negative Go integer and decode to uint64. Joined is immutable and safe for concurrent use.
type Joined struct {
	sep    byte
	fields []JoinedField
}

var _ Codec = (*Joined)(nil)

// NewJoined builds a Joined codec. The separator must sort below '0' when there are digits fields.
func NewJoined(sep byte, fields ...JoinedField) (*Joined, error) {
	if len(fields) == 0 || len(fields) > 255 {
		return nil, fmt.Errorf("%w: joined key needs 1..255 fields, got %d", ErrInvalidSchema, len(fields))
	}
	seen := make(map[string]bool, len(fields))
	for _, f := range fields {
		if !validName(f.Name) {
			return nil, fmt.Errorf("%w: field name %q", ErrInvalidSchema, f.Name)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("%w: field name %q used twice", ErrInvalidSchema, f.Name)
		}
		seen[f.Name] = true
		if f.Digits < 0 || f.Digits > 20 {
			return nil, fmt.Errorf("%w: field %s: digits %d not in 1..20", ErrInvalidSchema, f.Name, f.Digits)
		}
		if f.Digits > 0 && sep >= '0' {
			return nil, fmt.Errorf("%w: separator %s does not sort below the digits of field %s", ErrInvalidSchema, FormatByte(sep), f.Name)
		}
	}
	return &Joined{sep: sep, fields: append([]JoinedField(nil), fields...)}, nil
}

// ParseJoined builds a Joined codec from its spec: "sep=B" then the fields, all separated by ',';
// a field is name (text) or name:digits=W. B is a character or 0xHH. Example, the Tablestore guide's
// [DeviceID,SellerID,CardID]:
//
//	"sep=0x2c,device:digits=6,seller,card"
func ParseJoined(spec string) (*Joined, error) {
	parts := strings.Split(spec, ",")
	sepText, ok := strings.CutPrefix(parts[0], "sep=")
	if !ok {
		return nil, fmt.Errorf("%w: joined spec %q must start with sep=", ErrInvalidSchema, spec)
	}
	sep, err := ParseByte(sepText)
	if err != nil {
		return nil, fmt.Errorf("%w: joined separator: %w", ErrInvalidSchema, err)
	}
	fields := make([]JoinedField, 0, len(parts)-1)
	for _, p := range parts[1:] {
		name, opt, hasOpt := strings.Cut(p, ":")
		f := JoinedField{Name: name}
		if hasOpt && opt != "text" {
			w, ok := strings.CutPrefix(opt, "digits=")
			if !ok {
				return nil, fmt.Errorf("%w: joined field %q: want name, name:text or name:digits=W", ErrInvalidSchema, p)
			}
			if f.Digits, err = parseSmallInt(w, 20); err != nil {
				return nil, fmt.Errorf("%w: joined field %q: %w", ErrInvalidSchema, p, err)
			}
		}
		fields = append(fields, f)
	}
	return NewJoined(sep, fields...)
}

// String is the canonical spec, which ParseJoined turns back into an equal codec.
func (j *Joined) String() string {
	var b strings.Builder
	b.WriteString("sep=")
	b.WriteString(FormatByte(j.sep))
	for _, f := range j.fields {
		b.WriteString(",")
		b.WriteString(f.Name)
		if f.Digits > 0 {
			fmt.Fprintf(&b, ":digits=%d", f.Digits)
		}
	}
	return b.String()
}

// Sep is the separator byte.
func (j *Joined) Sep() byte { return j.sep }

// Fields returns a copy of the fields.
func (j *Joined) Fields() []JoinedField { return append([]JoinedField(nil), j.fields...) }

// Append appends the key of a full tuple to dst.
func (j *Joined) Append(dst []byte, values ...any) ([]byte, error) {
	if len(values) != len(j.fields) {
		return dst, fmt.Errorf("%w: %d values for %d fields", ErrInvalidValue, len(values), len(j.fields))
	}
	return j.appendFields(dst, values, false)
}

// Encode returns the key of a full tuple.
func (j *Joined) Encode(values ...any) ([]byte, error) { return j.Append(nil, values...) }

// appendFields writes values joined by the separator, and one more separator after the last when
// trailingSep (a prefix of leading fields).
func (j *Joined) appendFields(dst []byte, values []any, trailingSep bool) ([]byte, error) {
	n := len(dst)
	for i, v := range values {
		if i > 0 {
			dst = append(dst, j.sep)
		}
		f := j.fields[i]
		if f.Digits > 0 {
			u, err := toUint64(v)
			if err != nil {
				return dst[:n], fmt.Errorf("field %d (%s): %w", i, f.Name, err)
			}
			var digits [20]byte
			d := strconv.AppendUint(digits[:0], u, 10)
			if len(d) > f.Digits {
				return dst[:n], fmt.Errorf("field %d (%s): %w: %d has more than %d digits", i, f.Name, ErrInvalidValue, u, f.Digits)
			}
			for range f.Digits - len(d) {
				dst = append(dst, '0')
			}
			dst = append(dst, d...)
			continue
		}
		text, err := toText(v)
		if err != nil {
			return dst[:n], fmt.Errorf("field %d (%s): %w", i, f.Name, err)
		}
		for k := 0; k < len(text); k++ {
			if text[k] <= j.sep {
				return dst[:n], fmt.Errorf("field %d (%s): %w: byte %#02x does not sort above the separator %s", i, f.Name, ErrInvalidValue, text[k], FormatByte(j.sep))
			}
		}
		dst = append(dst, text...)
	}
	if trailingSep {
		dst = append(dst, j.sep)
	}
	return dst, nil
}

// Decode returns the tuple of a joined key.
func (j *Joined) Decode(key []byte) ([]any, error) {
	out := make([]any, len(j.fields))
	rest := key
	for i, f := range j.fields {
		last := i == len(j.fields)-1
		var val []byte
		if last {
			val, rest = rest, nil
		} else {
			k := bytes.IndexByte(rest, j.sep)
			if k < 0 {
				return nil, fmt.Errorf("%w: field %d (%s): no separator after it", ErrMalformedKey, i, f.Name)
			}
			val, rest = rest[:k], rest[k+1:]
		}
		if f.Digits > 0 {
			if len(val) != f.Digits {
				return nil, fmt.Errorf("%w: field %d (%s): %d digits, want %d", ErrMalformedKey, i, f.Name, len(val), f.Digits)
			}
			var u uint64
			for _, c := range val {
				d := uint64(c - '0')
				if c < '0' || c > '9' || u > (^uint64(0)-d)/10 {
					return nil, fmt.Errorf("%w: field %d (%s): %q is not a number", ErrMalformedKey, i, f.Name, val)
				}
				u = u*10 + d
			}
			out[i] = u
			continue
		}
		for _, c := range val {
			if c <= j.sep {
				return nil, fmt.Errorf("%w: field %d (%s): byte %#02x at or below the separator", ErrMalformedKey, i, f.Name, c)
			}
		}
		out[i] = string(val)
	}
	return out, nil
}

// PrefixRange returns the key range of all rows whose leading fields equal values. A prefix of
// leading fields ends with the separator, so seller "a100" does not match "a1001".
func (j *Joined) PrefixRange(values ...any) (start, end []byte, err error) {
	if len(values) > len(j.fields) {
		return nil, nil, fmt.Errorf("%w: %d values for %d fields", ErrInvalidValue, len(values), len(j.fields))
	}
	if len(values) == 0 {
		return nil, nil, nil
	}
	full := len(values) == len(j.fields)
	start, err = j.appendFields(nil, values, !full)
	if err != nil {
		return nil, nil, err
	}
	if full {
		return start, append(start[:len(start):len(start)], 0), nil
	}
	return start, PrefixEnd(start), nil
}

// ParseValues converts text to values for the leading len(text) fields: text as it is, digits fields
// as decimal numbers.
func (j *Joined) ParseValues(text ...string) ([]any, error) {
	if len(text) > len(j.fields) {
		return nil, fmt.Errorf("%w: %d values for %d fields", ErrInvalidValue, len(text), len(j.fields))
	}
	out := make([]any, len(text))
	for i, t := range text {
		if j.fields[i].Digits == 0 {
			out[i] = t
			continue
		}
		u, err := strconv.ParseUint(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: field %d (%s): %w", ErrInvalidValue, i, j.fields[i].Name, err)
		}
		out[i] = u
	}
	return out, nil
}
