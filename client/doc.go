// Package client is the API programs use to read and write salted tables. It sits above the driver
// contract in package backends as database/sql sits above database/sql/driver: a Client wraps any
// backends.Backend (the embedded store, HBase, Tablestore), and a Table hides the salt.
//
// Callers only see logical keys. A write computes the bucket of its key with the table's
// salting.Salter and stores prefix(bucket)+key; a point read or write touches exactly one bucket, so it
// costs what the raw driver costs. A range scan fans out to every bucket that may hold rows of the
// range (only one when the range fixes the salted prefix) and merges the per-bucket streams back into
// logical key order.
//
// The salting spec is stored with the table when it is created and checked whenever the table is
// opened, so two programs can never write the same table with different salts.
//
// # The row contract
//
// Every store behaves alike; package backends/backendtest states the rules and every driver runs it.
//
//   - A row is a key and cells (family, qualifier, value, timestamp in milliseconds). A table keeps
//     TableConfig.MaxVersions versions of each column (one by default); a read returns the newest,
//     or up to MaxVersions of them within a TimeRange, cells sorted by family, qualifier, then newest
//     first. A write with timestamp 0 is stamped with the store's clock; a write older than every
//     kept version is dropped, and an equal timestamp replaces.
//   - Put writes only the cells given and keeps the row's other columns; a put with no cells is
//     refused. Delete removes every version of the columns named, of a whole family (a Column with an
//     empty Qualifier), or of the whole row when none is named: versions stamped later than the
//     server's clock too.
//   - A table created with families takes no other family: writes, reads and scans naming one fail
//     with backends.ErrInvalidArgument, and error text never carries a server's stack trace.
//   - Keys are 1 byte up to the store's limit, salt included: 32,509 bytes on HBase (its 32,767 less
//     what gohbase needs to locate the key's region), 32,767 on the embedded and memory stores, 1,024
//     on Tablestore. A range bound past the limit is clamped, so a key that can be written can be
//     read by range.
//   - One difference stays, HBase's: a delete leaves a marker stamped with the newest version it
//     removed, and a write stamped at or before that marker stays hidden (until a major compaction).
//     The other stores show such a write. A write stamped by the store's clock after a delete is
//     visible everywhere, unless the deleted cells were stamped ahead of that clock.
//
// Atomic row operations (Table.CheckAndMutate, Table.Increment) work on every store: natively on
// HBase and Tablestore, under a lock or in one transaction on the embedded stores. A driver outside
// this module without them gets ErrUnsupported, the one documented use of that error.
//
// Errors follow one rule. Bad input (an empty or oversized key, an unknown family) gets a clear error
// before anything is sent for it. A read fails whole (Get, GetMany, Scan): with no rows to report
// per key, a bad key or a failed batch fails the call, as backends.Backend.Read does. A write reports
// per row (Apply, like Bigtable's ApplyBulk): a bad row fails alone, since its neighbours may be
// written already, and Apply's err is kept for a failure of the whole call, when no row was written
// (a missing table, a context ended).
package client
