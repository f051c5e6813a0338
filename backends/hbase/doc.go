// Package hbase is brine's driver for Apache HBase 2.x over gohbase (pinned at a 2022 version: no
// SendBatch, no split/flush/compact RPCs).
//
// How the contract of package backends maps onto HBase:
//
//   - Table names are HBase's: "table" (default namespace) or "ns:table"; the namespace must exist.
//     CreateTable sends the CreateTable RPC itself (not through
//     gohbase's helper, which cannot carry table attributes) so that TableOptions.Meta is stored in the
//     table descriptor as attributes "brine.meta.<key>" (HBase drops empty attribute values, so an empty
//     value is kept as "brine.meta-empty.<key>"): it is created and dropped atomically with the table,
//     and TableMeta reads it back with GetTableDescriptors. No side table.
//   - Apply sends the puts of two rows or more as one Multi RPC per region (multiput.go), cells in a
//     cell block; rows the server answers with an exception, deletes and a lone put go one Mutate per
//     row. Read sends one Get per key. Single-row calls run Options.Concurrency at a time, and gohbase
//     coalesces those queued together into MultiRequests; Options.FlushInterval 0 (the default here)
//     sends a batch as soon as nothing more is queued, so a lone Get does not wait 20 ms.
//   - A Cell's Timestamp 0 lets the server stamp the write; otherwise it is sent as the cell version.
//     Cells of one mutation with different timestamps go in one Mutate RPC with per-cell timestamps
//     (built here; gohbase's Mutate has one timestamp per call), so the row stays atomic.
//   - A delete reads the newest version of what it removes (one Get), then sends a delete stamped with
//     it: an HBase delete without a timestamp covers only versions up to the server's clock, so cells
//     stamped ahead of it would survive. Nothing to delete, nothing sent. A whole family is a
//     DELETE_FAMILY. The marker hides later writes stamped at or before it, HBase's rule. A cell
//     with a timestamp is a DELETE_ONE_VERSION of that stamp, sent without a read; its marker
//     hides a later write of that stamp only.
//   - CheckAndMutate is HBase's own (a MutateRequest with a condition); Increment is HBase's Increment.
//   - Scan drives HBase's scanner protocol itself, region by region, instead of gohbase's Scanner:
//     gohbase cannot bound the rows of each RPC by what is still wanted, and its reverse scan steps to
//     the previous region at "start key minus one, padded with eight 0xFF", which skips keys that sort
//     between that and the region's start key. Here a reverse scan opens each region's scanner at the
//     region's own end key, so no key is skipped, and the range's Start is enforced server-side with an
//     InclusiveStopFilter. Each RPC asks for min(rows still wanted, batch) rows.
//   - BulkImport (bulkimport.go) writes physical puts as HFiles (internal/hfile), one per region and
//     family, and hands each region its files in one BulkLoadHFile call (bulkload.go): no WAL, no
//     memstore. Memory is bounded by spilling sorted runs (bulkrun.go); a region that split before
//     its load gets its files cut at the new boundaries (bulksplit.go); a manifest in the staging
//     directory lets a killed import resume without loading a file twice (bulkmanifest.go).
//     Measured against the dev server (BenchmarkBulkImport, 100,000 rows of 100 bytes, 16
//     regions, 2026-12-02, two runs on the 2 cores a full test suite shared): 74,000-178,000
//     rows/s, 2.0-2.8 times Apply of the same rows in batches of 1,000 (38,000-63,000).
//   - Errors wrap the sentinels of package backends: missing table -> ErrTableNotFound (and
//     gohbase.TableNotFound, so code written against gohbase matches it too), existing table ->
//     ErrTableExists, bad key (empty, or longer than MaxKeyLen) -> ErrInvalidKey before anything is
//     sent (a scan bound past MaxKeyLen is clamped instead: no key is longer), unknown family or
//     oversized cell -> ErrInvalidArgument, busy/moving regions and per-request timeouts
//     (Options.RequestTimeout) -> driverkit.Retryable. Server exceptions read as one line (JavaError);
//     their Java stack trace stays in JavaError.Trace.
//
// What gohbase (cfe2cb9, 2026-06-12) does not do, or does at a cost, and how this package copes:
//
//   - SendBatch takes one hrpc.Mutate per row: Apply's Multi calls are built here instead (multiput.go,
//     one per region, cells in one cell block; twice SendBatch's rows/s, BenchmarkApplyMulti), routed
//     by gohbase to the region of their first row; gets go as parallel single-row calls, which gohbase
//     batches into MultiRequests.
//   - No split, flush, compact, or region close/open RPCs: tests and tools use package hbasetest,
//     which runs scripts/hbase/admin.sh (HBase's Java Admin API).
//   - No GetTableDescriptors, and CreateTable's attributes are strings: sent as custom calls (rpc.go).
//   - Its admin requests always name the default namespace: CreateTable, DeleteTable and TableMeta
//     send their own (rpc.go, backend.go), with the table's namespace.
//   - Its admin client cannot be closed (Close closes a nil channel): Backend.Close leaves that
//     connection open.
//   - It logs through log/slog, to the logger Config.GohbaseLogger names (clientOptions).
package hbase
