package keys

// Single ascending fields in this package's wire format, for codecs of other key layouts that must
// produce the very bytes a Schema does (Tablestore's multi-column primary keys): one encoder, so the
// two cannot disagree.

// Tag is the tag byte that starts a field of kind k (descending: desc).
func (k Kind) Tag(desc bool) byte { return k.tag(desc) }

// AppendEscaped appends the escaped, terminated body of a String or Bytes field, without its tag:
// 0x00 written 0x00 0xFF, 0xFF written 0xFF 0x00, then 0x00 0x01. Bodies sort like their values and
// none is a prefix of another.
func AppendEscaped[T string | []byte](dst []byte, text T) []byte {
	return appendStringBody(dst, text, false)
}

// AppendText appends an ascending field of kind KindString or KindBytes (tag and escaped body), as
// Schema.Append writes it.
func AppendText[T string | []byte](dst []byte, k Kind, text T) []byte {
	return appendStringBody(append(dst, k.tag(false)), text, false)
}

// AppendInt64 appends an ascending Int64 field (tag and 8 bytes), as Schema.Append writes it.
func AppendInt64(dst []byte, v int64) []byte {
	return appendInt64(append(dst, tagInt64), v, false)
}

// DecodeEscaped reads the body AppendEscaped writes, from the start of b: the value, how many bytes
// of b the body took, and whether it was complete. When b ends inside the body or an escape is
// malformed, complete is false and value is what was read before that point (n bytes of b): the
// longest value a partial key holds, which is what a range bound built from one needs.
func DecodeEscaped(b []byte) (value []byte, n int, complete bool) {
	value = []byte{}
	n, complete = walkEscaped(b, 0, false, &value)
	return value, n, complete
}

// DecodeInt64 reads the 8-byte body of an ascending Int64 field (after its tag) from the start of b.
// When b is shorter, the missing bytes count as zeros (the least value with that prefix), n is
// len(b) and complete is false.
func DecodeInt64(b []byte) (v int64, n int, complete bool) {
	var pad [8]byte
	n = copy(pad[:], b)
	return decodeInt64(pad[:], false), n, n == 8
}
