// Package tablestore is brine's driver for Alibaba Cloud Tablestore (OTS), on the official Go SDK
// (github.com/aliyun/aliyun-tablestore-go-sdk/tablestore). It implements backends.Backend.
//
// # Tables and keys
//
// A brine table is a Tablestore table whose first primary-key column, "pk" BINARY, holds the physical
// (salted) row key. The first primary-key column is Tablestore's partition key, so the salt prefix
// spreads monotonic keys over partitions: the design guide's cure for sequential order numbers (a
// hash prefix on the partition key). A STRING column works as well, with keys that are UTF-8 and
// salts that are text (md5hex, or hash/mod with digits=D).
//
// Tables may have up to four typed key columns, declared to CreateTable through
// TableOptions.Meta[MetaPrimaryKey] (see FormatPrimaryKey), e.g. "pk:BINARY:9,OrderNumber:INTEGER" for
// the guide's [CardID][OrderNumber], "DeviceID:BINARY:7,SellerID:STRING,CardID:INTEGER" for
// [DeviceID,SellerID,CardID], or "uid:STRING,OrderNumber:INTEGER". brine still sees one byte string per
// row: the first column, then the other columns in package keys' encoding (ascending string, bytes and
// int64 fields; AppendKeyTail, DecodeKey), so a keys.Schema such as "device:fixed=6,seller,card:int64"
// builds the logical keys. The first column, BINARY or STRING, is either of a fixed width (the first
// Width bytes of the key, salt included: the guide's zero padding) or variable (Width 0, the default
// for a table whose key is not declared): then the key holds it escaped and terminated like the other
// columns, without their type tag (AppendKeyHead), so a salt prefix without 0x00 and 0xFF bytes
// leaves the stored column the salt followed by the value. Either way Tablestore's row order equals
// the byte order of physical keys, which is what brine's range scans, cursors and merges need, and
// any byte range maps onto a range of key tuples (exactly for keys and key prefixes; rows a looser
// bound lets through are dropped); the escaped, terminated strings are the guide's "separator below
// every character". Tables brine did not create are described by the service (column names and
// types); Options.Schemas, or a MetaPrimaryKey stored with AdoptTable, gives a multi-column one's first
// column a fixed width. The Backend, rather than only the SDK drop-in, supports this so that the
// client's salting, scans and bulk import work unchanged on such tables.
//
// # Cells
//
// Tablestore has no column families: a cell (Family, Qualifier) is the attribute column Qualifier when
// Family is "", else Family + "__" + Qualifier (ColumnName). Names are 1-255 bytes of [A-Za-z0-9_]
// starting with a letter or '_'; so that names split back unambiguously, family and qualifier may not
// contain "__" and a family may not end in '_'. Cells that do not map fail with
// backends.ErrInvalidArgument before anything is sent. Values are written as BINARY. Cell timestamps
// are Tablestore cell versions (milliseconds); reads ask for ReadOptions.MaxVersions versions (one,
// the newest, by default) within ReadOptions.TimeRange. Tables are created with
// TableOptions.MaxVersions versions (default Options.MaxVersions, one), no TTL and no reserved
// throughput.
//
// A table created with TableOptions.Families takes only those families, as HBase: writes, deletes,
// reads and scans naming another family fail with backends.ErrInvalidArgument before anything is
// sent (the families are kept in the metadata table); a table created without Families, or by
// another program, takes any family.
//
// A put is an UpdateRow that puts the given cells, not a PutRow: PutRow replaces the whole row, while
// the contract (as HBase) leaves the row's other columns alone. Deleting cells deletes all versions of
// those columns (a cell with a timestamp, that one version: DeleteOneVersion); deleting a row is a
// DeleteRow. All conditions are IGNORE. Deleting a whole family
// (a cell with an empty Qualifier) reads the row's columns of that family, then deletes them: the
// service selects columns by exact name only, so this is two requests, and a column written into the
// family between them survives, as if written after the delete.
//
// # Metadata
//
// TableOptions.Meta lives in a metadata table (Options.MetaTable, default "brine_meta", key "table"
// STRING), created when the first table is; it is written after the table is created and deleted after
// it is dropped. Tablestore splits partitions by itself, and the SDK's CreateTableRequest cannot carry
// split points (the protocol's "partitions" field is not exposed), so TableOptions.SplitKeys are
// recorded there (SplitKeys) but not applied.
//
// # Limits
//
// Checked before sending, with errors wrapping backends.ErrInvalidKey (keys) or
// backends.ErrInvalidArgument: empty keys; key column values over 1 KB; attribute values over 2 MB;
// rows over 4 MB; more than 1024 columns in one row write; invalid table or column names; more than 128
// columns to get (key columns included); 1 to 4 key columns. BatchGetRow requests carry at most 100
// rows, BatchWriteRow requests at most 200 rows and 4 MB, and no row twice.
//
// # Retries
//
// Two layers retry, each a different kind of failure, so attempts do not multiply:
//
//   - The SDK retries whole requests that the service refused (server busy, partition unavailable,
//     throttling, ...; timeouts only for reads) and network resets, up to Config.SDKRetryTimes within
//     Config.SDKRetryWindow (its defaults: 10 tries, 5 s). brine does not send such a request again:
//     the error is returned, wrapped with driverkit.Retryable when its code is transient, and the caller
//     (client bulk import, say) decides. Note that the SDK also resends a BatchWriteRow whose
//     connection was reset, even if the service had applied it: harmless for puts whose cells carry
//     timestamps (the same version is written again), while a server-stamped put writes a second
//     version and a delete may remove a write made in between. Set Config.SDKRetryTimes to -1 to
//     leave all request retries to the caller.
//   - The SDK never sees rows that fail inside a successful BatchGetRow or BatchWriteRow. brine resends
//     only those rows when their code is transient, with exponential backoff and jitter, at most
//     Options.RowAttempts tries, and stops when the context ends. OTSTimeout, OTSInternalServerError
//     and OTSServerUnavailable leave a write's outcome unknown, so they are retried only for puts whose
//     cells all carry timestamps (idempotent); deletes and server-stamped puts get the error.
//
// With New, the caller's client keeps its own retry settings. The SDK takes no context: a context is
// checked before every request and between pages and retries, and one request can outlive its
// cancellation by at most Config.RequestTimeout plus the SDK's retry window.
package tablestore
