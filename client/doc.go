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
// HBase and Tablestore, under a lock or in one transaction on the embedded stores; every driver must
// have them (backends.Backend).
//
// Errors follow one rule. Bad input (an empty or oversized key, an unknown family) gets a clear error
// before anything is sent for it. A read fails whole (Get, GetMany, Scan): with no rows to report
// per key, a bad key or a failed batch fails the call, as backends.Backend.Read does. A write reports
// per row (Apply, like Bigtable's ApplyBulk): a bad row fails alone, since its neighbours may be
// written already, and Apply's err is kept for a failure of the whole call, when no row was written
// (a missing table, a context ended). A Scan range whose start is after its end fails with
// ErrInvalidArgument (Reverse reads a range descending; the range itself is always ascending); a
// start equal to the end is an empty range. The sentinels a caller branches on are all here
// (ErrNotFound, ErrInvalidArgument, ErrInvalidKey, ErrClosed, ErrTableNotFound, ErrRetryable, ...),
// the driver-level ones as the same values as package backends', so errors.Is works with either.
//
// # Index tables
//
// A table may declare indexes (TableConfig.Indexes): one record, several row-key orders, as the
// guides' order tables by order number, buyer and seller. Each index is a salted table of its own,
// "<table>__ix_<index>", with one entry per main row: its key is the index key built from the row
// (fields of the logical key, column values), followed by the row's key unless the index is unique;
// its cells are a status and the covered columns, and the row's key where the entry's key does not
// end with it (a unique index's; one created before entry format 2 has it too: its meta spec lacks
// "entries=2", which older brines refuse). The definitions are stored with
// the table, beside the salting spec, and read back on open: every Table handle learns them by itself
// (and, within the refresh interval, those added or dropped since), and then its writes, Put,
// Delete, Apply, Import, CheckAndMutate and Increment, keep every index in step. Its Rebucket moves the main table, RebucketIndex one
// index's table, both under live writers (the protocol reaches the main rows, and the index entries,
// through the tables' routers). Index.Scan and Index.Get read by index.
//
// There are no transactions across tables (HBase has none), so the index follows Phoenix 5.1's
// scheme (PHOENIX-5156): entries are written "pending" before the data, "verified" after, and a
// reader trusts only verified entries, checking pending ones against the main row. Every write
// carries a token (start time, random bytes); the main row keeps the token of its last write in a
// version column (_brine_v, first family; reads show it only when their Columns name it). A write
// that changes an indexed or covered column, or deletes a row, and every CheckAndMutate of such a
// write and every Increment (their condition or counters checked on the row read in step 1):
//
//  1. reads the row and its version; a row without one (never written, or deleted) that the write
//     gives entries first gets a version of its own, by compare-and-set on its absence;
//  2. marks pending ("u"+token) the entries it leaves (a key cell's only while it names this row;
//     one whose key names the row by a put, which leaves a lone status where another writer's
//     step 4 deleted the entry: no reader answers it, and it goes as any pending entry does) and
//     writes its new entries pending, with the covered values (a unique entry only if its key is
//     free, its own, or left by a row that no longer has it);
//  3. writes the data and the new version by compare-and-set on the version read in step 1;
//     if another write came in between, it goes back to step 1;
//  4. verifies ("v"+token) its new entries and deletes the ones it left, each by compare-and-set
//     on its own pending status.
//
// Why the order is safe. Step 2 comes before step 3, so from the moment a row's values change, the
// entries of its old and new values are pending: no reader trusts an entry that the data no longer
// backs. Step 3's compare-and-set serializes the writers of one row: each write's step 2 was based
// on the values it replaces. Its condition is a version no other write can bring back: "no version"
// could hold again after other writes created the row and deleted it, having taken over and deleted
// the entries of this write's step 2, hence the version of step 1. Step 4 changes only entries
// still holding this write's own status; a later write touches an entry (step 2) before changing
// the data, so an earlier write can neither verify nor delete an entry a later one needs. A
// verified entry therefore always matches its row, and a reader may answer a covered query from it
// alone.
//
// Reads. A query by index reads entries, then the main rows of those that are pending (or of all,
// when it needs more than covered columns), and answers a row only if its values, read after the
// entry, still give that index key. So it never returns a row whose current values do not match
// the key it was found under, and never misses a row whose write was acknowledged: that write's
// entry is verified, or pending and checked against the row. Readers repair what they meet, each
// change a compare-and-set on the exact status read: a pending entry whose write is in the row
// (the row's version is its token) is verified or, when the row moved away, deleted; a pending
// entry older than the index's grace (DefaultIndexGrace; the writer crashed) is verified with the
// row's values or deleted; a verified entry the row no longer matches is deleted.
//
// Concurrent writers to one row: the row ends as the last successful data write left it, and the
// index ends equal to the main table once pending entries are repaired; no interleaving leaves a
// wrong verified entry. A write losing its row 16 times in a row fails with ErrIndexContention
// (retryable, nothing written). Limits: a write that deletes single indexed or covered columns is
// refused (a row mutation cannot both delete them and bump the version; delete the row or put new
// values); covered answers carry values without timestamps; a write stamped older than the row's value of a column leaves that
// value, and its entry, in place, as reads see it (the last occurrence of a key in an import wins).
// Apply and Import batch every step: one GetMany, then compare-and-set batches for the versions of
// new rows, the unique claims (after one GetMany of their holders), the data writes and the settles,
// one Apply per non-unique index table for the pending entries (HBase: one Multi RPC per region and
// batch; only the marks of entries a row moves away from go one per row). Settles and the versions
// of new rows are sent deferred (backends.CondMutation.Deferred; HBase: not synced on their own): a
// settle a server crash loses leaves its entry pending, which readers repair, and a lost version
// fails step 3's condition, so the write starts again. A put that touches no
// index is sent as it is, with a new version in the same row mutation: every put and row delete
// changes the version, which is what makes step 3's check cover a CheckAndMutate's own condition
// (see Table.CheckAndMutate and index_atomic.go for the one exception, a concurrent delete of unindexed columns).
// Index.Verify reports missing, stale and extra entries; Index.Rebuild rewrites every row's entries
// through the protocol and repairs every entry, online, one goroutine per bucket.
package client
