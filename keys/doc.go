// Package keys is an order-preserving codec for composite row keys: a tuple of typed fields becomes
// one byte string such that bytes.Compare on two encodings agrees with comparing the tuples field by
// field, and the encoding of the leading fields of a tuple is a prefix of the encoding of the tuple.
// Those two properties are what the rowkey guides ask of a key built by concatenation: uniqueness,
// scans by leading fields ("host1" must not match "host12"), fixed-width numbers, and newest-first
// ordering by storing "Long.MAX_VALUE - ts".
//
// # Wire format
//
// Every field is one tag byte followed by its body. The tag names the field's kind; it is a lower-case
// letter for an ascending field and the upper-case letter for a descending one:
//
//	s / S   String      body: escaped bytes + terminator 00 01 (orderedcode's string format)
//	b / B   Bytes       body: as String; decodes to []byte
//	i / I   Int64       body: 8 bytes big-endian, sign bit flipped
//	u / U   Uint64      body: 8 bytes big-endian
//	f / F   FixedString body: one width byte W, then W bytes: the value right-padded with a pad byte
//	r       Raw         body: the rest of the key (last field only, never descending)
//
// A descending field has its body bytes inverted (x ^ 0xff); the tag and the width byte are not
// inverted, as they are the same in every key of a schema and so never decide an ordering.
//
// Inverting is order-correct for every body kind because every body except Raw is prefix-free: no
// body is a proper prefix of another body of the same kind (fixed-width bodies trivially; string
// bodies because the terminator 00 01 cannot occur inside an escaped string, where 00 is always
// followed by ff). So two different bodies first differ at a byte both have, and inverting that byte
// reverses the comparison; what follows it never matters. Raw is not prefix-free ("a" < "ab" would
// stay first after inversion), which is why a descending Raw is rejected.
//
// # Why orderedcode, and why not only orderedcode
//
// String and byte bodies are github.com/google/orderedcode's string format (00 -> 00 ff, ff -> ff 00,
// end 00 01; inverted for descending, as orderedcode.Decr does), the standard answer to prefix-safe
// strings, and orderedcode itself decodes them. The encoder is the dozen lines of that format written
// out here, because orderedcode.Append takes ...interface{} and boxes every item (two allocations per
// key measured; Append here allocates nothing when dst has room); tests check its bytes equal
// orderedcode.Append's. orderedcode is not used for the rest:
//
//   - orderedcode integers are variable length. The guides insist on fixed-width numbers (fixed key
//     width, a timestamp at a known offset for "timestamp % numBuckets"), so Int64 and Uint64 are
//     written here as 8 bytes big-endian.
//   - orderedcode's format is not self-describing (its own documentation: decoding with the wrong
//     types may return corrupt data and no error), and it has no way to find where a field ends
//     without decoding it into a Go value. The tag byte fixes both: Decode detects a key written with
//     another schema, and FieldsLen, FieldSpan and AppendReversedFields walk a key without a schema
//     and without allocating. The salting package relies on that: "hash:16:fields=1" is persisted
//     with a table and must find the first field of any key without knowing the table's schema.
//   - fixed-width padded strings and Raw trailing bytes are not orderedcode kinds.
//
// The price is one byte per field (two for FixedString). Those bytes never decide an ordering between
// keys of one schema.
//
// # The guides' layouts
//
//	[hostname][log-event][Long.MAX_VALUE - timestamp]   ParseSchema("hostname,event,ts:int64:desc")
//	[userid][orderid]                                   ParseSchema("userid,orderid:uint64")
//	[rpad(colume1,'x',20)][colume2]                     ParseSchema("c1:fixed=20:pad=0x20,c2")
//	[CardID][OrderNumber]                               ParseSchema("card:uint64,order:uint64"), or as text:
//	                                                    ParseJoined("sep=0x2c,card:digits=10,order:digits=12")
//	[DeviceID,SellerID,CardID] (Tablestore, joined)     ParseJoined("sep=0x2c,device:digits=6,seller,card")
//
// FixedString pads with a byte that must not exceed any byte of a value (default 00): padding with
// 'x' as in the guide would sort "host1" after "host1a". Joined reproduces the Tablestore guide's
// concatenated partition keys byte for byte ("000054,a100,6777"): zero-padded decimal numbers and
// text joined by a separator below every byte a value may hold; it has no tags.
package keys
