package keys

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/google/orderedcode"
)

// Sentinel errors; every error of this package wraps one of them.
var (
	// ErrInvalidSchema: a schema or Joined spec that cannot be built (unknown type, Raw not last, ...).
	ErrInvalidSchema = errors.New("keys: invalid schema")
	// ErrInvalidValue: a value that its field cannot encode (wrong Go type, out of range, too long).
	ErrInvalidValue = errors.New("keys: invalid value")
	// ErrMalformedKey: an encoded key that does not parse (truncated, wrong tag, fewer fields than
	// asked for).
	ErrMalformedKey = errors.New("keys: malformed key")
)

// Kind is the type of a field.
type Kind uint8

// The field kinds. The tag byte of a field in an encoded key is the kind's letter (see the package
// documentation).
const (
	KindString Kind = iota + 1
	KindBytes
	KindInt64
	KindUint64
	KindFixed
	KindRaw
)

// Tag letters of ascending fields; a descending field's tag is the upper-case letter (bit 0x20 clear).
const (
	tagString = 's'
	tagBytes  = 'b'
	tagInt64  = 'i'
	tagUint64 = 'u'
	tagFixed  = 'f'
	tagRaw    = 'r'
	descBit   = 0x20
)

var kindNames = [...]string{KindString: "string", KindBytes: "bytes", KindInt64: "int64",
	KindUint64: "uint64", KindFixed: "fixed", KindRaw: "raw"}

