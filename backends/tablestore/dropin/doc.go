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
// The methods PutRow, GetRow, UpdateRow, DeleteRow, BatchGetRow, BatchWriteRow and GetRange have the
// names, signatures and request/response types of *tablestore.TableStoreClient's. Requests carry
// logical primary keys and responses return logical primary keys; the caller's request is never
// modified. Scan is GetRange without pages, as an iterator.
//
// # Table layouts
//
// The drop-in works on the tables package tablestore (brine's driver) lays out, which is every table
// brine creates (client.CreateTable on a tablestore.Backend):
//
//   - one primary-key column, BINARY (brine's default "pk") or STRING, holding the whole physical key:
//     the salt prefix followed by the logical key. The caller's value is the logical key ([]byte for
//     BINARY, string for STRING; a STRING column needs a salter whose prefix is text, e.g. md5hex);
//   - two to four columns, declared with tablestore.MetaPrimaryKey (e.g.
//     "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER"): the first, BINARY of a fixed width, holds
//     the salt and the fixed-width start of the logical key; the others hold the rest unchanged. The
//     caller gives the first column without the salt (width less the salt, e.g. 6 bytes under a
//     1-byte salt) and the other columns as they are. The salter sees the logical key
//     first-column + tablestore.AppendKeyTail(other columns...), so a spec such as
//     "hash:16:prefix=6" salts by the first column alone and "hash:16" by the whole key.
//
// Only the first column (Tablestore's partition key) is rewritten. Each table's salter is the spec
// brine stored with it (the "brine.salt" entry of its row in the brine_meta table), read once per
// table with the table's key and cached; WithSalter gives one explicitly (checked against the stored
// spec: ErrSpecMismatch, nothing sent), and tables without a stored spec fail with ErrNoSpec unless a
// salter is given or WithUnsalted is set. Multi-column tables that brine did not create need their
// key declared in tablestore.Options.Schemas (WithOptions). AUTO_INCREMENT key columns are not
// supported (brine keys are given, not generated).
//
// # GetRange
//
// The range [StartPrimaryKey, EndPrimaryKey) (FORWARD; from StartPrimaryKey down to EndPrimaryKey,
// exclusive, BACKWARD) is a range of logical key tuples, INF_MIN and INF_MAX included in any column,
// with the SDK's meaning. It becomes a logical byte range, then one physical range per bucket (pruned
// by the salter when the range allows, e.g. one bucket for a range within one first-column value under
// "hash:N:prefix=W"); each bucket is read with the SDK's GetRange and its NextStartPrimaryKey pages,
// in parallel (WithConcurrency, WithPrefetch), and the rows are merged in logical order (descending
// for BACKWARD). A response holds at most Limit rows (0: WithPageRows, default 5000, the service's
// own page cap); NextStartPrimaryKey is the logical primary key of the next row, so passing it back as
// StartPrimaryKey continues exactly where the page ended, as with the SDK; it is nil at the end of the
// range. Columns, versions, time ranges, filters and StartColumn/EndColumn are sent to every bucket as
// given. ConsumedCapacityUnit sums every request made; RequestId is that of one of them.
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
//     negative limit, more than 100 rows in a BatchGetRow or 200 in a BatchWriteRow.
//
// Service errors are returned as the SDK returns them (*tablestore.OtsError, unwrapped), so code that
// type-asserts them keeps working; the SDK client's own retry policy applies to every request. The
// SDK takes no context: Scan takes one, the other methods run to completion.
package dropin
