// Package dropin is a salted Tablestore client: code written against the official Go SDK
// (github.com/aliyun/aliyun-tablestore-go-sdk/tablestore) switches to salted tables by changing the
// line that makes its client, and keeps building its requests with the SDK's own types.
//
//	sdk := tablestore.NewClient(endpoint, instance, id, secret)
//	c := dropin.New(sdk)                             // was: c := sdk
//	_, err := c.PutRow(&tablestore.PutRowRequest{...}) // primary key salted on the way out
//	resp, err := c.GetRange(&tablestore.GetRangeRequest{...})
//	// resp.Rows: every bucket read, merged in logical order; resp.NextStartPrimaryKey: logical cursor
//
// *Client has the whole method set of *tablestore.TableStoreClient, with the same names, signatures
// and request/response types, and implements the SDK's TableStoreApi interface, so code written
// against either switches by changing the line that makes its client:
//
//   - row operations (PutRow, GetRow, UpdateRow, DeleteRow, BatchGetRow, BatchWriteRow, GetRange)
//     take logical primary keys and return logical primary keys; the caller's request is never
//     modified. Scan is GetRange without pages, as an iterator. Run through the drop-in, the SDK's
//     own samples return field for field what they return through the SDK on an unsalted table
//     (RequestId, server-assigned cell timestamps and a fanned-out GetRange's ConsumedCapacityUnit
//     aside);
//   - StartLocalTransaction salts its partition key; Search returns logical primary keys;
//   - CreateTable creates the table as the SDK does and stores the WithSalter spec given for it
//     (DefaultSpec without one, so that the next write finds it);
//     DeleteTable deletes the stored spec with the table and forgets it; ListTable hides brine's
//     meta table ("brine_meta"), which CreateTable and DeleteTable refuse to touch;
//   - the rest (DescribeTable, UpdateTable, indexes, search indexes, streams, ComputeSplitPointsBySize,
//     Commit/AbortTransaction) is passed through: what they return about rows holds stored (salted)
//     keys, which LogicalPrimaryKey turns back into the caller's.
//
// # Table layouts
//
// A table is salted in its first primary-key column (Tablestore's partition key), which holds the
// salt followed by the caller's value; the other columns are stored as given:
//
//   - one column, BINARY or STRING, holding the whole key: the caller's value is the logical key
//     ([]byte for BINARY, string for STRING, whose salt must be text);
//   - two to four columns whose first, BINARY or STRING, is variable (the default): any prefix salter
//     whose prefix is text works, e.g. the Tablestore guide's md5 prefix, "md5hex:4:sep=0x00" (the
//     first 4 hex digits of md5 of the first column, which is what the logical key holds before its
//     first 0x00), "hash:N:digits=D" (a decimal bucket number) or "none". Binary prefixes (hash:N
//     without digits) are refused with ErrUnsupported: the key encoding that keeps a variable first
//     column in order escapes their 0x00 and 0xFF bytes, so the stored column would not be the salt
//     followed by the value;
//   - two to four columns whose first has a fixed width, declared with tablestore.MetaPrimaryKey
//     (e.g. "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER", or Adopt's key): the caller gives the
//     first column without the salt (width less the salt, e.g. 6 bytes under a 1-byte salt); any
//     prefix salter works, binary ones included.
//
// The salter sees the logical key first-column + tablestore.AppendKeyTail(other columns...), the first
// column in tablestore.AppendKeyHead's encoding when it is variable, so "hash:16:prefix=6" salts a
// 6-byte fixed first column alone, "md5hex:4:sep=0x00" a variable one alone, and "hash:16" or
// "md5hex:2" the whole key. Both encodings keep Tablestore's row order equal to the logical keys'
// byte order, which GetRange's merge relies on.
//
// Each table's salter is the spec stored with it (the "brine.salt" entry of its row in the brine_meta
// table), read once per table with the table's key and cached; Forget drops both (its driver's
// cached key included), for a table another client dropped and created again. WithSalter gives a
// salter explicitly (checked against the stored spec: ErrSpecMismatch, nothing sent), and tables
// without a stored spec fail with ErrNoSpec unless a salter is given or WithUnsalted is set.
// AUTO_INCREMENT key columns are not supported (brine keys are given, not generated).
//
// # Adopting a table the SDK created
//
// Adopt stores a spec (and optionally the key, to give the first column a fixed width) with an
// existing table, for every client, as CreateTable does for the tables it creates; WithSalter does the
// same for one client only, and WithUnsalted uses such tables unsalted, as the HBase drop-in's
// WithUnsalted does. Rows are not rewritten: adopt an empty table, or one whose keys already carry
// the salt, e.g. an application's table on the guide's layout (partition key md5(id)[:4] + id) is
// "md5hex:4:sep=0x00" on a variable first column, or "md5hex:4" on a one-column table whose key is
// the id alone.
//
// # GetRange
//
// The range [StartPrimaryKey, EndPrimaryKey) (FORWARD; from StartPrimaryKey down to EndPrimaryKey,
// exclusive, BACKWARD) is a range of logical key tuples, INF_MIN and INF_MAX included in any column,
// with the SDK's meaning. It becomes a logical byte range, then one physical range per bucket (pruned
// by the salter when the range allows, e.g. one bucket for a range within one first-column value under
// "hash:N:prefix=W"); each bucket is read with the SDK's GetRange and its NextStartPrimaryKey pages,
// in parallel (WithScanConcurrency, WithPrefetch), and the rows are merged in logical order (descending
// for BACKWARD). A response holds at most Limit rows (0: WithPageRows, default 5000, the service's
// own page cap); NextStartPrimaryKey is the logical primary key of the next row, so passing it back as
// StartPrimaryKey continues exactly where the page ended, as with the SDK; it is nil at the end of the
// range. Columns, versions, time ranges, filters and StartColumn/EndColumn are sent to every bucket as
// given. ConsumedCapacityUnit sums every request made; RequestId is that of one of them. A range
// the salter cannot prune costs one request per bucket and page at least: 65536 for md5hex:4, whose
// unpruned scans therefore suit small tables or offline jobs only; a range within one first-column
// value under a lead that covers that column ("md5hex:4:sep=0x00") reads one bucket.
//
// # Tables with indexes
//
// A table with indexes (its stored meta declares them, as the client reads it when it first uses the
// table; an index added after that is not seen, which is why AddIndex asks for NoPlainWriters) is
// written only
// through client.Table, which keeps its index tables in step: PutRow, UpdateRow, DeleteRow and
// BatchWriteRow fail with ErrIndexedTable before anything is sent, a batch that also writes other
// tables included. Reads (GetRow, BatchGetRow, GetRange, Scan, Search) drop the version column the
// index protocol keeps in each row (family + "__" + client.IndexVersionQualifier, e.g.
// "d___brine_v") unless ColumnsToGet names it; a row that held that column alone reads as a missing
// row (GetRow and BatchGetRow answer without a primary key, GetRange and Scan skip it).
//
// # What it refuses
//
// Anything it cannot rewrite faithfully fails before anything is sent, with an error naming the call
// and wrapping ErrUnsupported, backends.ErrInvalidKey or backends.ErrInvalidArgument:
//   - primary keys that do not name the table's key columns in order, values of the wrong type,
//     INF_MIN/INF_MAX or AUTO_INCREMENT in a row operation, a first column of the wrong width;
//   - keys the service would refuse once salted: empty, or a column over 1 KB (the salt counts);
//   - a filter or column condition on a primary-key column (the server would compare it with the
//     salted value), or a ColumnFilter implementation it cannot inspect;
//   - a row change without a condition (the SDK would panic), or a change of another type than the
//     SDK's PutRowChange, UpdateRowChange and DeleteRowChange, or naming another table than its batch;
//   - GetRange with start not below end in its direction (the service's OTSParameterInvalid), a
//     negative limit, more than 100 rows in a BatchGetRow or 200 in a BatchWriteRow;
//   - on a multi-column table, a salter that does more than prepend a prefix (reverse); on a
//     variable first column a binary prefix (above); in a STRING column a prefix that is not UTF-8
//     (hash:256's bytes over 0x7F);
//   - StartLocalTransaction on a partition-key value whose rows the salter spreads over several
//     buckets, and Search with routing values (primary keys it cannot salt).
//
// Service errors are returned as the SDK returns them (*tablestore.OtsError, unwrapped), so code that
// type-asserts them keeps working; the SDK client's own retry policy applies to every request. The
// SDK takes no context: Scan takes one, the other methods run to completion.
package dropin