// String is the kind's name as written in a schema spec.
func (k Kind) String() string {
	if k >= KindString && k <= KindRaw {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) tag(desc bool) byte {
	var t byte
	switch k {
	case KindString:
		t = tagString
	case KindBytes:
		t = tagBytes
	case KindInt64:
		t = tagInt64
	case KindUint64:
		t = tagUint64
	case KindFixed:
		t = tagFixed
	case KindRaw:
		t = tagRaw
	}
	if desc {
		t &^= descBit
	}
	return t
}

// kindOfTag is the inverse of Kind.tag; ok is false for a byte that is no tag.
func kindOfTag(t byte) (k Kind, desc bool, ok bool) {
	switch t | descBit {
	case tagString:
		k = KindString
	case tagBytes:
		k = KindBytes
	case tagInt64:
		k = KindInt64
	case tagUint64:
		k = KindUint64
	case tagFixed:
		k = KindFixed
	case tagRaw:
		k = KindRaw
	default:
		return 0, false, false
	}
	desc = t&descBit == 0
	if desc && k == KindRaw {
		return 0, false, false
	}
	return k, desc, true
}

// Span locates one field inside an encoded key: key[Start:End] is the whole field, tag included, and
// key[Body:End] its body (for a FixedString, after the width byte).
type Span struct {
	Kind  Kind
	Desc  bool
	Start int
	Body  int
	End   int
}

// next parses the field that starts at key[off]. It does not allocate.
func next(key []byte, off int) (Span, error) {
	if off >= len(key) {
		return Span{}, fmt.Errorf("%w: no field at offset %d (key is %d bytes)", ErrMalformedKey, off, len(key))
	}
	k, desc, ok := kindOfTag(key[off])
	if !ok {
		return Span{}, fmt.Errorf("%w: byte %#02x at offset %d is not a field tag", ErrMalformedKey, key[off], off)
	}
	sp := Span{Kind: k, Desc: desc, Start: off, Body: off + 1}
	switch k {
	case KindString, KindBytes:
		end, err := stringEnd(key, sp.Body, desc)
		if err != nil {
			return Span{}, err
		}
		sp.End = end
	case KindInt64, KindUint64:
		sp.End = sp.Body + 8
	case KindFixed:
		if sp.Body >= len(key) || key[sp.Body] == 0 {
			return Span{}, fmt.Errorf("%w: fixed-width field at offset %d has no width", ErrMalformedKey, off)
		}
		sp.Body++
		sp.End = sp.Body + int(key[sp.Body-1])
	case KindRaw:
		sp.End = len(key)
	}
	if sp.End > len(key) {
		return Span{}, fmt.Errorf("%w: %s field at offset %d is truncated", ErrMalformedKey, k, off)
	}
	return sp, nil
}

// stringEnd returns the offset just past the terminator of the escaped string body at key[i:].
// The grammar is orderedcode's: 00 ff is an escaped 00, ff 00 an escaped ff, 00 01 the end; a
// descending body is the same with every byte inverted.
func stringEnd(key []byte, i int, desc bool) (int, error) {
	end, ok := walkEscaped(key, i, desc, nil)
	switch {
	case ok:
		return end, nil
	case end+1 >= len(key):
		return 0, fmt.Errorf("%w: unterminated string", ErrMalformedKey)
	}
	return 0, fmt.Errorf("%w: bad escape in string at offset %d", ErrMalformedKey, end)
}

// walkEscaped walks the escaped body at b[i:] (every byte inverted when desc), appending its
// unescaped bytes to out when out is not nil. It returns the offset just past the terminator, or,
// with ok false, the offset of the first byte it could not read: a truncated or malformed escape, or
// len(b) when b ends inside the body.
func walkEscaped(b []byte, i int, desc bool, out *[]byte) (end int, ok bool) {
	var dir byte
	if desc {
		dir = 0xff
	}
	for i < len(b) {
		c := b[i] ^ dir
		if c != 0x00 && c != 0xff {
			if out != nil {
				*out = append(*out, c)
			}
			i++
			continue
		}
		if i+1 >= len(b) {
			return i, false
		}
		switch d := b[i+1] ^ dir; {
		case c == 0x00 && d == 0x01:
			return i + 2, true
		case c == 0x00 && d == 0xff, c == 0xff && d == 0x00:
			if out != nil {
				*out = append(*out, c)
			}
			i += 2
		default:
			return i, false
		}
	}
	return i, false
}

// FieldSpan returns where field i (0-based) of an encoded key lies. It needs no schema and does not
// allocate.
func FieldSpan(key []byte, i int) (Span, error) {
	if i < 0 {
		return Span{}, fmt.Errorf("%w: field index %d", ErrMalformedKey, i)
	}
	off := 0
	for j := 0; ; j++ {
		sp, err := next(key, off)
		if err != nil {
			return Span{}, fmt.Errorf("field %d: %w", j, err)
		}
		if j == i {
			return sp, nil
		}
		off = sp.End
	}
}

// FieldsLen returns the length in bytes of the first k fields of an encoded key, so that key[:n] is
// the encoding of those fields. It fails with ErrMalformedKey if the key has fewer than k fields. It
// needs no schema and does not allocate.
func FieldsLen(key []byte, k int) (int, error) {
	if k < 0 {
		return 0, fmt.Errorf("%w: field count %d", ErrMalformedKey, k)
	}
	off := 0
	for j := 0; j < k; j++ {
		sp, err := next(key, off)
		if err != nil {
			return 0, fmt.Errorf("field %d of %d: %w", j, k, err)
		}
		off = sp.End
	}
	return off, nil
}

// Int64At decodes field i of an encoded key, which must be an Int64 field (either direction). It
// does not allocate.
func Int64At(key []byte, i int) (int64, error) {
	sp, err := FieldSpan(key, i)
	if err != nil {
		return 0, err
	}
	if sp.Kind != KindInt64 {
		return 0, fmt.Errorf("%w: field %d is %s, not int64", ErrMalformedKey, i, sp.Kind)
	}
	return decodeInt64(key[sp.Body:sp.End], sp.Desc), nil
}

// Uint64At decodes field i of an encoded key, which must be a Uint64 field (either direction). It
// does not allocate.
func Uint64At(key []byte, i int) (uint64, error) {
	sp, err := FieldSpan(key, i)
	if err != nil {
		return 0, err
	}
	if sp.Kind != KindUint64 {
		return 0, fmt.Errorf("%w: field %d is %s, not uint64", ErrMalformedKey, i, sp.Kind)
	}
	return decodeUint64(key[sp.Body:sp.End], sp.Desc), nil
}

// AppendReversedFields appends key to dst with the value of each of its first k fields byte-reversed
// (the guides' "[reverse(userid)][orderid]"); framing, tags and the remaining fields are kept, so the
// result is again a well-formed key and the operation is its own inverse. A String or Bytes value is
// reversed before escaping, so the result is the encoding of the reversed value; a FixedString has
// its whole padded width reversed (padding then comes first). It fails with ErrMalformedKey if key has
// fewer than k fields, and allocates only if dst lacks room.
func AppendReversedFields(dst, key []byte, k int) ([]byte, error) {
	n, err := FieldsLen(key, k)
	if err != nil {
		return dst, err
	}
	base := len(dst)
	dst = append(dst, key...)
	out := dst[base : base+n]
	for off := 0; off < n; {
		sp, _ := next(key, off) // cannot fail: FieldsLen parsed these fields
		switch sp.Kind {
		case KindString, KindBytes:
			// Body tokens are single literal bytes or two-byte escapes; writing them in reverse
			// order encodes the reversed value. The 2-byte terminator stays last.
			bodyEnd := sp.End - 2
			var dir byte
			if sp.Desc {
				dir = 0xff
			}
			for i := sp.Body; i < bodyEnd; {
				t := 1
				if c := key[i] ^ dir; c == 0x00 || c == 0xff {
					t = 2
				}
				pos := sp.Body + (bodyEnd - i) - t
				copy(out[pos:pos+t], key[i:i+t])
				i += t
			}
		default:
			reverse(out[sp.Body:sp.End])
		}
		off = sp.End
	}
	return dst, nil
}

func reverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}

func invert(b []byte) {
	for i := range b {
		b[i] ^= 0xff
	}
}

// appendStringBody writes orderedcode's string format (00 -> 00 ff, ff -> ff 00, then 00 01), inverted
// when desc. It is written out here rather than calling orderedcode.Append, which boxes every item
// (two allocations for a three-field key); tests check the bytes equal orderedcode.Append's.
func appendStringBody[T string | []byte](dst []byte, s T, desc bool) []byte {
	n := len(dst)
	last := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case 0x00:
			dst = append(append(dst, s[last:i]...), 0x00, 0xff)
			last = i + 1
		case 0xff:
			dst = append(append(dst, s[last:i]...), 0xff, 0x00)
			last = i + 1
		}
	}
	dst = append(append(dst, s[last:]...), 0x00, 0x01)
	if desc {
		invert(dst[n:])
	}
	return dst
}

// parseStringBody decodes the string body of sp with orderedcode.
func parseStringBody(key []byte, sp Span) (string, error) {
	var s string
	var item any = &s
	if sp.Desc {
		item = orderedcode.Decr(&s)
	}
	rest, err := orderedcode.Parse(string(key[sp.Body:sp.End]), item)
	if err != nil || rest != "" {
		return "", fmt.Errorf("%w: string at offset %d: %v", ErrMalformedKey, sp.Start, err)
	}
	return s, nil
}

func appendUint64(dst []byte, v uint64, desc bool) []byte {
	if desc {
		v = ^v
	}
	return binary.BigEndian.AppendUint64(dst, v)
}

// Flipping the sign bit maps int64 order onto unsigned byte order (MinInt64 -> 0, -1 -> 7fff..., 0 ->
// 8000...).
func appendInt64(dst []byte, v int64, desc bool) []byte {
	return appendUint64(dst, uint64(v)^(1<<63), desc)
}

func decodeUint64(b []byte, desc bool) uint64 {
	v := binary.BigEndian.Uint64(b)
	if desc {
		v = ^v
	}
	return v
}

func decodeInt64(b []byte, desc bool) int64 {
	return int64(decodeUint64(b, desc) ^ (1 << 63))
}
